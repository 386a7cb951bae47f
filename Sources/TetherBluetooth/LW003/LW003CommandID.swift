import TetherCore

/// The command byte of an LW003-V3 frame on `AA02` (ble-profiles.md A4). Unknown values are kept,
/// not refused, so that a central can pass on commands this table does not name.
///
/// The same byte means different things on different characteristics: `0x01` is "power off" on
/// `AA02` but the login on `AA00`, and the disconnect reason on `AA01`; dispatch on the
/// characteristic first.
public struct LW003CommandID: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// Write, no payload: the device shuts down (then disconnect reason `03`).
    public static let powerOff = Self(rawValue: 0x01)
    /// Write, no payload: the device restarts.
    public static let restart = Self(rawValue: 0x02)
    /// Write, no payload: factory reset (then disconnect reason `04`).
    public static let factoryReset = Self(rawValue: 0x03)
    /// Read: battery voltage, u16 BE millivolts.
    public static let batteryVoltage = Self(rawValue: 0x06)
    /// Read: production-test (PCBA) status, 1 undecoded byte.
    public static let productionTestStatus = Self(rawValue: 0x07)
    /// Read: self-test fault flags, undecoded bytes.
    public static let selfTestFaults = Self(rawValue: 0x08)
    /// Read: the battery-use counters (``LW003BatteryUsage``).
    public static let batteryUsage = Self(rawValue: 0x09)
    /// Write, no payload: reset the battery-use counters.
    public static let resetBatteryUsage = Self(rawValue: 0x0A)
    /// Write: the device clock, u32 BE UTC seconds.
    public static let deviceTime = Self(rawValue: 0x0B)
    /// Read/write: the time zone, int8 half-hours (−24…+28).
    public static let timeZone = Self(rawValue: 0x0C)
    /// Read/write: the low-battery threshold, `00`…`04` = 10…50 %.
    public static let lowBatteryThreshold = Self(rawValue: 0x0D)
    /// Read/write: the low-power payload, `01` on / `00` off.
    public static let lowPowerPayload = Self(rawValue: 0x0E)
    /// Read/write: power-off by the button, `01` on / `00` off.
    public static let buttonPowerOff = Self(rawValue: 0x0F)
    /// Read/write: the shutdown payload, `01` on / `00` off.
    public static let shutdownPayload = Self(rawValue: 0x10)
    /// Read/write: the BLE event payload, `01` on / `00` off.
    public static let bleEventPayload = Self(rawValue: 0x11)
    /// Read/write: the mode after power is restored, `00` off, `01` on, `02` last mode.
    public static let powerRestoredMode = Self(rawValue: 0x12)
    /// Read/write: resume after a power loss, `01` on / `00` off.
    public static let resumeAfterPowerLoss = Self(rawValue: 0x13)
    /// Read/write: temperature and humidity sampling, `01` on / `00` off.
    public static let climateSampling = Self(rawValue: 0x14)
    /// Read/write: the temperature and humidity sample interval, 1…10.
    public static let climateSampleInterval = Self(rawValue: 0x15)
    /// Read/write: the heartbeat interval, u16 BE minutes (1…14400).
    public static let heartbeatInterval = Self(rawValue: 0x16)
    /// Read/write: the LED mask (bit 0 low battery, bit 1 charging, bit 2 advertising).
    public static let ledIndicator = Self(rawValue: 0x17)
    /// Read: the chip's MAC address, 6 bytes.
    public static let chipMAC = Self(rawValue: 0x18)
    /// Write: start the upload of the stored data of the last N days (u16 BE), on `AA04`.
    public static let startStorageUpload = Self(rawValue: 0x20)
    /// Write, no payload: erase the stored data.
    public static let eraseStorage = Self(rawValue: 0x21)
    /// Write: pause (`00`) or resume (`01`) the upload.
    public static let pauseStorageUpload = Self(rawValue: 0x22)
    /// Read/write: the advertising name, ASCII, at most 16 bytes.
    public static let advertisingName = Self(rawValue: 0x30)
    /// Read/write: the advertising interval, 1 byte × 100 ms (1…100).
    public static let advertisingInterval = Self(rawValue: 0x31)
    /// Read/write: the advertising TX power, int8 dBm.
    public static let advertisingTxPower = Self(rawValue: 0x32)
    /// Read/write: the advertising timeout, 1 byte minutes (1…60).
    public static let advertisingTimeout = Self(rawValue: 0x33)
    /// Read/write: the login password, 8 ASCII bytes (a write is followed by disconnect reason `05`).
    public static let password = Self(rawValue: 0x34)
    /// Read/write: whether a password is required, `01` yes / `00` no.
    public static let passwordRequired = Self(rawValue: 0x35)
    /// Read/write with multi-packet `EE` frames: the advertising-name filter list (``LW003NameFilterList``).
    public static let nameFilterList = Self(rawValue: 0x99)

    private static let names: [UInt8: String] = [
        0x01: "powerOff", 0x02: "restart", 0x03: "factoryReset", 0x06: "batteryVoltage", 0x07: "productionTestStatus", 0x08: "selfTestFaults",
        0x09: "batteryUsage", 0x0A: "resetBatteryUsage", 0x0B: "deviceTime", 0x0C: "timeZone", 0x0D: "lowBatteryThreshold", 0x0E: "lowPowerPayload",
        0x0F: "buttonPowerOff", 0x10: "shutdownPayload", 0x11: "bleEventPayload", 0x12: "powerRestoredMode", 0x13: "resumeAfterPowerLoss",
        0x14: "climateSampling", 0x15: "climateSampleInterval", 0x16: "heartbeatInterval", 0x17: "ledIndicator", 0x18: "chipMAC",
        0x20: "startStorageUpload", 0x21: "eraseStorage", 0x22: "pauseStorageUpload", 0x30: "advertisingName", 0x31: "advertisingInterval",
        0x32: "advertisingTxPower", 0x33: "advertisingTimeout", 0x34: "password", 0x35: "passwordRequired", 0x99: "nameFilterList",
    ]

    /// The name of a command this table knows (`batteryVoltage`), else `0x` and its hex value.
    public var description: String {
        Self.names[rawValue] ?? "0x" + [rawValue].tetherHex.uppercased()
    }
}
