public import TetherCore

/// The battery-use counters an LW003-V3 keeps (command `0x09`, reset with `0x0A`): what the
/// battery was spent on since the last reset.
public struct LW003BatteryUsage: Hashable, Sendable {
    /// How many times the device advertised.
    public var advertisingCount: UInt32
    /// How long it scanned for beacons, in seconds.
    public var scanningSeconds: UInt32
    /// How long it transmitted over LoRaWAN, in milliseconds.
    public var loRaTransmitMilliseconds: UInt32

    /// Counters with these values.
    public init(advertisingCount: UInt32, scanningSeconds: UInt32, loRaTransmitMilliseconds: UInt32) {
        self.advertisingCount = advertisingCount
        self.scanningSeconds = scanningSeconds
        self.loRaTransmitMilliseconds = loRaTransmitMilliseconds
    }

    /// Decodes the 12-byte value of a read reply: 3 × u32 BE.
    public init(payload: [UInt8]) throws(TetherError) {
        guard payload.count == 12 else {
            throw TetherError(.malformedFrame, "LW003 battery-use counters of \(payload.count) bytes, not 12")
        }
        let counter = { (index: Int) in UInt32(truncatingIfNeeded: BluetoothProfileBytes.bigEndian(payload[...], at: index * 4, count: 4) ?? 0) }
        self.init(advertisingCount: counter(0), scanningSeconds: counter(1), loRaTransmitMilliseconds: counter(2))
    }

    /// The 12-byte value a device replies with.
    public var payload: [UInt8] {
        [advertisingCount, scanningSeconds, loRaTransmitMilliseconds].flatMap { BluetoothProfileBytes.bigEndianBytes(UInt64($0), count: 4) }
    }

    /// `ED 00 09 0C <12 bytes>`: the reply to `readRequest(.batteryUsage)`.
    public var readReply: LW003Frame {
        LW003Frame(unchecked: .read, command: .batteryUsage, payload: payload)
    }
}
