import ArgumentParser
import Foundation
import Tether
import TetherCLISupport

struct Devices: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List your devices: those bound to you in the cloud and those answering on the LAN, merged."
    )

    @OptionGroup var options: CloudClientOptions

    @Option(name: .long, help: "Seconds to listen for LAN answers.")
    var wait: Double = 2

    @Flag(name: .long, help: "Print one JSON array.")
    var json = false

    func validate() throws {
        if let problem = problemWithSeconds(wait, option: "--wait", maximum: 3600) { throw ValidationError(problem) }
    }

    func run() async throws {
        let wait = self.wait
        let devices = try await options.withClient { client -> [JSONValue] in
            try await Task.sleep(for: .milliseconds(Int(wait * 1000)))
            return client.devices.map(Self.describe)
        }
        if json {
            printJSON(.array(devices))
            return
        }
        if devices.isEmpty { printLine("no devices: bind one with `tether bind`, or check --discover") }
        for device in devices {
            var line = "\(device["did"]?.stringValue ?? "-")  \(device["reachability"]?.stringValue ?? "")"
            line += "  mac=\(device["mac"]?.stringValue ?? "-")  product=\(device["productKey"]?.stringValue ?? "")"
            if device["bound"] == .bool(true) { line += "  bound" }
            if let alias = device["alias"]?.stringValue, !alias.isEmpty { line += "  \"\(alias)\"" }
            printLine(line)
        }
    }

    static func describe(_ device: Device) -> JSONValue {
        var object: JSONObject = [
            "did": .string(device.did), "productKey": .string(device.productKey), "mac": device.mac.map(JSONValue.string) ?? .null,
            "reachability": .string(device.reachability.rawValue), "netStatus": .string(device.netStatus.rawValue), "bound": .bool(device.isBound),
        ]
        if let endpoint = device.lanEndpoint { object["lan"] = .string(endpoint.description) }
        if let alias = device.alias { object["alias"] = .string(alias) }
        if let remark = device.remark { object["remark"] = .string(remark) }
        if let role = device.role { object["role"] = .string(role) }
        if let home = device.homeID { object["home"] = .int(home) }
        if let room = device.roomID { object["room"] = .int(room) }
        return .object(object)
    }
}

struct Bind: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Bind a device to you: by did and passcode, by the text of its QR code, or by MAC, product key and product secret."
    )

    @OptionGroup var options: CloudClientOptions

    @Option(name: .long, help: "The device's did (with --passcode).")
    var did: String?

    @Option(name: .long, help: "The device's passcode (with --did).")
    var passcode: String?

    @Option(name: .long, help: "The text of the device's binding QR code (tether://bind?product_key=…&mac=…&product_secret=…).")
    var qr: String?

    @Option(name: .long, help: "The device's MAC (with --product-key and --product-secret).")
    var mac: String?

    @Option(name: .customLong("product-key"), help: "The device's product key (with --mac).")
    var productKey: String?

    @Option(
        name: .customLong("product-secret"), help: "The product secret (with --mac); TETHER_PRODUCT_SECRET in the environment keeps it out of the process list."
    )
    var productSecretOption: String?

    var productSecret: String? {
        productSecretOption ?? ProcessInfo.processInfo.environment["TETHER_PRODUCT_SECRET"].flatMap { $0.isEmpty ? nil : $0 }
    }

    @Option(name: .long, help: "Your name for the device.")
    var alias: String?

    @Option(name: .long, help: "Your remark on the device.")
    var remark: String?

    func validate() throws {
        let ways = [did != nil || passcode != nil, qr != nil, mac != nil || productKey != nil || productSecret != nil].filter { $0 }.count
        guard ways == 1 else { throw ValidationError("bind with one of: --did D --passcode P, --qr TEXT, --mac M --product-key K --product-secret S") }
        if (did == nil) != (passcode == nil) { throw ValidationError("--did and --passcode go together") }
        if mac != nil || productKey != nil || productSecret != nil, mac == nil || productKey == nil || productSecret == nil {
            throw ValidationError("--mac, --product-key and --product-secret go together")
        }
    }

    func run() async throws {
        let device = try await options.withClient(lanDiscovery: false) { client -> Device in
            if let did, let passcode { return try await client.bind(did: did, passcode: passcode, remark: remark, alias: alias) }
            if let qr { return try await client.bind(try BindingQRCode(text: qr), remark: remark, alias: alias) }
            return try await client.bind(productKey: productKey!, mac: mac!, productSecret: productSecret!, remark: remark, alias: alias)
        }
        printLine("bound \(device.did)")
    }
}

struct Unbind: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Unbind a device from you.")

    @OptionGroup var options: CloudClientOptions

    @Argument(help: "The device's did.")
    var did: String

    func run() async throws {
        try await options.withClient(lanDiscovery: false) { client in
            guard let device = try await client.refreshBindings().first(where: { $0.did == did }) else {
                throw TetherError(.invalidArgument, "\(did) is not bound to you")
            }
            try await device.unbind()
        }
        printLine("unbound \(did)")
    }
}

/// `DID` and the subscribed device it names, on whichever path reaches it.
struct SubscribedDeviceOptions: ParsableArguments {
    @OptionGroup var options: CloudClientOptions

    @Argument(help: "The device's did.")
    var did: String

    @Option(name: .long, help: "The device's passcode for the LAN, when the cloud does not know it (TETHER_PASSCODE works too).")
    var passcode: String?

    @Flag(name: .long, help: "Print JSON (one object, or one a line for streams).")
    var json = false

    func withDevice<T: Sendable>(_ body: @escaping @Sendable (Device) async throws -> T) async throws -> T {
        let passcode = self.passcode ?? ProcessInfo.processInfo.environment["TETHER_PASSCODE"].flatMap { $0.isEmpty ? nil : $0 }
        return try await options.withClient { client in
            let device = try await options.device(did, in: client)
            try await device.subscribe(passcode: passcode)
            guard device.model != nil else {
                throw TetherError(.unknownProduct, "the cloud has no model for product \(device.productKey)")
            }
            return try await body(device)
        }
    }
}

struct Status: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Print a device's status, read over the LAN or through the cloud.")

    @OptionGroup var device: SubscribedDeviceOptions

    func run() async throws {
        let (status, model, path) = try await device.withDevice { device in
            (try await device.getStatus(), device.model!, device.controlPath)
        }
        if device.json {
            printJSON(status.jsonValue)
        } else {
            printError("(read over the \(path == .lan ? "LAN" : "cloud"))")
            printStatus(status, model: model)
        }
    }
}

struct Write: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write data points, over the LAN or through the cloud, and print the status the device reports."
    )

    @OptionGroup var device: SubscribedDeviceOptions

    @Option(name: .long, help: "Sequence number the acknowledgement must carry (chosen for you when omitted).")
    var sn: UInt32?

    @Argument(help: "Data points to write, NAME=VALUE (enums take their label or index).")
    var assignments: [String] = []

    func validate() throws {
        if assignments.isEmpty { throw ValidationError("name at least one NAME=VALUE") }
        if sn == 0 { throw ValidationError("--sn 0 asks for no acknowledgement; this command waits for one, so pick another number") }
    }

    func run() async throws {
        let assignments = self.assignments
        let sn = self.sn
        let (result, known, model, path) = try await device.withDevice { device in
            let values = try device.model!.parseAssignments(assignments)
            let path = device.controlPath
            let result = try await device.write(values, sn: sn)
            return (result, device.status, device.model!, path)
        }
        let via = path == .lan ? "LAN" : "cloud"
        if device.json {
            var answer = reportJSON(DeviceStatusReport(status: result.status ?? known, sn: result.sn))
            if case .object(var object) = answer {
                object["path"] = .string(via.lowercased())
                object["reported"] = .bool(result.status != nil)
                answer = .object(object)
            }
            printJSON(answer)
        } else if let status = result.status {
            printLine("acknowledged sn \(result.sn) (\(via)); the device reports:")
            printStatus(status, model: model)
        } else {
            printLine("acknowledged sn \(result.sn) (\(via)); no report came within the timeout. Last known status:")
            printStatus(known, model: model)
        }
    }
}

struct Watch: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print a device's reports as they come, and the path they take, until interrupted (Ctrl-C)."
    )

    @OptionGroup var device: SubscribedDeviceOptions

    @Option(name: .long, help: "Stop after this many reports.")
    var count: Int?

    func run() async throws {
        let json = device.json
        let limit = count
        let options = device
        try await runUntilTerminated {
            try await options.withDevice { device in
                var printed = 0
                var path = device.controlPath
                let events = device.events()
                LANWatch.print(DeviceStatusReport(status: device.status, sn: 0), json: json)
                Self.announce(path, json: json)
                for await event in events {
                    if device.controlPath != path {
                        path = device.controlPath
                        Self.announce(path, json: json)
                    }
                    guard LANWatch.print(event, json: json) else { continue }
                    printed += 1
                    if let limit, printed >= limit { return }
                }
            }
        }
    }

    static func announce(_ path: ControlPath?, json: Bool) {
        let name = path?.rawValue ?? "none"
        if json { printJSON(["path": .string(name)]) } else { printError("path: \(name)") }
    }
}
