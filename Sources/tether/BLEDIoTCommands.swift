import ArgumentParser
import TetherBluetooth
import TetherCLISupport
import TetherCore

/// `tether ble diot …`: a DIoT (Daatrics) sensor (ble-profiles.md Part B).
struct BLEDIoTCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "diot",
        abstract: "A DIoT sensor: device information, its feature table, channel map and rate table, live data, the debug console.",
        subcommands: [
            Info.self, Features.self, Channels.self, Rates.self, SetFeature.self, SetChannel.self, SetRate.self, Clean.self, LiveData.self,
            Debug.self,
        ])

    struct Options: ParsableArguments {
        @OptionGroup var device: BLEDeviceOptions
        @Option(help: "Seconds to wait for each answer of the device.") var replyTimeout: Double = 5

        func validate() throws {
            if let problem = problemWithSeconds(replyTimeout, option: "--reply-timeout", maximum: 600, allowZero: false) {
                throw ValidationError(problem)
            }
        }

        /// Connects, turns on the command interface's notifications, runs `body`, disconnects.
        func withDevice(_ body: @escaping @Sendable (DIoTDevice) async throws -> Void) async throws {
            let timeout = Duration.milliseconds(Int64(replyTimeout * 1000))
            try await device.withConnection { link in
                try await DIoTDevice.withDevice(on: link, timeout: timeout) { diot in try await body(diot) }
            }
        }
    }

    // MARK: - Printing

    /// `{"code": 7, "name": "temperature", "type": "float", "value": 25}`: dates as integer
    /// seconds, raw values as hex.
    static func json(_ record: DIoTFeatureRecord) -> JSONObject {
        [
            "code": .int(Int64(record.code.rawValue)), "name": .string(record.name), "type": .string(typeName(record.code.valueType)),
            "value": json(record.value),
        ]
    }

    static func json(_ value: DIoTFeatureValue) -> JSONValue {
        switch value {
        // The float's shortest text, so that 0.1 prints as 0.1 and not 0.10000000149011612.
        case .float(let value): .double(Double("\(value)") ?? Double(value))
        case .int32(let value): .int(Int64(value))
        case .bool(let value): .bool(value)
        case .date(let value): .int(Int64(value))
        case .raw(let bytes): .string(bytes.tetherHex)
        }
    }

    static func typeName(_ type: DIoTFeatureCode.ValueType) -> String {
        switch type {
        case .float: "float"
        case .int32: "int32"
        case .bool: "bool"
        case .date: "date"
        case .raw: "raw"
        }
    }

    static func json(_ record: DIoTFeatureRecord, channel: UInt8) -> JSONObject {
        var object: JSONObject = ["channel": .int(Int64(channel))]
        let fields = json(record)
        for key in fields.keys { object[key] = fields[key] }
        return object
    }

    static func json(_ record: DIoTChannelRecord) -> JSONObject {
        ["channel": .int(Int64(record.channel)), "feature": .int(Int64(record.feature.rawValue)), "name": .string(record.feature.name)]
    }

    static func json(_ record: DIoTRateRecord) -> JSONObject {
        ["channel": .int(Int64(record.channel)), "intervalMilliseconds": .int(Int64(record.intervalMilliseconds)), "automatic": .bool(record.isAutomatic)]
    }

    static func printFeatures(_ records: [DIoTFeatureRecord], json: Bool) {
        for record in records {
            if json { printJSON(.object(Self.json(record))) } else { printLine(record.description) }
        }
    }

    static func printChannels(_ records: [DIoTChannelRecord], json: Bool) {
        for record in records {
            if json { printJSON(.object(Self.json(record))) } else { printLine(record.description) }
        }
    }

    static func printRates(_ records: [DIoTRateRecord], json: Bool) {
        for record in records {
            if json { printJSON(.object(Self.json(record))) } else { printLine(record.description) }
        }
    }

    // MARK: - Parsing

    /// A feature code by number (`7`) or by the reference's name (`temperature`, any case).
    static func featureCode(_ text: String) throws -> DIoTFeatureCode {
        if let number = UInt8(text) { return DIoTFeatureCode(rawValue: number) }
        guard let code = DIoTFeatureCode.allKnown.first(where: { $0.name.lowercased() == text.lowercased() }) else {
            throw ValidationError("\"\(text.prefix(40))\" is not a DIoT feature code (0...255) or name (temperature, heartRate, …)")
        }
        return code
    }

    /// A channel number, 1…9.
    static func channel(_ value: Int, option: String) throws -> UInt8 {
        guard (1...9).contains(value) else { throw ValidationError("\(option) is a channel, 1 to 9") }
        return UInt8(value)
    }

    /// A value written as its feature's type says: a number, `true`/`false`, Unix seconds, or
    /// 8 hex digits for a code without a type.
    static func featureValue(_ text: String, for code: DIoTFeatureCode) throws -> DIoTFeatureValue {
        let value: DIoTFeatureValue? =
            switch code.valueType {
            case .float: Float(text).map(DIoTFeatureValue.float)
            case .int32: Int32(text).map(DIoTFeatureValue.int32)
            case .bool: ["true": true, "1": true, "false": false, "0": false][text.lowercased()].map(DIoTFeatureValue.bool)
            case .date: UInt32(text).map(DIoTFeatureValue.date)
            case .raw: [UInt8](tetherHex: text).flatMap { $0.count == 4 ? DIoTFeatureValue.raw($0) : nil }
            }
        guard let value else {
            let expected =
                switch code.valueType {
                case .float: "a number"
                case .int32: "a 32-bit integer"
                case .bool: "true or false"
                case .date: "Unix seconds"
                case .raw: "4 bytes in hex (8 digits)"
                }
            throw ValidationError("--value for \(code) is \(expected), not \"\(text.prefix(40))\"")
        }
        return value
    }

    /// `--channel` (one channel of a table, 1...9) and `--json`, as the table commands take them.
    struct ChannelFilter: ParsableArguments {
        @Option(help: "Only this channel (1...9).") var channel: Int?
        @Flag(help: "Print one JSON object per channel.") var json = false

        func validate() throws {
            _ = try parsed()
        }

        func parsed() throws -> UInt8? {
            try channel.map { try BLEDIoTCommand.channel($0, option: "--channel") }
        }
    }

    // MARK: - Subcommands

    struct Info: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Device Information, the battery level and the device identifier.")
        @OptionGroup var options: Options
        @Flag(help: "Print JSON.") var json = false

        func run() async throws {
            let json = json
            try await options.withDevice { device in
                let information = try await device.deviceInformation()
                let battery = try await device.battery()
                let id = try await device.deviceID()
                if json {
                    printJSON(
                        .object([
                            "manufacturer": .string(information.manufacturer), "model": .string(information.model),
                            "hardware": .string(information.hardware), "firmware": .string(information.firmware),
                            "software": .string(information.software), "batteryPercent": .int(Int64(battery.percent)),
                            "deviceID": .string(id.uuidString),
                        ]))
                } else {
                    printLine("\(information.manufacturer) \(information.model), hardware \(information.hardware), firmware \(information.firmware)")
                    printLine("software \(information.software), battery \(battery), id \(id)")
                }
            }
        }
    }

    struct Features: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "The feature table (or one feature), each with its name, type and value.")
        @OptionGroup var options: Options
        @Option(help: "Only this feature (a code or a name such as temperature).") var code: String?
        @Flag(help: "Print one JSON object per feature.") var json = false

        func validate() throws {
            if let code { _ = try BLEDIoTCommand.featureCode(code) }
        }

        func run() async throws {
            let code = try code.map(BLEDIoTCommand.featureCode)
            let json = json
            try await options.withDevice { device in
                let records = if let code { [try await device.feature(code)] } else { try await device.features() }
                BLEDIoTCommand.printFeatures(records, json: json)
            }
        }
    }

    struct Channels: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "The channel map: which feature each data channel carries.")
        @OptionGroup var options: Options
        @OptionGroup var filter: ChannelFilter

        func run() async throws {
            let (channel, json) = (try filter.parsed(), filter.json)
            try await options.withDevice { device in
                let records = if let channel { [try await device.channel(channel)] } else { try await device.channels() }
                BLEDIoTCommand.printChannels(records, json: json)
            }
        }
    }

    struct Rates: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "The rate table: how often each data channel updates (0: automatic).")
        @OptionGroup var options: Options
        @OptionGroup var filter: ChannelFilter

        func run() async throws {
            let (channel, json) = (try filter.parsed(), filter.json)
            try await options.withDevice { device in
                let records = if let channel { [try await device.rate(channel)] } else { try await device.rates() }
                BLEDIoTCommand.printRates(records, json: json)
            }
        }
    }

    struct SetFeature: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "set-feature", abstract: "Set a feature's value; print what the device confirmed.")
        @OptionGroup var options: Options
        @Option(help: "The feature (a code or a name such as temperatureAlertTriggerTop).") var code: String
        // Unconditional, so that a negative number (`--value -40`) is taken as the value.
        @Option(parsing: .unconditional, help: "The value, as the feature's type: a number, true/false, Unix seconds, or 8 hex digits.")
        var value: String
        @Flag(help: "Print JSON.") var json = false

        func validate() throws {
            _ = try BLEDIoTCommand.featureValue(value, for: try BLEDIoTCommand.featureCode(code))
        }

        func run() async throws {
            let code = try BLEDIoTCommand.featureCode(code)
            let record = try DIoTFeatureRecord(code: code, value: try BLEDIoTCommand.featureValue(value, for: code))
            let json = json
            try await options.withDevice { device in
                BLEDIoTCommand.printFeatures([try await device.setFeature(record)], json: json)
            }
        }
    }

    struct SetChannel: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "set-channel", abstract: "Map a feature to a data channel (replacing the one it had); print what the device confirmed.")
        @OptionGroup var options: Options
        @Option(help: "The channel (1...9).") var channel: Int
        @Option(help: "The feature (a code or a name; 0 or empty for none).") var feature: String
        @Flag(help: "Print JSON.") var json = false

        func validate() throws {
            _ = try BLEDIoTCommand.channel(channel, option: "--channel")
            _ = try BLEDIoTCommand.featureCode(feature)
        }

        func run() async throws {
            let channel = try BLEDIoTCommand.channel(channel, option: "--channel")
            let feature = try BLEDIoTCommand.featureCode(feature)
            let json = json
            try await options.withDevice { device in
                BLEDIoTCommand.printChannels([try await device.setChannel(channel: channel, feature: feature)], json: json)
            }
        }
    }

    struct SetRate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "set-rate", abstract: "Set how often a data channel updates; print what the device confirmed.")
        @OptionGroup var options: Options
        @Option(help: "The channel (1...9).") var channel: Int
        @Option(help: "The interval in milliseconds (0: automatic).") var interval: UInt32
        @Flag(help: "Print JSON.") var json = false

        func validate() throws {
            _ = try BLEDIoTCommand.channel(channel, option: "--channel")
        }

        func run() async throws {
            let channel = try BLEDIoTCommand.channel(channel, option: "--channel")
            let (interval, json) = (interval, json)
            try await options.withDevice { device in
                BLEDIoTCommand.printRates([try await device.setRate(channel: channel, intervalMilliseconds: interval)], json: json)
            }
        }
    }

    struct Clean: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Reset one entry or a whole table to its default (value 0, no feature, automatic); print what the device answered.")

        enum Table: String, ExpressibleByArgument, CaseIterable {
            case features, channels, rates
        }

        @OptionGroup var options: Options
        @Argument(help: "features, channels or rates.") var table: Table
        @Option(help: "Only this feature (features).") var code: String?
        @Option(help: "Only this channel, 1...9 (channels, rates).") var channel: Int?
        @Flag(help: "Print JSON.") var json = false

        func validate() throws {
            switch table {
            case .features:
                guard channel == nil else { throw ValidationError("--channel is for channels and rates; features take --code") }
                if let code { _ = try BLEDIoTCommand.featureCode(code) }
            case .channels, .rates:
                guard code == nil else { throw ValidationError("--code is for features; \(table.rawValue) take --channel") }
                if let channel { _ = try BLEDIoTCommand.channel(channel, option: "--channel") }
            }
        }

        func run() async throws {
            let code = try code.map(BLEDIoTCommand.featureCode)
            let channel = try channel.map { try BLEDIoTCommand.channel($0, option: "--channel") }
            let (table, json) = (table, json)
            try await options.withDevice { device in
                switch table {
                case .features:
                    let records = if let code { [try await device.cleanFeature(code)] } else { try await device.cleanAllFeatures() }
                    BLEDIoTCommand.printFeatures(records, json: json)
                case .channels:
                    let records = if let channel { [try await device.cleanChannel(channel)] } else { try await device.cleanAllChannels() }
                    BLEDIoTCommand.printChannels(records, json: json)
                case .rates:
                    let records = if let channel { [try await device.cleanRate(channel)] } else { try await device.cleanAllRates() }
                    BLEDIoTCommand.printRates(records, json: json)
                }
            }
        }
    }

    struct LiveData: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "data", abstract: "Print a data channel's live values as the device notifies them.")
        @OptionGroup var options: Options
        @Option(help: "The channel (1...9).") var channel: Int
        @Option(help: "Stop after this many values.") var count: Int?
        @Option(help: "Stop after this many seconds.") var duration: Double?
        @Flag(help: "Print one JSON object per value.") var json = false

        func validate() throws {
            _ = try BLEDIoTCommand.channel(channel, option: "--channel")
            if let count, count < 1 { throw ValidationError("--count is at least 1") }
            if let duration, let problem = problemWithSeconds(duration, option: "--duration", maximum: 86_400, allowZero: false) {
                throw ValidationError(problem)
            }
        }

        func run() async throws {
            let channel = try BLEDIoTCommand.channel(channel, option: "--channel")
            let (count, duration, json) = (count, duration, json)
            try await options.withDevice { device in
                let values = try await device.data(channel: channel)
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask {
                        var seen = 0
                        for try await record in values {
                            if json {
                                printJSON(.object(BLEDIoTCommand.json(record, channel: channel)))
                            } else {
                                printLine("channel \(channel): \(record)")
                            }
                            seen += 1
                            if let count, seen >= count { return }
                        }
                    }
                    if let duration { group.addTask { try await Task.sleep(for: .milliseconds(Int64(duration * 1000))) } }
                    try await group.next()
                    group.cancelAll()
                }
            }
        }
    }

    struct Debug: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Send a command to the device's debug console and print its answer.")
        @OptionGroup var options: Options
        @Argument(help: "The command (help, version, …); words are joined with spaces.") var command: [String]
        @Flag(help: "Print JSON.") var json = false

        func validate() throws {
            guard !command.joined().isEmpty else { throw ValidationError("give a command (help, version, …)") }
        }

        func run() async throws {
            let (command, json) = (command.joined(separator: " "), json)
            try await options.withDevice { device in
                let answer = try await device.debug(command)
                if json {
                    printJSON(.object(["command": .string(command), "answer": .string(answer)]))
                } else {
                    printLine(answer.hasSuffix("\n") ? String(answer.dropLast()) : answer)
                }
            }
        }
    }
}
