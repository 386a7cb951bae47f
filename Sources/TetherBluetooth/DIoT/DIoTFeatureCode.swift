import TetherCore

/// A DIoT feature: one quantity a sensor measures or one setting it keeps (ble-profiles.md B5),
/// identified by a byte. Unknown codes are kept (the vendors' clients read them as ``empty``); their
/// values decode as ``DIoTFeatureValue/raw(_:)``.
public struct DIoTFeatureCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// The type of a feature's 4-byte value.
    public enum ValueType: Hashable, Sendable, CaseIterable {
        /// IEEE-754 float32, little-endian.
        case float
        /// Signed 32-bit integer, little-endian.
        case int32
        /// Byte 0 == `01`; sent as `01 00 00 00` / `00 00 00 00`.
        case bool
        /// Unsigned 32-bit Unix seconds, little-endian.
        case date
        /// No type: the 4 bytes as they are (``empty`` and unknown codes).
        case raw
    }

    /// 0: No feature (a channel with nothing mapped).
    public static let empty = Self(rawValue: 0)
    /// 1: Raw signal of the red LED (optical sensor); float32.
    public static let signalRedLed = Self(rawValue: 1)
    /// 2: Raw signal of the green LED; float32.
    public static let signalGreenLed = Self(rawValue: 2)
    /// 3: Raw signal of the infrared LED; float32.
    public static let signalIRLed = Self(rawValue: 3)
    /// 4: Heart rate, beats per minute; signed 32-bit integer.
    public static let heartRate = Self(rawValue: 4)
    /// 5: Blood oxygen saturation (SpO₂), spelt `oxigen` as the vendors do; float32.
    public static let oxigen = Self(rawValue: 5)
    /// 6: Respiratory rate; float32.
    public static let respiratory = Self(rawValue: 6)
    /// 7: Temperature (°C presumably; the sources give no unit); float32.
    public static let temperature = Self(rawValue: 7)
    /// 8: Relative humidity; float32.
    public static let humidity = Self(rawValue: 8)
    /// 9: Acceleration, X axis; float32.
    public static let accX = Self(rawValue: 9)
    /// 10: Acceleration, Y axis; float32.
    public static let accY = Self(rawValue: 10)
    /// 11: Acceleration, Z axis; float32.
    public static let accZ = Self(rawValue: 11)
    /// 12: Rotation rate, X axis; float32.
    public static let gyroX = Self(rawValue: 12)
    /// 13: Rotation rate, Y axis; float32.
    public static let gyroY = Self(rawValue: 13)
    /// 14: Rotation rate, Z axis; float32.
    public static let gyroZ = Self(rawValue: 14)
    /// 15: Fall detection alert on or off; boolean.
    public static let alertFallDetection = Self(rawValue: 15)
    /// 16: When the wearer last fell asleep; date (Unix seconds).
    public static let awakeLastFallAsleepDate = Self(rawValue: 16)
    /// 17: When the wearer last woke up; date (Unix seconds).
    public static let awakeLastAwakeDate = Self(rawValue: 17)
    /// 18: Steps counted; signed 32-bit integer.
    public static let activityStepCounter = Self(rawValue: 18)
    /// 19: Ambient noise level; float32.
    public static let noiseLevel = Self(rawValue: 19)
    /// 20: Activity level; signed 32-bit integer.
    public static let activityLevel = Self(rawValue: 20)
    /// 21: When the activity level was measured; date (Unix seconds).
    public static let activityLevelDate = Self(rawValue: 21)
    /// 22: Distance travelled; float32.
    public static let activityDistanceTraveled = Self(rawValue: 22)
    /// 23: Calories burnt; float32.
    public static let activityCaloriesBurn = Self(rawValue: 23)
    /// 24: Longitude; float32.
    public static let longitude = Self(rawValue: 24)
    /// 25: Latitude; float32.
    public static let latitude = Self(rawValue: 25)
    /// 26: Altitude; float32.
    public static let altitude = Self(rawValue: 26)
    /// 27: Heart-rate alert on or off; boolean.
    public static let hrAlert = Self(rawValue: 27)
    /// 28: Heart rate above which the alert fires; signed 32-bit integer.
    public static let hrAlertTriggerTop = Self(rawValue: 28)
    /// 29: Heart rate below which the alert fires; signed 32-bit integer.
    public static let hrAlertTriggerBottom = Self(rawValue: 29)
    /// 30: SpO₂ alert on or off; boolean.
    public static let oxygenAlert = Self(rawValue: 30)
    /// 31: SpO₂ below which the alert fires; signed 32-bit integer. iOS decodes an integer,
    /// Android a float; Tether follows iOS, which keeps all 4 bytes either way.
    public static let oxygenAlertTriggerBottom = Self(rawValue: 31)
    /// 32: Temperature alert on or off; boolean.
    public static let temperatureAlert = Self(rawValue: 32)
    /// 33: Temperature above which the alert fires; float32.
    public static let temperatureAlertTriggerTop = Self(rawValue: 33)
    /// 34: Temperature below which the alert fires; float32.
    public static let temperatureAlertTriggerBottom = Self(rawValue: 34)
    /// 35: Humidity alert on or off; boolean.
    public static let humidityAlert = Self(rawValue: 35)
    /// 36: Humidity above which the alert fires; float32.
    public static let humidityAlertTriggerTop = Self(rawValue: 36)
    /// 37: Humidity below which the alert fires; float32.
    public static let humidityAlertTriggerBottom = Self(rawValue: 37)
    /// 38: Wake-up alert on or off; boolean.
    public static let awakeAlert = Self(rawValue: 38)
    /// 39: The wearer's age; signed 32-bit integer.
    public static let personAge = Self(rawValue: 39)
    /// 40: The wearer's height; float32.
    public static let personHeight = Self(rawValue: 40)
    /// 41: The wearer's weight; float32.
    public static let personWeight = Self(rawValue: 41)
    /// 42: The wearer's gender; boolean, the vendors give no meaning to true.
    public static let personGender = Self(rawValue: 42)
    /// 43: The device clock; date (Unix seconds).
    public static let currentDate = Self(rawValue: 43)

    private static let table: [(name: String, type: ValueType)] = [
        ("empty", .raw),
        ("signalRedLed", .float),
        ("signalGreenLed", .float),
        ("signalIRLed", .float),
        ("heartRate", .int32),
        ("oxigen", .float),
        ("respiratory", .float),
        ("temperature", .float),
        ("humidity", .float),
        ("accX", .float),
        ("accY", .float),
        ("accZ", .float),
        ("gyroX", .float),
        ("gyroY", .float),
        ("gyroZ", .float),
        ("alertFallDetection", .bool),
        ("awakeLastFallAsleepDate", .date),
        ("awakeLastAwakeDate", .date),
        ("activityStepCounter", .int32),
        ("noiseLevel", .float),
        ("activityLevel", .int32),
        ("activityLevelDate", .date),
        ("activityDistanceTraveled", .float),
        ("activityCaloriesBurn", .float),
        ("longitude", .float),
        ("latitude", .float),
        ("altitude", .float),
        ("hrAlert", .bool),
        ("hrAlertTriggerTop", .int32),
        ("hrAlertTriggerBottom", .int32),
        ("oxygenAlert", .bool),
        ("oxygenAlertTriggerBottom", .int32),
        ("temperatureAlert", .bool),
        ("temperatureAlertTriggerTop", .float),
        ("temperatureAlertTriggerBottom", .float),
        ("humidityAlert", .bool),
        ("humidityAlertTriggerTop", .float),
        ("humidityAlertTriggerBottom", .float),
        ("awakeAlert", .bool),
        ("personAge", .int32),
        ("personHeight", .float),
        ("personWeight", .float),
        ("personGender", .bool),
        ("currentDate", .date),
    ]

    /// Every code the profile defines, 0…43.
    public static let allKnown: [DIoTFeatureCode] = (0..<UInt8(table.count)).map { Self(rawValue: $0) }

    /// Whether the profile defines this code (0…43).
    public var isKnown: Bool { Int(rawValue) < Self.table.count }

    /// The name the reference gives the code (`temperature`, `heartRate`, `oxigen`, …), or
    /// `unknown` for a code above 43.
    public var name: String { isKnown ? Self.table[Int(rawValue)].name : "unknown" }

    /// How its value is encoded.
    public var valueType: ValueType { isKnown ? Self.table[Int(rawValue)].type : .raw }

    /// The name, or `unknown(0x2C)` for a code the profile does not define.
    public var description: String { isKnown ? name : "unknown(0x" + [rawValue].tetherHex.uppercased() + ")" }
}
