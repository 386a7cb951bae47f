public import TetherCore

/// AirKiss (WeChat; `shared/reference/provisioning.md` §7): lengths of UDP datagrams broadcast to
/// port 10000 carry the password, a random byte and the SSID. Pure values.
public enum AirKiss {
    public static let port = 10000

    /// One full transmission: the leading code 50 times, the magic code 20 times, then the prefix
    /// and every sequence 15 times. `random` (0…126) is the byte the device echoes in its
    /// acknowledgement.
    public static func lengths(_ credentials: SmartConfigCredentials, random: UInt8) throws(TetherError) -> [Int] {
        guard random <= 126 else { throw TetherError(.invalidArgument, "the AirKiss random byte is 0 to 126") }
        let leading = Array(repeating: [1, 2, 3, 4], count: 50).flatMap { $0 }
        let magic = Array(repeating: magicCode(credentials), count: 20).flatMap { $0 }
        let body = prefixCode(credentials) + sequences(credentials, random: random).flatMap { $0 }
        return leading + magic + Array(repeating: body, count: 15).flatMap { $0 }
    }

    /// `L = ssidLen + pwdLen + 1` and the SSID's CRC, a nibble at a time.
    public static func magicCode(_ credentials: SmartConfigCredentials) -> [Int] {
        let length = credentials.ssid.count + credentials.password.count + 1
        let crc = Int(CRC8.maxim(credentials.ssid))
        let high = length >> 4 == 0 ? 0x08 : length >> 4
        return [high, 0x10 | length & 0x0F, 0x20 | crc >> 4, 0x30 | crc & 0x0F]
    }

    /// The password's length and its CRC.
    public static func prefixCode(_ credentials: SmartConfigCredentials) -> [Int] {
        let length = credentials.password.count
        let crc = Int(CRC8.maxim([UInt8(length)]))
        return [0x40 | length >> 4, 0x50 | length & 0x0F, 0x60 | crc >> 4, 0x70 | crc & 0x0F]
    }

    /// password ‖ random ‖ SSID in 4-byte chunks: `0x80 | crc8([i] ‖ chunk)`, `0x80 | i`, then
    /// `0x100 | byte` for each byte.
    public static func sequences(_ credentials: SmartConfigCredentials, random: UInt8) -> [[Int]] {
        let data = credentials.password + [random] + credentials.ssid
        return stride(from: 0, to: data.count, by: 4).enumerated().map { index, start in
            let chunk = Array(data[start..<min(start + 4, data.count)])
            return [0x80 | Int(CRC8.maxim([UInt8(index)] + chunk)), 0x80 | index] + chunk.map { 0x100 | Int($0) }
        }
    }
}

/// The device's side of AirKiss: rebuilds password, random byte and SSID from sniffed frame
/// lengths, learning the constant frame overhead from the leading code (1, 2, 3, 4).
public struct AirKissDecoder: Sendable {
    public struct Result: Sendable, Hashable {
        public var ssid: [UInt8]
        public var password: [UInt8]
        /// Echoed in the acknowledgement broadcast (UDP 10000).
        public var random: UInt8
    }

    public private(set) var offset: Int?
    private var recent: [Int] = []
    private var group: [Int] = []
    /// `L`: the length of password ‖ random ‖ SSID.
    private var magic: Int?
    private var ssidCRC: UInt8?
    private var prefix: (length: Int, crc: UInt8)?
    /// The sequence being read: its CRC, index and bytes so far.
    private var current: (crc: Int, index: Int?, bytes: [UInt8])?
    private var chunks: [Int: [UInt8]] = [:]

    public init() {}

    public mutating func feed(frameLength length: Int) -> Result? {
        guard let offset else {
            recent.append(length)
            if recent.count > 4 { recent.removeFirst() }
            if recent.count == 4, zip(recent, recent.dropFirst()).allSatisfy({ $1 - $0 == 1 }), recent[0] - 1 >= 0 {
                offset = recent[0] - 1
            }
            return nil
        }
        let value = length - offset
        switch value {
        case 0..<0x80:
            // Magic (fields 0–3) and prefix (fields 4–7) count only as four in a row, so that the
            // leading code (1, 2, 3, 4) is not taken for a magic field.
            finishSequence()
            let field = value >> 4
            group = field & 3 == group.count ? group + [value & 0x0F] : (field & 3 == 0 ? [value & 0x0F] : [])
            guard group.count == 4 else { return nil }
            if field == 3 {
                magic = (group[0] == 0x08 ? 0 : group[0]) << 4 | group[1]
                ssidCRC = UInt8(group[2] << 4 | group[3])
            } else if field == 7 {
                prefix = (length: group[0] << 4 | group[1], crc: UInt8(group[2] << 4 | group[3]))
            }
            group = []
        case 0x80..<0x100:
            if var sequence = current, sequence.index == nil, sequence.bytes.isEmpty {
                sequence.index = value & 0x7F
                current = sequence
            } else {
                finishSequence()
                current = (value & 0x7F, nil, [])
            }
        case 0x100..<0x200:
            guard var sequence = current, sequence.index != nil, sequence.bytes.count < 4 else { return nil }
            sequence.bytes.append(UInt8(value & 0xFF))
            current = sequence
            if sequence.bytes.count == 4 { finishSequence() }
        default:
            finishSequence()
        }
        return result()
    }

    private mutating func finishSequence() {
        defer { current = nil }
        guard let sequence = current, let index = sequence.index, !sequence.bytes.isEmpty else { return }
        guard Int(CRC8.maxim([UInt8(index)] + sequence.bytes)) & 0x7F == sequence.crc else { return }
        chunks[index] = sequence.bytes
    }

    private mutating func result() -> Result? {
        guard let total = magic, let ssidCRC, let prefix else { return nil }
        let passwordLength = prefix.length
        guard CRC8.maxim([UInt8(passwordLength)]) == prefix.crc, total > passwordLength else { return nil }
        let count = (total + 3) / 4
        // A short last chunk may still be on its way.
        if let last = current, last.index == count - 1, last.bytes.count == total - 4 * (count - 1) { finishSequence() }
        guard (0..<count).allSatisfy({ chunks[$0] != nil }) else { return nil }
        let data = (0..<count).flatMap { chunks[$0]! }
        guard data.count == total else { return nil }
        let ssid = Array(data[(passwordLength + 1)...])
        guard CRC8.maxim(ssid) == ssidCRC else { return nil }
        return Result(ssid: ssid, password: Array(data[..<passwordLength]), random: data[passwordLength])
    }
}
