import NIOCore
import Synchronization
import TetherCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Persistent sessions and retained messages in one file (`persistence true`): kept in memory
/// as they change and written whole, to a temporary file renamed over the old one, every
/// `autosave_interval` and at shutdown, as mosquitto does. A crash loses what changed since the
/// last save, never the file.
///
/// The file is JSON: `{"format": "tether-broker", "version": 1, "sessions": […], "retained": […]}`,
/// each message a base64 MQTT 5 PUBLISH packet (its properties included).
public final class MQTTFilePersistence: MQTTBrokerPersistence {
    public let path: String
    private struct State {
        var sessions: [String: MQTTStoredSession] = [:]
        var retained: [String: MQTTMessage] = [:]
        var dirty = false
    }
    private let state = Mutex(State())

    public init(path: String) {
        self.path = path
    }

    public func load() async throws -> (sessions: [MQTTStoredSession], retained: [MQTTMessage]) {
        guard access(path, F_OK) == 0 else { return ([], []) }
        let text = try BrokerFileText.read(path, limit: nil, code: .persistenceFailed)
        let (sessions, retained) = try Self.decode(text, name: path)
        state.withLock { state in
            state.sessions = Dictionary(sessions.map { ($0.clientID, $0) }, uniquingKeysWith: { _, last in last })
            state.retained = Dictionary(retained.map { ($0.topic, $0) }, uniquingKeysWith: { _, last in last })
        }
        return (sessions, retained)
    }

    public func saveSession(_ session: MQTTStoredSession) {
        state.withLock {
            $0.sessions[session.clientID] = session; $0.dirty = true
        }
    }

    public func deleteSession(clientID: String) {
        state.withLock { if $0.sessions.removeValue(forKey: clientID) != nil { $0.dirty = true } }
    }

    public func saveRetained(topic: String, message: MQTTMessage?) {
        state.withLock {
            $0.retained[topic] = message; $0.dirty = true
        }
    }

    /// Writes the file if anything changed since the last write.
    public func save() throws(MQTTError) {
        let snapshot = state.withLock { state -> (sessions: [MQTTStoredSession], retained: [MQTTMessage])? in
            guard state.dirty else { return nil }
            state.dirty = false
            return (Array(state.sessions.values), Array(state.retained.values))
        }
        guard let snapshot else { return }
        do {
            try Self.write(Self.encode(sessions: snapshot.sessions, retained: snapshot.retained), to: path)
        } catch {
            state.withLock { $0.dirty = true }
            throw error
        }
    }

    /// Saves every `interval` until cancelled, then once more.
    public func autosave(every interval: Duration, logger: @escaping @Sendable (MQTTError) -> Void) async {
        while !Task.isCancelled {
            try? await Task.sleep(for: interval)
            do { try save() } catch { logger(error) }
        }
    }

    // MARK: The file

    static func encode(sessions: [MQTTStoredSession], retained: [MQTTMessage]) -> String {
        let sessionValues: [JSONValue] = sessions.sorted { $0.clientID < $1.clientID }.map { session in
            var object: JSONObject = [
                "client_id": .string(session.clientID),
                "version": .int(Int64(session.version.rawValue)),
                "subscriptions": .array(
                    session.subscriptions.map { subscription in
                        var entry: JSONObject = [
                            "filter": .string(subscription.filter), "qos": .int(Int64(subscription.qos.rawValue)),
                            "no_local": .bool(subscription.noLocal), "retain_as_published": .bool(subscription.retainAsPublished),
                            "retain_handling": .int(Int64(subscription.retainHandling.rawValue)),
                        ]
                        if let identifier = session.subscriptionIdentifiers[subscription.filter] { entry["identifier"] = .int(Int64(identifier)) }
                        return .object(entry)
                    }),
                "pending": .array(session.pendingMessages.compactMap { encode($0).map(JSONValue.string) }),
            ]
            object["expiry"] = session.expiryInterval.map { .int(Int64($0)) } ?? .null
            object["username"] = session.username.map(JSONValue.string) ?? .null
            return .object(object)
        }
        let document: JSONValue = [
            "format": "tether-broker", "version": 1,
            "sessions": .array(sessionValues),
            "retained": .array(retained.sorted { $0.topic < $1.topic }.compactMap { encode($0).map(JSONValue.string) }),
        ]
        return document.serialized()
    }

    static func decode(_ text: String, name: String) throws(MQTTError) -> ([MQTTStoredSession], [MQTTMessage]) {
        func fail(_ message: String) -> MQTTError { MQTTError(.persistenceFailed, "\(name): \(message)") }
        guard let document = try? JSONValue.parse(text), document["format"] == "tether-broker" else {
            throw fail("not a Tether broker persistence file")
        }
        guard document["version"] == 1 else { throw fail("version \(document["version"]?.serialized() ?? "?") is not one this build reads") }
        var sessions: [MQTTStoredSession] = []
        for value in document["sessions"]?.arrayValue ?? [] {
            guard let clientID = value["client_id"]?.stringValue, case .int(let level)? = value["version"],
                let version = MQTTVersion(rawValue: UInt8(clamping: level))
            else { throw fail("a session without client_id or version") }
            var subscriptions: [MQTTTopicSubscription] = []
            var identifiers: [String: Int] = [:]
            for entry in value["subscriptions"]?.arrayValue ?? [] {
                guard let filter = entry["filter"]?.stringValue, case .int(let qos)? = entry["qos"], let level = MQTTQoS(rawValue: UInt8(clamping: qos)),
                    case .int(let handling)? = entry["retain_handling"],
                    let retainHandling = MQTTTopicSubscription.RetainHandling(rawValue: UInt8(clamping: handling))
                else { throw fail("a subscription of \(clientID) cannot be read") }
                subscriptions.append(
                    MQTTTopicSubscription(
                        filter: filter, qos: level, noLocal: entry["no_local"] == .bool(true),
                        retainAsPublished: entry["retain_as_published"] == .bool(true), retainHandling: retainHandling
                    ))
                if case .int(let identifier)? = entry["identifier"] { identifiers[filter] = Int(identifier) }
            }
            var pending: [MQTTMessage] = []
            for item in value["pending"]?.arrayValue ?? [] {
                guard let text = item.stringValue, let message = decodeMessage(text) else { throw fail("a message of \(clientID) cannot be read") }
                pending.append(message)
            }
            var expiry: UInt32?
            if case .int(let seconds)? = value["expiry"] { expiry = UInt32(clamping: seconds) }
            sessions.append(
                MQTTStoredSession(
                    clientID: clientID, version: version, subscriptions: subscriptions, subscriptionIdentifiers: identifiers,
                    expiryInterval: expiry, pendingMessages: pending, username: value["username"]?.stringValue
                ))
        }
        var retained: [MQTTMessage] = []
        for item in document["retained"]?.arrayValue ?? [] {
            guard let text = item.stringValue, let message = decodeMessage(text) else { throw fail("a retained message cannot be read") }
            retained.append(message)
        }
        return (sessions, retained)
    }

    /// Nil for a message that does not encode (none the broker accepted): it is left out
    /// rather than written in a form the next start could not read.
    static func encode(_ message: MQTTMessage) -> String? {
        var buffer = ByteBuffer()
        let publish = MQTTPublish(
            topic: message.topic, payload: message.payload, qos: message.qos, retain: message.retain,
            packetID: message.qos == .atMostOnce ? nil : 1, properties: message.properties
        )
        guard (try? MQTTPacket.publish(publish).write(to: &buffer, version: .v5)) != nil else { return nil }
        return Base64.encode(Array(buffer.readableBytesView))
    }

    static func decodeMessage(_ text: String) -> MQTTMessage? {
        guard let bytes = Base64.decode(text) else { return nil }
        var buffer = ByteBuffer(bytes: bytes)
        guard case .publish(let publish)? = try? MQTTPacket.read(from: &buffer, version: .v5, maximumPacketSize: 268_435_455) else { return nil }
        return MQTTMessage(topic: publish.topic, payload: publish.payload, qos: publish.qos, retain: publish.retain, properties: publish.properties)
    }

    static func write(_ text: String, to path: String) throws(MQTTError) {
        let temporary = path + ".tmp"
        guard let handle = fopen(temporary, "w") else {
            throw MQTTError(.persistenceFailed, "\(temporary): cannot be written (\(String(cString: strerror(errno))))")
        }
        let bytes = Array(text.utf8)
        let written = bytes.withUnsafeBufferPointer { fwrite($0.baseAddress, 1, $0.count, handle) }
        let flushed = fflush(handle) == 0 && fsync(fileno(handle)) == 0
        fclose(handle)
        guard written == bytes.count, flushed else {
            unlink(temporary)
            throw MQTTError(.persistenceFailed, "\(temporary): writing failed")
        }
        guard rename(temporary, path) == 0 else {
            throw MQTTError(.persistenceFailed, "\(path): cannot be replaced (\(String(cString: strerror(errno))))")
        }
    }
}

/// Base64 (RFC 4648) without Foundation, for the persistence file.
enum Base64 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    static func encode(_ bytes: [UInt8]) -> String {
        var output: [UInt8] = []
        output.reserveCapacity((bytes.count + 2) / 3 * 4)
        var index = 0
        while index < bytes.count {
            let a = bytes[index], b = index + 1 < bytes.count ? bytes[index + 1] : 0, c = index + 2 < bytes.count ? bytes[index + 2] : 0
            output.append(alphabet[Int(a >> 2)])
            output.append(alphabet[Int((a & 0x03) << 4 | b >> 4)])
            output.append(index + 1 < bytes.count ? alphabet[Int((b & 0x0F) << 2 | c >> 6)] : UInt8(ascii: "="))
            output.append(index + 2 < bytes.count ? alphabet[Int(c & 0x3F)] : UInt8(ascii: "="))
            index += 3
        }
        return String(decoding: output, as: UTF8.self)
    }

    static func decode(_ text: String) -> [UInt8]? {
        var values: [UInt8] = []
        var padding = 0
        for byte in text.utf8 {
            if byte == UInt8(ascii: "=") { padding += 1; continue }
            guard padding == 0, let value = alphabet.firstIndex(of: byte) else { return nil }
            values.append(UInt8(value))
        }
        guard (values.count + padding) % 4 == 0, padding <= 2 else { return nil }
        var output: [UInt8] = []
        var index = 0
        while index + 1 < values.count {
            let a = values[index], b = values[index + 1]
            output.append(a << 2 | b >> 4)
            if index + 2 < values.count { output.append((b & 0x0F) << 4 | values[index + 2] >> 2) }
            if index + 3 < values.count { output.append((values[index + 2] & 0x03) << 6 | values[index + 3]) }
            index += 4
        }
        return output
    }
}
