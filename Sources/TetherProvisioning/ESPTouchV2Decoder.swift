public import TetherCore

/// The device's side of ESP-Touch v2: rebuilds the head and every sequence from sniffed frame
/// lengths (the constant frame overhead learnt from the sync code), checks each sequence's CRC,
/// and decrypts with the device's AES key when the head says the data is encrypted.
public struct ESPTouchV2Decoder: Sendable {
    public struct Result: Sendable, Hashable {
        public var ssid: [UInt8]
        public var password: [UInt8]
        public var reserved: [UInt8]
        public var bssidCRC: UInt8
        /// Which of ``ESPTouchV2/appPorts`` to acknowledge to.
        public var portMark: Int
        public var ipv4: Bool
        public var encrypted: Bool
    }

    private let aesKey: [UInt8]?
    public private(set) var offset: Int?
    private var recent: [Int] = []
    /// The slices seen per sequence (-1: the head), by bit index.
    private var slices: [Int: [Int: Int]] = [:]
    private var current = -1
    /// A decryption failure is final: the phone used another key.
    public private(set) var failure: TetherError?

    /// - Parameter aesKey: the device's 16-byte key, for phones that encrypt.
    public init(aesKey: [UInt8]? = nil) {
        self.aesKey = aesKey
    }

    public mutating func feed(frameLength length: Int) -> Result? {
        recent.append(length)
        if recent.count > 4 { recent.removeFirst() }
        // sync, count, sync, count: the head's slices follow.
        if recent.count == 4, recent[0] == recent[2], recent[1] == recent[3], recent[1] - recent[0] > ESPTouchV2.countBase - ESPTouchV2.sync,
            recent[1] - recent[0] < ESPTouchV2.countBase - ESPTouchV2.sync + 64
        {
            offset = recent[0] - ESPTouchV2.sync
            current = -1
            return nil
        }
        guard let offset else { return nil }
        let value = length - offset
        switch value {
        case 128..<192:
            current = value - 128
        case 0..<1024 where value & 0x40 != 0:
            slices[current, default: [:]][value >> 7] = value & 0x3F
            return result()
        default:
            break
        }
        return nil
    }

    /// The six bytes of a sequence, when all its slices are in and its CRC matches.
    private func sequence(_ index: Int, eightBit: Bool) -> [UInt8]? {
        guard let seen = slices[index], (0..<8).allSatisfy({ seen[$0] != nil }) else { return nil }
        let bits = eightBit ? 8 : 7
        let bytes = (0..<6).map { k in (0..<bits).reduce(UInt8(0)) { $0 | UInt8((seen[$1]! >> (5 - k)) & 1) << $1 } }
        if eightBit {
            return index == -1 || CRC8.maxim(bytes[0..<5]) == bytes[5] ? bytes : nil
        }
        return Int(CRC8.maxim(bytes)) & 0x3F == seen[7]! ? bytes : nil
    }

    private mutating func result() -> Result? {
        guard failure == nil, let head = sequence(-1, eightBit: true), CRC8.maxim(head[0..<5]) == head[5] else { return nil }
        let (ssidLength, passwordLength, reservedLength) = (Int(head[0] & 0x7F), Int(head[1] & 0x7F), Int(head[2] & 0x7F))
        let encrypted = (head[4] >> 1) & 0x03 == 1
        var parts: [(length: Int, eightBit: Bool)] = []
        if encrypted {
            parts.append(((passwordLength + reservedLength) / 16 * 16 + 16, true))
        } else if head[1] & 0x80 == 0 && head[2] & 0x80 == 0 {
            parts.append((passwordLength + reservedLength, false))
        } else {
            parts.append((passwordLength, head[1] & 0x80 != 0))
            parts.append((reservedLength, head[2] & 0x80 != 0))
        }
        parts.append((ssidLength, head[0] & 0x80 != 0))
        var data: [[UInt8]] = []
        var index = 0
        for part in parts {
            let unit = part.eightBit ? 5 : 6
            var bytes: [UInt8] = []
            for _ in 0..<((part.length + unit - 1) / unit) {
                guard let sequence = sequence(index, eightBit: part.eightBit) else { return nil }
                bytes += sequence.prefix(unit)
                index += 1
            }
            data.append(Array(bytes.prefix(part.length)))
        }
        var secret = data.dropLast().flatMap { $0 }
        if encrypted {
            guard let aesKey else {
                failure = TetherError(.decryptionFailed, "the phone encrypted the data and this device has no key")
                return nil
            }
            do throws(TetherError) {
                secret = try ESPTouchV2.decrypt(secret, key: aesKey)
            } catch {
                failure = error
                return nil
            }
            guard secret.count == passwordLength + reservedLength else { return nil }
        }
        return Result(
            ssid: data.last ?? [], password: Array(secret.prefix(passwordLength)), reserved: Array(secret.dropFirst(passwordLength)), bssidCRC: head[3],
            portMark: Int(head[4] >> 3 & 0x03), ipv4: head[4] & 1 == 1, encrypted: encrypted)
    }
}
