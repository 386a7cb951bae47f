import ArgumentParser
import Foundation
import Tether
import TetherCLISupport

struct LANDiscover: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "discover", abstract: "List the devices that answer discovery.")

    @Option(name: .long, help: "Where to send discovery requests; repeat for several addresses (default 255.255.255.255).")
    var broadcast: [String] = []

    @Option(name: .long, help: "The devices' UDP discovery port.")
    var port = 12414

    @Option(name: .long, help: "Seconds to listen for answers.")
    var timeout: Double = 3

    @Flag(name: .long, help: "Print one JSON array.")
    var json = false

    func validate() throws {
        if let problem = problemWithSeconds(timeout, option: "--timeout", maximum: 3600, allowZero: false) { throw ValidationError(problem) }
    }

    func run() async throws {
        let targets = (broadcast.isEmpty ? ["255.255.255.255"] : broadcast).map { LANEndpoint(host: $0, port: port) }
        let found = try await GizwitsLANDiscovery.discover(targets: targets, timeout: .milliseconds(Int(timeout * 1000)))
        if json {
            printJSON(
                .array(
                    found.map { device in
                        .object([
                            "did": .string(device.info.did), "mac": .string(device.info.macString), "productKey": .string(device.info.productKey),
                            "firmwareVersion": .string(device.info.firmwareVersion), "host": .string(device.host),
                        ])
                    }))
            return
        }
        if found.isEmpty { printLine("no device answered within \(timeout) s") }
        for device in found {
            printLine(
                "\(device.host)  mac=\(device.info.macString)  did=\(device.info.did)  product=\(device.info.productKey)  firmware=\(device.info.firmwareVersion)"
            )
        }
    }
}

struct LANStatus: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "status", abstract: "Log in to a device and print its status.")

    @OptionGroup var device: LANDeviceOptions

    @OptionGroup var output: ProductOutputOptions

    func run() async throws {
        let model = try output.model()
        let status = try await device.withSubscribedDevice(model: model) { device in device.status }
        if output.json { printJSON(status.jsonValue) } else { printStatus(status, model: model) }
    }
}

struct LANWrite: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "write",
        abstract: "Write data points, wait for the device's acknowledgement and print the status it reports."
    )

    @OptionGroup var device: LANDeviceOptions

    @OptionGroup var output: ProductOutputOptions

    @Option(name: .long, help: "Sequence number the acknowledgement must carry (chosen for you when omitted).")
    var sn: UInt32?

    @Argument(help: "Data points to write, NAME=VALUE (enums take their label or index).")
    var assignments: [String]

    func validate() throws {
        if assignments.isEmpty { throw ValidationError("name at least one NAME=VALUE") }
        if sn == 0 { throw ValidationError("--sn 0 asks for no acknowledgement; this command waits for one, so pick another number") }
    }

    func run() async throws {
        let model = try output.model()
        let values = try model.parseAssignments(assignments)
        let sn = self.sn
        let (result, status) = try await device.withSubscribedDevice(model: model) { device in
            let result = try await device.write(values, sn: sn)
            return (result, device.status)
        }
        if output.json {
            printJSON(reportJSON(DeviceStatusReport(status: result.status ?? status, sn: result.sn)))
        } else {
            printLine("acknowledged sn \(result.sn); the device reports:")
            printStatus(result.status ?? status, model: model)
        }
    }
}

struct LANWatch: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract: "Print the device's status reports as they come, until interrupted (Ctrl-C)."
    )

    @OptionGroup var device: LANDeviceOptions

    @OptionGroup var output: ProductOutputOptions

    @Option(name: .long, help: "Stop after this many reports.")
    var count: Int?

    func run() async throws {
        let model = try output.model()
        let options = device
        let json = output.json
        let limit = count
        try await runUntilTerminated {
            try await options.withSubscribedDevice(model: model) { device in
                var printed = 0
                Self.print(DeviceStatusReport(status: device.status, sn: 0), json: json)
                for await event in device.events() where Self.print(event, json: json) {
                    printed += 1
                    if let limit, printed >= limit { return }
                }
            }
        }
    }

    /// Prints an event for people or as a JSON line; true when it was a status report.
    static func print(_ event: DeviceEvent, json: Bool) -> Bool {
        switch event {
        case .status(let report):
            print(report, json: json)
            return true
        case .netStatus(let status):
            if json { printJSON(["netStatus": .string(status.rawValue)]) } else { printError("link: \(status)") }
        case .binary(let bytes):
            if json { printJSON(["binary": .string(bytes.tetherHex)]) } else { printLine("binary: \(bytes.tetherHex)") }
        case .modelEvent(let event):
            if json {
                printJSON(["event": .string(event.identifier), "type": .string(event.type), "values": event.values])
            } else {
                printLine("event \(event.identifier) (\(event.type)): \(event.values.serialized())")
            }
        case .topicMessage(let message):
            let text = String(validating: message.payload, as: UTF8.self)
            if json {
                var object: JSONObject = ["topic": .string(message.topic), "payload_base64": .string(message.payload.tetherBase64)]
                if let text { object["text"] = .string(text) }
                printJSON(.object(object))
            } else {
                printLine("\(message.topic): \(text ?? message.payload.tetherHex)")
            }
        case .firmwareUpgrade(let upgrade):
            if json { printJSON(FirmwareCommand.json(upgrade)) } else { printLine(FirmwareCommand.describe(upgrade)) }
        case .error(let error):
            printError("\(error)")
        }
        return false
    }

    static func print(_ report: DeviceStatusReport, json: Bool) {
        if json {
            printJSON(reportJSON(report))
            return
        }
        let time = Date().formatted(date: .omitted, time: .standard)
        var line = "\(time)  \(describe(report.status.data))"
        let alerts = report.status.alerts.filter { $0.value == .bool(true) }.keys.sorted()
        let faults = report.status.faults.filter { $0.value == .bool(true) }.keys.sorted()
        if !alerts.isEmpty { line += "  ALERTS: \(alerts.joined(separator: ", "))" }
        if !faults.isEmpty { line += "  FAULTS: \(faults.joined(separator: ", "))" }
        if report.sn != 0 { line += "  (sn \(report.sn))" }
        printLine(line)
    }
}

struct LANInfo: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "info", abstract: "Print a device's hardware and firmware versions (no login needed).")

    @Option(name: .long, help: "The device's address.")
    var host: String

    @Option(name: .long, help: "The device's TCP control port.")
    var port = 12416

    @Flag(name: .long, help: "Print one JSON object.")
    var json = false

    func run() async throws {
        let info = try await withTetherClient(configuration: .init(lan: .init(discoveryEnabled: false))) { client in
            try await client.device(host: host, port: port).hardwareInfo()
        }
        if json {
            printJSON(info.jsonValue)
        } else if case .object(let object) = info.jsonValue {
            for key in object.keys { printLine("\(key): \(object[key]!.stringValue ?? "")") }
        }
    }
}
