public import NIOCore

/// How an ``MQTTClient`` reaches its broker.
public struct MQTTTransport: Sendable {
    enum Base: Sendable {
        case tcp
        /// Installs handlers (TLS) between the socket and MQTT.
        case custom(name: String, configure: @Sendable (any Channel, _ host: String) throws -> Void)
        /// MQTT in WebSocket binary frames after an HTTP upgrade of `path`; `secure` adds TLS first.
        case webSocket(path: String, secure: (@Sendable (any Channel, _ host: String) throws -> Void)?)
    }

    let base: Base

    /// Plain TCP.
    public static let tcp = MQTTTransport(base: .tcp)

    /// A transport that prepares each new channel with `configure` (given the channel and the
    /// broker's host name) before MQTT is added.
    public static func custom(name: String, configure: @escaping @Sendable (any Channel, _ host: String) throws -> Void) -> MQTTTransport {
        MQTTTransport(base: .custom(name: name, configure: configure))
    }

    /// MQTT over WebSocket (`ws://host:port/path`), subprotocol `mqtt`.
    public static func webSocket(path: String = "/mqtt") -> MQTTTransport {
        MQTTTransport(base: .webSocket(path: path, secure: nil))
    }

    /// Whether the transport encrypts (TLS, or WebSocket over TLS).
    public var isSecure: Bool {
        switch base {
        case .tcp: return false
        case .custom(let name, _): return name == "tls"
        case .webSocket(_, let secure): return secure != nil
        }
    }

    var name: String {
        switch base {
        case .tcp: return "tcp"
        case .custom(let name, _): return name
        case .webSocket(_, let secure): return secure == nil ? "ws" : "wss"
        }
    }
}
