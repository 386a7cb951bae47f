import Testing
import TetherBluetooth
import TetherCore

/// DIoT tables, data and battery (ble-profiles.md B4–B7): test vectors 14–19, the worked examples
/// of B7, every feature code, round trips and malformed lists.
@Suite("DIoT records")
struct DIoTRecordTests {
    static func feature(_ code: DIoTFeatureCode, _ value: DIoTFeatureValue) throws -> DIoTFeatureRecord {
        try DIoTFeatureRecord(code: code, value: value)
    }

    @Test("vector 14: temperature 25.0 and heartRate 72")
    func vector14() throws {
        let records = try DIoTFeatureRecord.decodeList(hex("07 00 00 C8 41 04 48 00 00 00"))
        #expect(try records == [Self.feature(.temperature, .float(25.0)), Self.feature(.heartRate, .int32(72))])
        #expect(records.map(\.name) == ["temperature", "heartRate"])
        #expect(records.map(\.description) == ["temperature = 25.0", "heartRate = 72"])
        #expect(try DIoTFeatureRecord.notifications(for: records, maximumLength: 20) == [hex("07 00 00 C8 41 04 48 00 00 00")])
    }

    @Test("vector 15: currentDate 1700000000 = 2023-11-14T22:13:20Z")
    func vector15() throws {
        let records = try DIoTFeatureRecord.decodeList(hex("2B 00 F1 53 65"))
        #expect(try records == [Self.feature(.currentDate, .date(1_700_000_000))])
        #expect(records[0].value.description == "2023-11-14T22:13:20Z")
    }

    @Test("vector 16: D002 notifies accX −2.5")
    func vector16() throws {
        #expect(try DIoTFeatureRecord.decodeChannelData(hex("09 00 00 20 C0")) == [Self.feature(.accX, .float(-2.5))])
    }

    @Test("vector 17: ch1 every 1000 ms, ch2 automatic")
    func vector17() throws {
        let rates = try DIoTRateRecord.decodeList(hex("01 E8 03 00 00 02 00 00 00 00"))
        #expect(rates == [DIoTRateRecord(channel: 1, intervalMilliseconds: 1000), DIoTRateRecord(channel: 2, intervalMilliseconds: 0)])
        #expect(rates[1].isAutomatic && !rates[0].isAutomatic)
        #expect(rates.flatMap(\.bytes) == hex("01 E8 03 00 00 02 00 00 00 00"))
    }

    @Test("vector 18: 3 bytes on C002 are a parse error; 00 on D001 means nothing is mapped")
    func vector18() throws {
        expectError(.malformedFrame) { try DIoTChannelRecord.decodeList(hex("01 07 02")) }
        #expect(try DIoTFeatureRecord.decodeChannelData(hex("00")) == [])
        #expect(DIoTFeatureRecord.channelData([]) == [0x00])
        expectError(.malformedFrame) { try DIoTFeatureRecord.decodeList(hex("00")) }
    }

    @Test("vector 19: hrAlert true, personGender false")
    func vector19() throws {
        #expect(try DIoTFeatureRecord.decodeList(hex("1B 01 00 00 00")) == [Self.feature(.hrAlert, .bool(true))])
        #expect(try DIoTFeatureRecord.decodeList(hex("2A 00 00 00 00")) == [Self.feature(.personGender, .bool(false))])
        #expect(try Self.feature(.personGender, .bool(true)).bytes == hex("2A 01 00 00 00"))
    }

    @Test("the B7 replies: channel map, battery")
    func workedExamples() throws {
        #expect(
            try DIoTChannelRecord.decodeList(hex("01 07 02 04"))
                == [DIoTChannelRecord(channel: 1, feature: .temperature), DIoTChannelRecord(channel: 2, feature: .heartRate)])
        #expect(try DIoTChannelRecord.decodeList(hex("03 12")) == [DIoTChannelRecord(channel: 3, feature: .activityStepCounter)])
        #expect(try DIoTFeatureRecord.decodeList(hex("21 00 00 48 42")) == [Self.feature(.temperatureAlertTriggerTop, .float(50.0))])
        #expect(try DIoTBatteryLevel(decoding: hex("5A")).percent == 90)
        #expect(try DIoTBatteryLevel(percent: 90).bytes == [0x5A])
        expectError(.malformedFrame) { try DIoTBatteryLevel(decoding: [101]) }
        expectError(.malformedFrame) { try DIoTBatteryLevel(decoding: [50, 0]) }
        expectError(.invalidArgument) { try DIoTBatteryLevel(percent: 101) }
    }

    @Test("all 44 feature codes have the reference's names and types")
    func featureCodes() {
        let names = [
            "empty", "signalRedLed", "signalGreenLed", "signalIRLed", "heartRate", "oxigen", "respiratory", "temperature", "humidity", "accX", "accY",
            "accZ", "gyroX", "gyroY", "gyroZ", "alertFallDetection", "awakeLastFallAsleepDate", "awakeLastAwakeDate", "activityStepCounter",
            "noiseLevel", "activityLevel", "activityLevelDate", "activityDistanceTraveled", "activityCaloriesBurn", "longitude", "latitude", "altitude",
            "hrAlert", "hrAlertTriggerTop", "hrAlertTriggerBottom", "oxygenAlert", "oxygenAlertTriggerBottom", "temperatureAlert",
            "temperatureAlertTriggerTop", "temperatureAlertTriggerBottom", "humidityAlert", "humidityAlertTriggerTop", "humidityAlertTriggerBottom",
            "awakeAlert", "personAge", "personHeight", "personWeight", "personGender", "currentDate",
        ]
        #expect(DIoTFeatureCode.allKnown.count == 44)
        #expect(DIoTFeatureCode.allKnown.map(\.name) == names)
        let types: [DIoTFeatureCode.ValueType] = "RFFFIFFFFFFFFFFBDDIFIDFFFFFBIIBIBFFBFFBIFFBD".map {
            switch $0 {
            case "F": .float
            case "I": .int32
            case "B": .bool
            case "D": .date
            default: .raw
            }
        }
        #expect(DIoTFeatureCode.allKnown.map(\.valueType) == types)
        #expect(DIoTFeatureCode(rawValue: 44).name == "unknown" && DIoTFeatureCode(rawValue: 44).valueType == .raw)
        #expect("\(DIoTFeatureCode(rawValue: 44))" == "unknown(0x2C)")
    }

    @Test("every code's value round-trips, unknown codes keep their 4 bytes")
    func roundTrips() throws {
        for code in DIoTFeatureCode.allKnown + [DIoTFeatureCode(rawValue: 200)] {
            let value: DIoTFeatureValue =
                switch code.valueType {
                case .float: .float(-1.25)
                case .int32: .int32(-7)
                case .bool: .bool(true)
                case .date: .date(4_000_000_000)
                case .raw: .raw([1, 2, 3, 4])
                }
            let record = try Self.feature(code, value)
            #expect(try DIoTFeatureRecord.decodeList(record.bytes) == [record])
            #expect(try DIoTCommand(decoding: DIoTCommand.setFeature(record).bytes, table: .features) == .setFeature(record))
        }
        let nan = try Self.feature(.temperature, .float(Float(bitPattern: 0x7FC0_0001)))
        #expect(try DIoTFeatureRecord.decodeList(nan.bytes) == [nan])
        #expect(try DIoTFeatureRecord.decodeList(hex("1B 02 00 00 00")) == [Self.feature(.hrAlert, .bool(false))])
        #expect(try DIoTFeatureRecord.decodeList(hex("1C FF FF FF FF")) == [Self.feature(.hrAlertTriggerTop, .int32(-1))])
    }

    @Test("a value of another type than its code's is refused")
    func wrongTypes() {
        expectError(.wrongValueType) { try Self.feature(.heartRate, .float(72)) }
        expectError(.wrongValueType) { try Self.feature(.temperature, .bool(true)) }
        expectError(.invalidArgument) { try Self.feature(.temperature, .raw([1, 2, 3])) }
        #expect(throws: Never.self) { try Self.feature(.temperature, .raw([0, 0, 0xC8, 0x41])) }
    }

    @Test("lists are split at record boundaries under the notification limit", arguments: [5, 20, 23, 512])
    func split(maximumLength: Int) throws {
        let features = try (0..<150).map { try Self.feature(.heartRate, .int32(Int32($0))) }
        let notifications = try DIoTFeatureRecord.notifications(for: features, maximumLength: maximumLength)
        #expect(notifications.allSatisfy { $0.count <= maximumLength && $0.count % 5 == 0 && !$0.isEmpty })
        #expect(try notifications.flatMap { try DIoTFeatureRecord.decodeList($0) } == features)
        let channels = (1...9).map { DIoTChannelRecord(channel: $0, feature: .empty) }
        #expect(try DIoTChannelRecord.notifications(for: channels, maximumLength: 5).map(\.count) == [4, 4, 4, 4, 2])
        expectError(.invalidArgument) { try DIoTFeatureRecord.notifications(for: features, maximumLength: 4) }
        #expect(try DIoTRateRecord.notifications(for: [], maximumLength: 20).isEmpty)
    }

    @Test("malformed lists are refused")
    func malformed() {
        expectError(.malformedFrame) { try DIoTFeatureRecord.decodeList([]) }
        expectError(.malformedFrame) { try DIoTFeatureRecord.decodeList(hex("07 00 00 C8")) }
        expectError(.malformedFrame) { try DIoTRateRecord.decodeList(hex("01 E8 03 00 00 02")) }
        expectError(.malformedFrame) { try DIoTChannelRecord.decodeList([]) }
        expectError(.malformedFrame) { try DIoTFeatureRecord.decodeChannelData([]) }
        expectError(.frameTooLarge) { try DIoTChannelRecord.decodeList([UInt8](repeating: 1, count: 514)) }
    }
}
