import NIOSSL

extension MQTTBrokerFileConfiguration {
    /// The listeners to run: the configured ones, or 127.0.0.1:1883 when none is configured.
    public func makeListeners() throws(MQTTError) -> [MQTTListener] {
        guard !listeners.isEmpty else { return [.tcp(host: "127.0.0.1", port: 1883)] }
        var made: [MQTTListener] = []
        for listener in listeners {
            let host = listener.address ?? "0.0.0.0"
            let tls = try listener.tlsConfiguration()
            switch (listener.transport, tls) {
            case (.mqtt, nil): made.append(.tcp(host: host, port: listener.port))
            case (.mqtt, let tls?): made.append(try .tls(host: host, port: listener.port, configuration: tls))
            case (.webSockets, nil): made.append(.webSocket(host: host, port: listener.port))
            case (.webSockets, let tls?): made.append(.webSocket(host: host, port: listener.port, secure: try MQTTListener.tlsHandler(tls)))
            }
        }
        return made
    }
}

extension MQTTBrokerFileConfiguration.Listener {
    func tlsConfiguration() throws(MQTTError) -> TLSConfiguration? {
        guard let certificateFile, let keyFile else { return nil }
        do {
            var configuration = TLSConfiguration.makeServerConfiguration(
                certificateChain: try NIOSSLCertificate.fromPEMFile(certificateFile).map { .certificate($0) },
                privateKey: .privateKey(try NIOSSLPrivateKey(file: keyFile, format: .pem))
            )
            if let caFile { configuration.trustRoots = .file(caFile) }
            configuration.certificateVerification = requireCertificate ? .noHostnameVerification : .none
            return configuration
        } catch {
            throw MQTTError(.invalidConfiguration, "the TLS files of the listener on port \(port) cannot be used: \(error)")
        }
    }
}
