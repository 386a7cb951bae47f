import ArgumentParser
import Foundation
import Tether
import TetherCLISupport

/// `tether tuya status|set`: a Tuya device on the LAN, by its address, id and local key.
struct TuyaCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tuya", abstract: "A Tuya device on the LAN (local protocol 3.1 to 3.5), without the vendor's cloud.",
        subcommands: [Scan.self, Status.self, Set.self, Watch.self])

    struct DeviceOptions: ParsableArguments {
        @Option(help: "The device's address.") var host: String
        @Option(help: "The device's TCP port.") var port = 6668
        @Option(help: "The device's id (gwId / devId).") var id: String
        @Option(
            name: .customLong("local-key"),
            help: "The device's 16-character local key (or TETHER_TUYA_LOCAL_KEY). A secret: prefer the environment on shared machines.")
        var localKey: String?
        @Option(help: "The protocol version: 3.1, 3.2, 3.3, 3.4 or 3.5.") var version: String
        @Option(help: "Product model file: data points named by their ids (Gizwits data points or Aliyun TSL).") var product: String?
        @Option(help: "Seconds to connect, and for each answer.") var timeout: Double = 5

        func validate() throws {
            guard TuyaVersion(rawValue: version) != nil else { throw ValidationError("--version is 3.1, 3.2, 3.3, 3.4 or 3.5") }
            guard (localKey ?? ProcessInfo.processInfo.environment["TETHER_TUYA_LOCAL_KEY"])?.utf8.count == 16 else {
                throw ValidationError("the local key (--local-key or TETHER_TUYA_LOCAL_KEY) is 16 characters")
            }
            guard timeout > 0, timeout <= 120 else { throw ValidationError("--timeout is 0 to 120 seconds") }
        }

        func address() throws -> TuyaDeviceAddress {
            let key = localKey ?? ProcessInfo.processInfo.environment["TETHER_TUYA_LOCAL_KEY"] ?? ""
            return try TuyaDeviceAddress(host: host, port: port, deviceID: id, localKey: Array(key.utf8), version: TuyaVersion(rawValue: version)!)
        }

        var duration: Duration { .milliseconds(Int64(timeout * 1000)) }

        /// The model, when given, to name data points by their ids.
        func model() throws -> ThingModel? { try product.map(loadProduct) }
    }

    /// `{"1": true}` → `{"switch": true}` with a model; unknown ids stay as they are.
    static func named(_ dps: JSONObject, _ model: ThingModel?) -> JSONObject {
        model.map { TuyaDataPointMap(model: $0).named(dps) } ?? dps
    }

    static func print(_ status: TuyaStatus, model: ThingModel?, json: Bool) {
        let dps = named(status.dps, model)
        if json {
            printJSON(.object([model == nil ? "dps" : "data": .object(dps)]))
        } else {
            for key in dps.keys { printLine("\(key) = \((dps[key] ?? .null).serialized())") }
        }
    }

    struct Scan: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Listen for devices announcing themselves (UDP 6666 and 6667); sends nothing.")
        @Option(help: "The address to listen on.") var listen = "0.0.0.0"
        @Option(help: "A UDP port to listen on (repeatable; default 6666 and 6667).") var port: [Int] = []
        @Option(help: "Seconds to listen (devices announce about every 5 s).") var timeout: Double = 6
        @Option(help: "Also send a 3.5 REQ_DEVINFO probe to HOST:PORT (Tuya: the broadcast address, port 7000).") var probe: String?
        @Flag(help: "Print JSON.") var json = false

        func validate() throws {
            if let problem = problemWithSeconds(timeout, option: "--timeout", maximum: 600, allowZero: false) { throw ValidationError(problem) }
        }

        func run() async throws {
            var target: (host: String, port: Int)?
            if let probe {
                guard let colon = probe.lastIndex(of: ":"), let number = Int(probe[probe.index(after: colon)...]), (1...65535).contains(number) else {
                    throw ValidationError("--probe takes HOST:PORT")
                }
                target = (String(probe[..<colon]), number)
            }
            let found = try await TuyaScanner.scan(
                host: listen, ports: port.isEmpty ? [6666, 6667] : port, duration: .milliseconds(Int64(timeout * 1000)), probe: target)
            if json {
                printJSON(
                    .array(
                        found.map {
                            [
                                "id": .string($0.announcement.deviceID), "host": .string($0.sourceHost), "version": .string($0.announcement.version),
                                "productKey": .string($0.announcement.productKey),
                            ]
                        }))
                return
            }
            if found.isEmpty { printLine("no devices heard") }
            for device in found {
                printLine("\(device.announcement.deviceID)  \(device.sourceHost)  \(device.announcement.version)  \(device.announcement.productKey)")
            }
        }
    }

    struct Status: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Read every data point.")
        @OptionGroup var device: DeviceOptions
        @Flag(help: "Print JSON: {\"dps\": {...}} (with --product, {\"data\": {...}} by name).") var json = false

        func run() async throws {
            let model = try device.model()
            let status = try await TuyaLANClient.withConnection(to: try device.address(), timeout: device.duration) { connection throws(TetherError) in
                try await connection.status()
            }
            TuyaCommand.print(status, model: model, json: json)
        }
    }

    struct Set: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Set data points: DP=VALUE (an id, or a name with --product); prints the status after.")
        @OptionGroup var device: DeviceOptions
        @Argument(help: "DP=VALUE: true/false, a number, or text.") var assignments: [String]
        @Flag(help: "Print JSON.") var json = false

        func validate() throws {
            if assignments.isEmpty { throw ValidationError("name at least one DP=VALUE") }
        }

        func run() async throws {
            let model = try device.model()
            let dps = try Self.values(assignments, model: model)
            let status = try await TuyaLANClient.withConnection(to: try device.address(), timeout: device.duration) { connection throws(TetherError) in
                if let answered = try await connection.set(dps) { return answered }
                return try await connection.status()
            }
            TuyaCommand.print(status, model: model, json: json)
        }

        /// With a model: names (or ids) checked against it; without: ids, values read as JSON
        /// literals (true, 42, "text") or taken as text.
        static func values(_ assignments: [String], model: ThingModel?) throws -> JSONObject {
            var dps = JSONObject()
            for assignment in assignments {
                guard let equals = assignment.firstIndex(of: "="), equals != assignment.startIndex else {
                    throw ValidationError("\(assignment) is not DP=VALUE")
                }
                let key = String(assignment[..<equals])
                let text = String(assignment[assignment.index(after: equals)...])
                if let model {
                    guard let point = model.dataPoints.first(where: { $0.name == key || String($0.id) == key }) else {
                        throw ValidationError("the product has no data point \(key)")
                    }
                    dps[String(point.id)] = try point.parse(text).jsonValue
                } else {
                    guard Int(key) != nil else { throw ValidationError("\(key) is not a DP id (give --product to use names)") }
                    dps[key] = (try? JSONValue.parse(text)) ?? .string(text)
                }
            }
            return dps
        }
    }

    struct Watch: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Stay connected through the SDK and print the status, then every change the device reports, until interrupted.",
            discussion: """
                The SDK keeps the connection: heartbeats, and reconnection with backoff when the device goes dark or \
                drops it. Lines are the status ({"dps": ...}, or {"data": ...} by name with --product) and the \
                device's reachability ({"netStatus": "controllable" | "online" | "offline"}).
                """)
        @OptionGroup var device: DeviceOptions
        @Option(help: "Seconds between heartbeats.") var heartbeat: Double = 10
        @Option(help: "Stop after this many status lines (0: never).") var count = 0
        @Option(help: "Stop after this many seconds (0: never).") var duration: Double = 0
        @Flag(help: "Print JSON lines.") var json = false

        func validate() throws {
            if let problem = problemWithSeconds(heartbeat, option: "--heartbeat", maximum: 600, allowZero: false) { throw ValidationError(problem) }
            if let problem = problemWithSeconds(duration, option: "--duration", maximum: 86_400, allowZero: true) { throw ValidationError(problem) }
            guard count >= 0 else { throw ValidationError("--count is 0 or more") }
        }

        func run() async throws {
            let model = try device.model()
            let address = try device.address()
            let tuya = TuyaConfiguration(heartbeatInterval: .milliseconds(Int64(heartbeat * 1000)), requestTimeout: device.duration)
            let configuration = TetherClient.Configuration(products: model.map { [$0] } ?? [], lan: LANConfiguration(discoveryEnabled: false), tuya: tuya)
            try await withTetherClient(configuration: configuration) { client in
                let watched = try client.tuyaDevice(
                    host: address.host, port: address.port, id: address.deviceID, localKey: TuyaLocalKey(bytes: address.localKey), version: address.version,
                    model: model)
                let events = watched.events()
                // The status read at the subscription arrives as the first status event.
                try await watched.subscribe()
                try await withThrowingTaskGroup(of: Void.self) { group in
                    if duration > 0 {
                        group.addTask { try await Task.sleep(for: .milliseconds(Int64(duration * 1000))) }
                    }
                    group.addTask {
                        var printed = 0
                        for await event in events {
                            switch event {
                            case .status(let report):
                                printStatus(report.status, named: model != nil)
                                printed += 1
                                if count > 0 && printed >= count { return }
                            case .netStatus(let status):
                                if json { printJSON(["netStatus": .string(status.rawValue)]) } else { printLine("net status: \(status)") }
                            case .error(let error):
                                printError("\(error)")
                            default:
                                break
                            }
                        }
                    }
                    try await group.next()
                    group.cancelAll()
                }
            }
        }

        private func printStatus(_ status: DeviceStatus, named: Bool) {
            var values = JSONObject()
            for (name, value) in status.allValues.sorted(by: { $0.key < $1.key }) { values[name] = TuyaDataPointMap.json(value) }
            if json {
                printJSON(.object([named ? "data" : "dps": .object(values)]))
            } else {
                for key in values.keys { printLine("\(key) = \((values[key] ?? .null).serialized())") }
            }
        }
    }
}
