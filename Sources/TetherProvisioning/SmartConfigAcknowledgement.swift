/// What a device sends back once it has the credentials, per encoding (§5–§7): how it is built
/// (the device's side) and read (the phone's).
public enum SmartConfigAcknowledgement {
    /// ESP-Touch v1, to the phone's UDP 18266: `[ssidLen + pwdLen + 9] ‖ MAC (6) ‖ IPv4 (4)`.
    public static func espTouchV1(ssidLength: Int, passwordLength: Int, mac: [UInt8], ip: [UInt8]) -> [UInt8] {
        [UInt8(truncatingIfNeeded: ssidLength + passwordLength + 9)] + mac.prefix(6) + ip.prefix(4)
    }

    /// The device's MAC and IPv4 address from an ESP-Touch v1 acknowledgement, when its first
    /// byte matches what the phone sent.
    public static func readESPTouchV1(_ bytes: [UInt8], ssidLength: Int, passwordLength: Int) -> (mac: [UInt8], ip: [UInt8])? {
        guard bytes.count >= 11, bytes[0] == UInt8(truncatingIfNeeded: ssidLength + passwordLength + 9) else { return nil }
        return (Array(bytes[1..<7]), Array(bytes[7..<11]))
    }

    /// ESP-Touch v2, to the app port its head named: at least 7 bytes, the MAC at 1–6 (byte 0
    /// is 0 here; the device's address is the datagram's source).
    public static func espTouchV2(mac: [UInt8]) -> [UInt8] {
        [0] + mac.prefix(6)
    }

    public static func readESPTouchV2(_ bytes: [UInt8]) -> [UInt8]? {
        bytes.count >= 7 ? Array(bytes[1..<7]) : nil
    }

    /// AirKiss: the device broadcasts datagrams carrying the random byte to UDP 10000.
    public static func airKiss(random: UInt8) -> [UInt8] { [random] }

    /// Counts the random byte in what arrives on UDP 10000: more than five occurrences is success.
    public struct AirKissCounter: Sendable {
        public let random: UInt8
        public private(set) var seen = 0

        public init(random: UInt8) { self.random = random }

        /// True once the device has been heard.
        public mutating func add(_ datagram: [UInt8]) -> Bool {
            let random = self.random
            seen += datagram.filter { $0 == random }.count
            return seen > 5
        }
    }
}
