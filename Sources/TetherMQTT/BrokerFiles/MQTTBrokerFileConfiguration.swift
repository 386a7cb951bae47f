#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The standalone broker's configuration file, in mosquitto's syntax (`mosquitto.conf(5)`):
/// one `key value` per line, `#` comments, options after `listener` belonging to that
/// listener. The subset Tether's broker implements is read; a key it does not know, or knows and
/// does not implement, is an error naming the line, so that a setting that looks applied always
/// is. Relative paths are taken from the configuration file's directory.
public struct MQTTBrokerFileConfiguration: Sendable, Equatable {
    /// One `listener PORT [ADDRESS]` block.
    public struct Listener: Sendable, Equatable {
        public enum Transport: String, Sendable, Equatable {
            case mqtt
            case webSockets = "websockets"
        }

        public var port: Int
        /// The address to bind; nil binds every interface, as mosquitto does for a listener
        /// given without one.
        public var address: String?
        public var transport: Transport = .mqtt
        /// `certfile` and `keyfile` (PEM): TLS on this listener.
        public var certificateFile: String?
        public var keyFile: String?
        /// `cafile`: the authorities client certificates must chain to.
        public var caFile: String?
        /// `require_certificate`: clients must present a certificate signed by `cafile`.
        public var requireCertificate = false

        public init(port: Int, address: String? = nil) {
            self.port = port
            self.address = address
        }

        public var isTLS: Bool { certificateFile != nil }
    }

    /// Listeners in file order; none means the default: `127.0.0.1:1883`, anonymous allowed
    /// (mosquitto 2's "local only" mode).
    public var listeners: [Listener] = []
    /// `allow_anonymous`: nil when the file does not say (then: allowed only without listeners).
    public var allowAnonymous: Bool?
    /// `password_file`: mosquitto_passwd's format.
    public var passwordFile: String?
    /// `acl_file`: mosquitto's ACL format.
    public var aclFile: String?
    /// `persistence`: sessions and retained messages survive a restart.
    public var persistence = false
    /// `persistence_location` (a directory) and `persistence_file`.
    public var persistenceLocation: String?
    public var persistenceFile = "tether-broker.db"
    /// `autosave_interval`: seconds between saves of changed state (and always at shutdown).
    public var autosaveInterval = 1800
    /// `threads` (Tether): event-loop threads; nil: one per core. With 1, packets from
    /// different connections are handled in the order they arrive, as mosquitto does.
    public var threads: Int?
    /// The limits (`max_keepalive`, `max_packet_size`, `max_inflight_messages`,
    /// `receive_maximum`, `max_queued_messages`, `queue_qos0_messages`, `max_topic_alias`,
    /// `max_topic_alias_broker`, `max_qos`, `retain_available`, `allow_zero_length_clientid`,
    /// `refusal_reason`).
    public var broker = MQTTBrokerConfiguration(outgoingTopicAliasMaximum: 10)

    public init() {}

    /// Whether clients without a user name may connect.
    public var allowsAnonymous: Bool { allowAnonymous ?? listeners.isEmpty }

    /// Where persistence is written, when it is on.
    public var persistencePath: String? {
        guard persistence else { return nil }
        guard let persistenceLocation else { return persistenceFile }
        return persistenceLocation.hasSuffix("/") ? persistenceLocation + persistenceFile : persistenceLocation + "/" + persistenceFile
    }

    /// Options read and ignored: Tether logs to standard error at the level `--verbose` sets.
    static let ignoredKeys: Set<String> = ["log_type", "log_dest", "log_timestamp", "log_timestamp_format", "connection_messages"]

    /// Reads the file at `path`.
    public static func load(path: String) throws(MQTTError) -> MQTTBrokerFileConfiguration {
        let text = try BrokerFileText.read(path)
        return try MQTTBrokerFileConfiguration(parsing: text, name: path, directory: BrokerFileText.directory(of: path))
    }

    /// Parses `text`; `name` is used in error messages and `directory` resolves relative paths.
    public init(parsing text: String, name: String = "configuration", directory: String = ".") throws(MQTTError) {
        var parser = Parser(name: name, directory: directory)
        for (index, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            try parser.line(String(rawLine), number: index + 1, into: &self)
        }
        try parser.finish(&self)
    }

    private struct Parser {
        let name: String
        let directory: String
        var current: Int?
        var seen: Set<String> = []

        init(name: String, directory: String) {
            self.name = name
            self.directory = directory
        }

        func fail(_ number: Int, _ message: String) -> MQTTError {
            MQTTError(.invalidConfiguration, "\(name):\(number): \(message)")
        }

        mutating func line(_ raw: String, number: Int, into configuration: inout MQTTBrokerFileConfiguration) throws(MQTTError) {
            let line = raw.trimmingASCIIWhitespace
            guard !line.isEmpty, !line.hasPrefix("#") else { return }
            let parts = line.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
            let key = parts[0]
            let arguments = Array(parts.dropFirst())
            if MQTTBrokerFileConfiguration.ignoredKeys.contains(key) { return }
            func one() throws(MQTTError) -> String {
                guard arguments.count == 1 else { throw fail(number, "\(key) takes one value") }
                return arguments[0]
            }
            func bool() throws(MQTTError) -> Bool {
                switch try one() {
                case "true": return true
                case "false": return false
                case let other: throw fail(number, "\(key) is true or false, not \(other)")
                }
            }
            func int(_ range: ClosedRange<Int>) throws(MQTTError) -> Int {
                let text = try one()
                guard let value = Int(text), range.contains(value) else {
                    throw fail(number, "\(key) is a whole number from \(range.lowerBound) to \(range.upperBound), not \(text)")
                }
                return value
            }
            func path() throws(MQTTError) -> String {
                let text = try one()
                return text.hasPrefix("/") ? text : directory + "/" + text
            }
            func global() throws(MQTTError) {
                guard seen.insert(key).inserted else { throw fail(number, "\(key) is given twice") }
            }
            func inListener(_ body: (inout Listener) throws(MQTTError) -> Void) throws(MQTTError) {
                guard let current else { throw fail(number, "\(key) belongs to a listener: put it after a listener line") }
                try body(&configuration.listeners[current])
            }

            switch key {
            case "listener":
                guard (1...2).contains(arguments.count), let port = Int(arguments[0]), (0...65535).contains(port) else {
                    throw fail(number, "listener takes a port (0-65535) and optionally an address")
                }
                configuration.listeners.append(Listener(port: port, address: arguments.count == 2 ? arguments[1] : nil))
                current = configuration.listeners.count - 1
            case "protocol":
                let value = try one()
                guard let transport = Listener.Transport(rawValue: value) else { throw fail(number, "protocol is mqtt or websockets, not \(value)") }
                try inListener { $0.transport = transport }
            case "certfile":
                let value = try path()
                try inListener { $0.certificateFile = value }
            case "keyfile":
                let value = try path()
                try inListener { $0.keyFile = value }
            case "cafile":
                let value = try path()
                try inListener { $0.caFile = value }
            case "require_certificate":
                let value = try bool()
                try inListener { $0.requireCertificate = value }
            case "allow_anonymous":
                try global()
                configuration.allowAnonymous = try bool()
            case "password_file":
                try global()
                configuration.passwordFile = try path()
            case "acl_file":
                try global()
                configuration.aclFile = try path()
            case "per_listener_settings":
                guard try !bool() else { throw fail(number, "per_listener_settings true is not supported: security settings apply to every listener") }
            case "persistence":
                try global()
                configuration.persistence = try bool()
            case "persistence_location":
                try global()
                configuration.persistenceLocation = try path()
            case "persistence_file":
                try global()
                let file = try one()
                guard !file.contains("/") else { throw fail(number, "persistence_file is a file name; the directory is persistence_location") }
                configuration.persistenceFile = file
            case "autosave_interval":
                try global()
                configuration.autosaveInterval = try int(1...86_400)
            case "threads":
                try global()
                configuration.threads = try int(1...256)
            case "max_keepalive":
                try global()
                configuration.broker.maximumKeepAlive = UInt16(try int(1...65535))
            case "max_packet_size":
                try global()
                configuration.broker.maximumPacketSize = try int(20...268_435_455)
            case "max_inflight_messages":
                try global()
                configuration.broker.maximumInflightMessages = try int(1...65535)
            case "receive_maximum":
                try global()
                configuration.broker.receiveMaximum = UInt16(try int(1...65535))
            case "max_queued_messages":
                try global()
                configuration.broker.maximumQueuedMessages = try int(1...10_000_000)
            case "queue_qos0_messages":
                try global()
                configuration.broker.queueQoS0Messages = try bool()
            case "max_topic_alias":
                try global()
                configuration.broker.topicAliasMaximum = UInt16(try int(0...65535))
            case "max_topic_alias_broker":
                try global()
                configuration.broker.outgoingTopicAliasMaximum = UInt16(try int(0...65535))
            case "max_qos":
                try global()
                configuration.broker.maximumQoS = MQTTQoS(rawValue: UInt8(try int(0...2)))!
            case "retain_available":
                try global()
                configuration.broker.retainAvailable = try bool()
            case "allow_zero_length_clientid":
                try global()
                configuration.broker.allowEmptyClientID = try bool()
            case "refusal_reason":
                try global()
                switch try one() {
                case "not_authorized": configuration.broker.revealsRefusalReason = true
                case "unspecified": configuration.broker.revealsRefusalReason = false
                case let other: throw fail(number, "refusal_reason is not_authorized or unspecified, not \(other)")
                }
            default:
                throw fail(number, "\(key) is not an option Tether's broker knows (see the README's MQTT section)")
            }
        }

        func finish(_ configuration: inout MQTTBrokerFileConfiguration) throws(MQTTError) {
            for listener in configuration.listeners where (listener.certificateFile == nil) != (listener.keyFile == nil) {
                throw MQTTError(.invalidConfiguration, "\(name): the listener on port \(listener.port) needs both certfile and keyfile for TLS")
            }
            for listener in configuration.listeners where (listener.requireCertificate || listener.caFile != nil) && !listener.isTLS {
                throw MQTTError(
                    .invalidConfiguration, "\(name): the listener on port \(listener.port) has cafile or require_certificate without certfile and keyfile")
            }
            for listener in configuration.listeners where listener.requireCertificate && listener.caFile == nil {
                throw MQTTError(.invalidConfiguration, "\(name): the listener on port \(listener.port) requires client certificates but names no cafile")
            }
        }
    }
}

/// Reading the files a configuration names, with errors that say which.
enum BrokerFileText {
    /// The whole file as UTF-8 text. A read that fails part way is an error, never a shorter
    /// file (an ACL cut short would lose its last rules). `limit` bounds what a configuration
    /// file may hold; the persistence file has none.
    static func read(_ path: String, limit: Int? = 16 << 20, code: MQTTError.Code = .invalidConfiguration) throws(MQTTError) -> String {
        guard let handle = fopen(path, "r") else {
            throw MQTTError(code, "\(path): cannot be read (\(String(cString: strerror(errno))))")
        }
        defer { fclose(handle) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = fread(&chunk, 1, chunk.count, handle)
            if count > 0 { bytes += chunk[0..<count] }
            if count < chunk.count {
                guard ferror(handle) == 0 else { throw MQTTError(code, "\(path): reading failed") }
                break
            }
            if let limit, bytes.count > limit { throw MQTTError(code, "\(path): larger than \(limit >> 20) MiB") }
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw MQTTError(code, "\(path): not UTF-8 text")
        }
        return text
    }

    static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }
}

extension String {
    var trimmingASCIIWhitespace: String {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !" \t\r".unicodeScalars.contains($0) }) else { return "" }
        let last = scalars.lastIndex(where: { !" \t\r".unicodeScalars.contains($0) })!
        return String(scalars[first...last])
    }
}
