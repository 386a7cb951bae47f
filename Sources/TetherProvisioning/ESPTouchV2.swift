import Crypto
import Foundation
import _CryptoExtras
public import TetherCore

/// ESP-Touch v2 (`shared/reference/provisioning.md` §6): a 6-byte head and the password, custom
/// data and SSID cut into sequences of six bytes, each sent as eight datagram lengths (a bit slice
/// of the six bytes each), optionally AES-encrypted. Pure values.
public enum ESPTouchV2 {
    public static let port = 7001
    /// The app binds the first free one of these and says which in the head; the device answers there.
    public static let appPorts = [18266, 28266, 38266, 48266]
    static let sync = 1048
    static let countBase = 1072

    /// What the phone sends besides the credentials.
    public struct Options: Sendable, Hashable {
        /// Custom data for the device (up to 64 bytes).
        public var reserved: [UInt8]
        /// A 16-byte key: the password and custom data travel AES-128-CBC encrypted (security 1).
        public var aesKey: [UInt8]?
        /// Which of ``ESPTouchV2/appPorts`` the app listens on (0–3).
        public var portMark: Int
        public var ipv4: Bool

        public init(reserved: [UInt8] = [], aesKey: [UInt8]? = nil, portMark: Int = 0, ipv4: Bool = true) {
            self.reserved = reserved
            self.aesKey = aesKey
            self.portMark = portMark
            self.ipv4 = ipv4
        }
    }

    /// One part of the data: 7-bit bytes six to a sequence, or 8-bit bytes five to a sequence with
    /// their CRC as the sixth.
    struct Part: Equatable {
        var bytes: [UInt8]
        var eightBit: Bool
        var unit: Int { eightBit ? 5 : 6 }
        var padding: Int { bytes.isEmpty ? 0 : (unit - bytes.count % unit) % unit }
    }

    static func isASCII(_ bytes: [UInt8]) -> Bool { bytes.allSatisfy { $0 < 0x80 } }

    static func check(_ credentials: SmartConfigCredentials, _ options: Options) throws(TetherError) {
        guard options.reserved.count <= 64 else { throw TetherError(.invalidArgument, "ESP-Touch v2 custom data is at most 64 bytes") }
        guard (0...3).contains(options.portMark) else { throw TetherError(.invalidArgument, "the app port mark is 0 to 3") }
        if let key = options.aesKey, key.count != 16 { throw TetherError(.invalidArgument, "the ESP-Touch v2 AES key is 16 bytes") }
    }

    static func encrypts(_ credentials: SmartConfigCredentials, _ options: Options) -> Bool {
        options.aesKey != nil && !(credentials.password.isEmpty && options.reserved.isEmpty)
    }

    /// The head: lengths (bit 7: a byte above 127), the BSSID's CRC, the flag, their CRC.
    public static func head(_ credentials: SmartConfigCredentials, options: Options = .init()) throws(TetherError) -> [UInt8] {
        try check(credentials, options)
        func length(_ bytes: [UInt8]) -> UInt8 { UInt8(bytes.count) | (isASCII(bytes) ? 0 : 0x80) }
        let security: UInt8 = encrypts(credentials, options) ? 1 : 0
        let flag = (options.ipv4 ? 1 : 0) | security << 1 | UInt8(options.portMark) << 3
        let head = [length(credentials.ssid), length(credentials.password), length(options.reserved), CRC8.maxim(credentials.bssid), flag]
        return head + [CRC8.maxim(head)]
    }

    /// The parts after the head, in order, before padding.
    static func parts(_ credentials: SmartConfigCredentials, _ options: Options) throws(TetherError) -> [Part] {
        let (password, reserved) = (credentials.password, options.reserved)
        var parts: [Part] = []
        if let key = options.aesKey, encrypts(credentials, options) {
            parts.append(Part(bytes: try encrypt(password + reserved, key: key), eightBit: true))
        } else if isASCII(password) && isASCII(reserved) {
            parts.append(Part(bytes: password + reserved, eightBit: false))
        } else {
            parts.append(Part(bytes: password, eightBit: !isASCII(password)))
            parts.append(Part(bytes: reserved, eightBit: !isASCII(reserved)))
        }
        parts.append(Part(bytes: credentials.ssid, eightBit: !isASCII(credentials.ssid)))
        return parts
    }

    /// How many padding bytes the encoder draws (password and custom data first, then the SSID).
    public static func paddingCount(_ credentials: SmartConfigCredentials, options: Options = .init()) throws(TetherError) -> Int {
        try parts(credentials, options).reduce(0) { $0 + $1.padding }
    }

    /// One cycle of datagram lengths (the app loops it). `padding` (0…127 each, ``paddingCount(_:options:)``
    /// of them) fills each part to whole sequences; nil draws it at random, as the apps do.
    public static func packets(_ credentials: SmartConfigCredentials, options: Options = .init(), padding: [UInt8]? = nil) throws(TetherError) -> [Int] {
        let head = try self.head(credentials, options: options)
        let parts = try self.parts(credentials, options)
        let needed = parts.reduce(0) { $0 + $1.padding }
        var generator = SystemRandomNumberGenerator()
        let padding = padding ?? (0..<needed).map { _ in UInt8.random(in: 0...126, using: &generator) }
        guard padding.count == needed, padding.allSatisfy({ $0 < 0x80 }) else {
            throw TetherError(.invalidArgument, "ESP-Touch v2 needs \(needed) padding bytes of 0 to 127 here")
        }
        var sequences: [(bytes: [UInt8], eightBit: Bool)] = []
        var drawn = padding[...]
        for part in parts where !part.bytes.isEmpty {
            let padded = part.bytes + drawn.prefix(part.padding)
            drawn = drawn.dropFirst(part.padding)
            for start in stride(from: 0, to: padded.count, by: part.unit) {
                let chunk = Array(padded[start..<(start + part.unit)])
                sequences.append((part.eightBit ? chunk + [CRC8.maxim(chunk)] : chunk, part.eightBit))
            }
        }
        let count = countBase + sequences.count
        var packets = [sync, count, sync, count] + slices(head, eightBit: true)
        for (n, sequence) in sequences.enumerated() {
            packets += [128 + n, 128 + n, 128 + n] + slices(sequence.bytes, eightBit: sequence.eightBit)
        }
        return packets
    }

    /// Eight lengths: bit `j` of each of the six bytes (byte 0 at bit 5), or for a 7-bit sequence
    /// seven slices and the CRC's low six bits.
    static func slices(_ bytes: [UInt8], eightBit: Bool) -> [Int] {
        var lengths = (0..<(eightBit ? 8 : 7)).map { j in
            var d = 0
            for (k, byte) in bytes.enumerated() { d |= Int(byte >> j & 1) << (5 - k) }
            return j << 7 | 0x40 | d
        }
        if !eightBit { lengths.append(7 << 7 | 0x40 | Int(CRC8.maxim(bytes)) & 0x3F) }
        return lengths
    }

    static func encrypt(_ plaintext: [UInt8], key: [UInt8]) throws(TetherError) -> [UInt8] {
        do {
            let iv = try AES._CBC.IV(ivBytes: [UInt8](repeating: 0, count: 16))
            return Array(try AES._CBC.encrypt(plaintext, using: SymmetricKey(data: key), iv: iv))
        } catch {
            throw TetherError(.invalidArgument, "AES-CBC failed: \(error)")
        }
    }

    static func decrypt(_ ciphertext: [UInt8], key: [UInt8]) throws(TetherError) -> [UInt8] {
        do {
            let iv = try AES._CBC.IV(ivBytes: [UInt8](repeating: 0, count: 16))
            return Array(try AES._CBC.decrypt(ciphertext, using: SymmetricKey(data: key), iv: iv))
        } catch {
            throw TetherError(.decryptionFailed, "the ESP-Touch v2 data does not decrypt with the key")
        }
    }
}
