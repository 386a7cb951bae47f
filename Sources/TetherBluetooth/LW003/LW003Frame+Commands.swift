public import TetherCore

// The typed requests a central writes to `AA02`, the replies a device sends back, and the values
// read from a reply's payload (ble-profiles.md A4).
extension LW003Frame {
    /// `ED 00 <cmd> 00`: asks for the current value of `command`.
    public static func readRequest(_ command: LW003CommandID) -> LW003Frame {
        LW003Frame(unchecked: .read, command: command, payload: [])
    }

    /// `ED 01 <cmd> LEN <value>`: sets `command` to `value`.
    public static func writeRequest(_ command: LW003CommandID, value: [UInt8] = []) throws(TetherError) -> LW003Frame {
        try LW003Frame(flag: .write, command: command, payload: value)
    }

    /// `ED 01 01 00`: the device shuts down (it then sends disconnect reason `03`).
    public static let powerOff = LW003Frame(unchecked: .write, command: .powerOff, payload: [])
    /// `ED 01 02 00`: the device restarts.
    public static let restart = LW003Frame(unchecked: .write, command: .restart, payload: [])
    /// `ED 01 03 00`: factory reset (the device then sends disconnect reason `04`).
    public static let factoryReset = LW003Frame(unchecked: .write, command: .factoryReset, payload: [])
    /// `ED 01 0A 00`: resets the battery-use counters.
    public static let resetBatteryUsage = LW003Frame(unchecked: .write, command: .resetBatteryUsage, payload: [])
    /// `ED 01 21 00`: erases the stored scan data.
    public static let eraseStorage = LW003Frame(unchecked: .write, command: .eraseStorage, payload: [])

    /// `ED 01 0B 04 <u32 BE>`: sets the device clock to a UTC time in Unix seconds.
    public static func setDeviceTime(unixSeconds: UInt32) -> LW003Frame {
        LW003Frame(unchecked: .write, command: .deviceTime, payload: BluetoothProfileBytes.bigEndianBytes(UInt64(unixSeconds), count: 4))
    }

    /// The time zones a device accepts, in half-hours: UTC−12 … UTC+14.
    public static let timeZoneRange: ClosedRange<Int8> = -24...28

    /// `ED 01 0C 01 <int8>`: sets the time zone in half-hour steps (`-11` = UTC−05:30).
    ///
    /// - Throws: `TetherError(.invalidArgument)` outside −24…+28.
    public static func setTimeZone(halfHours: Int8) throws(TetherError) -> LW003Frame {
        guard timeZoneRange.contains(halfHours) else {
            throw TetherError(.invalidArgument, "an LW003 time zone of \(halfHours) half-hours is outside -24...28")
        }
        return LW003Frame(unchecked: .write, command: .timeZone, payload: [UInt8(bitPattern: halfHours)])
    }

    /// `ED 01 20 02 <u16 BE>`: starts the upload of the records stored in the last `days` days
    /// (65535 = all of them) as ``LW003StorageFrame``s on `AA04`; enable notify there first.
    ///
    /// - Throws: `TetherError(.invalidArgument)` for 0 days.
    public static func startStorageUpload(days: UInt16) throws(TetherError) -> LW003Frame {
        guard days >= 1 else { throw TetherError(.invalidArgument, "an LW003 storage upload needs at least 1 day") }
        return LW003Frame(unchecked: .write, command: .startStorageUpload, payload: BluetoothProfileBytes.bigEndianBytes(UInt64(days), count: 2))
    }

    /// `ED 01 22 01 00` pauses the upload, `ED 01 22 01 01` resumes it where it stopped.
    public static func setStorageUploadPaused(_ paused: Bool) -> LW003Frame {
        LW003Frame(unchecked: .write, command: .pauseStorageUpload, payload: [paused ? 0x00 : 0x01])
    }

    /// `ED 01 <cmd> 01 <result>`: the device's answer to a write, `01` when it took the value.
    public static func writeResult(_ command: LW003CommandID, success: Bool) -> LW003Frame {
        LW003Frame(unchecked: .write, command: command, payload: [success ? 0x01 : 0x00])
    }

    /// `ED 00 <cmd> LEN <value>`: the device's answer to a read.
    public static func readReply(_ command: LW003CommandID, value: [UInt8]) throws(TetherError) -> LW003Frame {
        try LW003Frame(flag: .read, command: command, payload: value)
    }

    /// For a write reply (`ED 01 <cmd> 01 <result>`): whether the device took the value; nil for
    /// any other shape. A write request of one byte has the same shape, so ask only replies.
    public var writeSucceeded: Bool? {
        guard flag == .write, payload.count == 1 else { return nil }
        return payload[0] == 0x01
    }

    /// The whole payload as one big-endian unsigned integer (1 to 8 bytes), the form of most
    /// numeric values.
    public func unsignedValue() throws(TetherError) -> UInt64 {
        guard (1...8).contains(payload.count), let value = BluetoothProfileBytes.bigEndian(payload[...], at: 0, count: payload.count) else {
            throw TetherError(.malformedFrame, "an LW003 \(command) value of \(payload.count) bytes is not a 1 to 8 byte integer")
        }
        return value
    }

    /// For a `batteryVoltage` read reply: the voltage in millivolts.
    public func batteryMillivolts() throws(TetherError) -> UInt16 {
        let value = try unsignedValue()
        guard let millivolts = UInt16(exactly: value) else {
            throw TetherError(.malformedFrame, "an LW003 battery voltage of \(value) mV is out of range")
        }
        return millivolts
    }

    /// For a `timeZone` read reply or write request: the time zone in half-hours.
    public func timeZoneHalfHours() throws(TetherError) -> Int8 {
        guard payload.count == 1 else {
            throw TetherError(.malformedFrame, "an LW003 time zone of \(payload.count) bytes, not 1")
        }
        return Int8(bitPattern: payload[0])
    }

    /// For a `batteryUsage` read reply: the three counters.
    public func batteryUsage() throws(TetherError) -> LW003BatteryUsage {
        try LW003BatteryUsage(payload: payload)
    }

    /// For an `advertisingName` read reply (or write request): the name as text.
    public func textValue() throws(TetherError) -> String {
        guard payload.allSatisfy({ $0 < 0x80 }) else {
            throw TetherError(.malformedFrame, "an LW003 \(command) value is not ASCII text")
        }
        return String(decoding: payload, as: UTF8.self)
    }
}
