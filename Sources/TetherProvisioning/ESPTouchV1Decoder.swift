/// The device's side of ESP-Touch v1: rebuilds the data from the frame lengths it sniffs. Frames
/// are longer than the phone's UDP payloads by a constant that depends on the access point
/// (headers, encryption); the decoder learns it from the guide code. Lengths that fit nothing
/// (other traffic) are skipped; a data code whose CRC does not match is dropped.
public struct ESPTouchV1Decoder: Sendable {
    /// What the phone sent.
    public struct Result: Sendable, Hashable {
        /// Nil when the phone did not send it (legacy apps, visible networks): find the network
        /// whose SSID has ``ssidCRC``.
        public var ssid: [UInt8]?
        public var ssidCRC: UInt8
        public var password: [UInt8]
        public var bssid: [UInt8]
        /// Where to send the acknowledgement (UDP 18266).
        public var phoneIP: [UInt8]
    }

    private let expectsSSID: Bool
    /// Frame length minus the phone's payload length, once learnt.
    public private(set) var offset: Int?
    private var window: [Int] = []
    private var bytes: [Int: UInt8] = [:]

    /// - Parameter expectsSSID: whether the phone sends the SSID (every current app does).
    public init(expectsSSID: Bool = true) {
        self.expectsSSID = expectsSSID
    }

    /// Takes the next sniffed frame length; returns what the phone sent once all of it has been
    /// seen and checks out.
    public mutating func feed(frameLength length: Int) -> Result? {
        window.append(length)
        if window.count > 4 { window.removeFirst() }
        guard let offset else {
            // The guide code: four lengths going down by one from 515.
            if window.count == 4, window[0] >= ESPTouchV1.guide[0], zip(window, window.dropFirst()).allSatisfy({ $0 - $1 == 1 }) {
                offset = window[0] - ESPTouchV1.guide[0]
                window.removeAll()
            }
            return nil
        }
        guard window.count >= 3 else { return nil }
        let values = window.suffix(3).map { $0 - offset - ESPTouchV1.extraLength }
        guard (0x100..<0x180).contains(values[1]), (0..<0x100).contains(values[0]), (0..<0x100).contains(values[2]) else { return nil }
        let index = values[1] & 0x7F
        let byte = UInt8((values[0] & 0x0F) << 4 | values[2] & 0x0F)
        let crc = UInt8((values[0] & 0xF0) | values[2] >> 4)
        guard CRC8.maxim([byte, UInt8(index)]) == crc else { return nil }
        bytes[index] = byte
        window.removeAll()
        return result()
    }

    private func result() -> Result? {
        guard let total = bytes[0].map(Int.init), let passwordLength = bytes[1].map(Int.init), total >= 9 + passwordLength else { return nil }
        let ssidLength = total - 9 - passwordLength
        let bssidStart = expectsSSID ? total : 9 + passwordLength
        guard (0..<(bssidStart + 6)).allSatisfy({ bytes[$0] != nil }) else { return nil }
        let all = (0..<(bssidStart + 6)).map { bytes[$0]! }
        let ip = Array(all[5..<9])
        let password = Array(all[9..<(9 + passwordLength)])
        let bssid = Array(all[bssidStart...])
        guard CRC8.maxim(bssid) == all[3] else { return nil }
        guard expectsSSID else { return Result(ssid: nil, ssidCRC: all[2], password: password, bssid: bssid, phoneIP: ip) }
        let ssid = Array(all[(9 + passwordLength)..<(9 + passwordLength + ssidLength)])
        guard CRC8.maxim(ssid) == all[2], (Array(all[0..<4]) + ip + password + ssid).reduce(0, ^) == all[4] else { return nil }
        return Result(ssid: ssid, ssidCRC: all[2], password: password, bssid: bssid, phoneIP: ip)
    }
}
