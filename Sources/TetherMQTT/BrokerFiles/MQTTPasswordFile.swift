import Crypto
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A password file as `mosquitto_passwd` writes it: `user:$7$ITERATIONS$SALT$HASH`
/// (PBKDF2-HMAC-SHA512, mosquitto's default since 2.0) or `user:$6$SALT$HASH` (SHA-512 of the
/// password and the salt, mosquitto 1.6), salt and hash in base64. Plain-text passwords are
/// refused: `mosquitto_passwd -U FILE` (or `tether mqtt passwd`) hashes them.
public struct MQTTPasswordFile: Sendable, Equatable {
    /// A stored hash.
    public enum Hash: Sendable, Equatable {
        case pbkdf2SHA512(iterations: Int, salt: [UInt8], hash: [UInt8])
        case sha512(salt: [UInt8], hash: [UInt8])

        /// Whether `password` is the one hashed, compared in time independent of where it differs.
        public func verify(_ password: [UInt8]) -> Bool {
            switch self {
            case .pbkdf2SHA512(let iterations, let salt, let hash):
                return MQTTPasswordFile.constantTimeEquals(
                    MQTTPasswordFile.pbkdf2SHA512(password: password, salt: salt, iterations: iterations, length: hash.count), hash)
            case .sha512(let salt, let hash):
                return MQTTPasswordFile.constantTimeEquals(Array(SHA512.hash(data: password + salt)), hash)
            }
        }

        /// The text after `user:`.
        public var encoded: String {
            switch self {
            case .pbkdf2SHA512(let iterations, let salt, let hash):
                return "$7$\(iterations)$\(Data(salt).base64EncodedString())$\(Data(hash).base64EncodedString())"
            case .sha512(let salt, let hash):
                return "$6$\(Data(salt).base64EncodedString())$\(Data(hash).base64EncodedString())"
            }
        }
    }

    /// Hashes by user name.
    public private(set) var users: [String: Hash] = [:]
    /// User names in file order, for writing the file back.
    public private(set) var order: [String] = []

    public init() {}

    /// Reads the file at `path`.
    public static func load(path: String) throws(MQTTError) -> MQTTPasswordFile {
        try MQTTPasswordFile(parsing: try BrokerFileText.read(path), name: path)
    }

    /// Parses the text of a password file; `name` is used in error messages.
    public init(parsing text: String, name: String = "password file") throws(MQTTError) {
        for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = String(raw).trimmingASCIIWhitespace
            guard !line.isEmpty, !line.hasPrefix("#") else { continue }
            func fail(_ message: String) -> MQTTError { MQTTError(.invalidConfiguration, "\(name):\(index + 1): \(message)") }
            guard let colon = line.firstIndex(of: ":"), colon != line.startIndex else { throw fail("expected user:hash") }
            let user = String(line[..<colon])
            let hashText = String(line[line.index(after: colon)...])
            guard let hash = Self.parseHash(hashText) else {
                throw fail(
                    hashText.hasPrefix("$")
                        ? "the hash of \(user) is not $7$ITERATIONS$SALT$HASH or $6$SALT$HASH" : "the password of \(user) is not hashed (mosquitto_passwd -U)")
            }
            guard users[user] == nil else { throw fail("\(user) is listed twice") }
            users[user] = hash
            order.append(user)
        }
    }

    static func parseHash(_ text: String) -> Hash? {
        let parts = text.split(separator: "$", omittingEmptySubsequences: false).map(String.init)
        switch (parts.first, parts.count > 1 ? parts[1] : nil) {
        case ("", "7"?) where parts.count == 5:
            guard let iterations = Int(parts[2]), (1...maximumIterations).contains(iterations),
                let salt = Data(base64Encoded: parts[3]), let hash = Data(base64Encoded: parts[4]), !hash.isEmpty, hash.count <= 64
            else { return nil }
            return .pbkdf2SHA512(iterations: iterations, salt: Array(salt), hash: Array(hash))
        case ("", "6"?) where parts.count == 4:
            guard let salt = Data(base64Encoded: parts[2]), let hash = Data(base64Encoded: parts[3]), hash.count == 64 else { return nil }
            return .sha512(salt: Array(salt), hash: Array(hash))
        default:
            return nil
        }
    }

    /// The most PBKDF2 iterations a hash may ask for: every CONNECT naming its user pays them
    /// before it is authenticated, so a file must not make that arbitrarily expensive.
    public static let maximumIterations = 100_000

    /// Whether `user` is listed with `password`.
    public func verify(user: String, password: [UInt8]) -> Bool {
        guard let hash = users[user] else {
            // As long as for a real user of this file, so that the answer's time tells nobody
            // who exists.
            _ = decoy.verify(password)
            return false
        }
        return hash.verify(password)
    }

    /// A hash costing what the file's first user's costs.
    private var decoy: Hash {
        switch order.first.flatMap({ users[$0] }) {
        case .sha512?: .sha512(salt: [UInt8](repeating: 0, count: 12), hash: [UInt8](repeating: 0, count: 64))
        case .pbkdf2SHA512(let iterations, _, _)?:
            .pbkdf2SHA512(iterations: iterations, salt: [UInt8](repeating: 0, count: 12), hash: [UInt8](repeating: 0, count: 64))
        case nil: .pbkdf2SHA512(iterations: Self.iterations, salt: [UInt8](repeating: 0, count: 12), hash: [UInt8](repeating: 0, count: 64))
        }
    }

    /// PBKDF2 iterations of new hashes. mosquitto_passwd uses 101; more makes a stolen file
    /// slower to crack and every CONNECT slower to check (about 1 ms per thousand here).
    public static let iterations = 1000

    /// Sets (or adds) `user`'s password, hashed with PBKDF2-HMAC-SHA512 and a random salt.
    public mutating func set(user: String, password: [UInt8]) throws(MQTTError) {
        guard !user.isEmpty, !user.contains(":"), !user.contains("\n") else {
            throw MQTTError(.invalidArgument, "a user name is not empty and has no colon or line break")
        }
        var generator = SystemRandomNumberGenerator()
        let salt = (0..<12).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let hash = Self.pbkdf2SHA512(password: password, salt: salt, iterations: Self.iterations, length: 64)
        if users[user] == nil { order.append(user) }
        users[user] = .pbkdf2SHA512(iterations: Self.iterations, salt: salt, hash: hash)
    }

    /// Removes `user`; false when it was not listed.
    @discardableResult
    public mutating func remove(user: String) -> Bool {
        guard users.removeValue(forKey: user) != nil else { return false }
        order.removeAll { $0 == user }
        return true
    }

    /// The file's text, one `user:hash` per line.
    public var encoded: String {
        order.map { "\($0):\(users[$0]!.encoded)\n" }.joined()
    }

    /// PBKDF2 (RFC 8018) with HMAC-SHA512.
    static func pbkdf2SHA512(password: [UInt8], salt: [UInt8], iterations: Int, length: Int) -> [UInt8] {
        let key = SymmetricKey(data: password)
        var output: [UInt8] = []
        var block: UInt32 = 1
        while output.count < length {
            var u = Array(HMAC<SHA512>.authenticationCode(for: salt + withUnsafeBytes(of: block.bigEndian, Array.init), using: key))
            var t = u
            for _ in 1..<max(1, iterations) {
                u = Array(HMAC<SHA512>.authenticationCode(for: u, using: key))
                for index in t.indices { t[index] ^= u[index] }
            }
            output += t
            block += 1
        }
        return Array(output.prefix(length))
    }

    static func constantTimeEquals(_ lhs: [UInt8], _ rhs: [UInt8]) -> Bool {
        guard lhs.count == rhs.count else { return false }
        var difference: UInt8 = 0
        for index in lhs.indices { difference |= lhs[index] ^ rhs[index] }
        return difference == 0
    }
}
