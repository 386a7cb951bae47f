public import NIOCore
public import NIOSSL

extension MQTTTransport {
    /// MQTT over TLS (8883 by convention), with BoringSSL. The server's certificate is checked
    /// against `configuration`'s trust roots and, unless `serverHostname` says otherwise, against
    /// the host name the client connects to (an IP address gets no SNI and no name check).
    ///
    /// - Throws: `MQTTError.Code.tlsFailure` when the configuration cannot be used (unreadable
    ///   keys or certificates).
    public static func tls(_ configuration: TLSConfiguration, serverHostname: String? = nil) throws(MQTTError) -> MQTTTransport {
        let context: NIOSSLContext
        do {
            context = try NIOSSLContext(configuration: configuration)
        } catch {
            throw MQTTError(.tlsFailure, "the TLS configuration cannot be used: \(error)")
        }
        return .custom(name: "tls") { channel, host in
            let name = serverHostname ?? (Self.isIPAddress(host) ? nil : host)
            try channel.pipeline.syncOperations.addHandler(NIOSSLClientHandler(context: context, serverHostname: name))
        }
    }

    /// MQTT over WebSocket over TLS (`wss://host:port/path`).
    public static func webSocket(path: String = "/mqtt", tls configuration: TLSConfiguration, serverHostname: String? = nil) throws(MQTTError) -> MQTTTransport
    {
        guard case .custom(_, let secure) = try tls(configuration, serverHostname: serverHostname).base else {
            preconditionFailure("tls(_:) makes a custom transport")
        }
        return MQTTTransport(base: .webSocket(path: path, secure: secure))
    }

    static func isIPAddress(_ host: String) -> Bool {
        (try? SocketAddress(ipAddress: host, port: 0)) != nil
    }
}

extension MQTTListener {
    /// Installs TLS on a listener's channels, for ``MQTTListener/webSocket(host:port:path:secure:)``
    /// (wss).
    public static func tlsHandler(_ configuration: TLSConfiguration) throws(MQTTError) -> @Sendable (any Channel) throws -> Void {
        let context: NIOSSLContext
        do {
            context = try NIOSSLContext(configuration: configuration)
        } catch {
            throw MQTTError(.tlsFailure, "the TLS configuration cannot be used: \(error)")
        }
        return { channel in try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: context)) }
    }

    /// MQTT over TLS for the broker: `configuration` carries the server's certificate chain and
    /// key (and, for mutual TLS, the client trust roots and `certificateVerification`).
    public static func tls(host: String = "0.0.0.0", port: Int = 8883, configuration: TLSConfiguration) throws(MQTTError) -> MQTTListener {
        let context: NIOSSLContext
        do {
            context = try NIOSSLContext(configuration: configuration)
        } catch {
            throw MQTTError(.tlsFailure, "the TLS configuration cannot be used: \(error)")
        }
        return .custom(host: host, port: port, isSecure: true) { channel in
            try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: context))
        }
    }
}
