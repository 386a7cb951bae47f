import Synchronization

/// The base URL devices and users reach this node's HTTP API at (download links are built on
/// it): the configured `publicURL`, or else `http://{bind address}:{port}` once the server
/// listens (the port may have been chosen by the system).
public final class PublicAddress: Sendable {
    private let url: Mutex<String>
    private let configured: Bool

    init(configuration: CloudConfiguration) {
        url = Mutex(configuration.resolvedPublicURL)
        configured = configuration.publicURL != nil
    }

    public var current: String { url.withLock { $0 } }

    /// The server listens on `host:port`: the URL follows unless one was configured.
    func listening(host: String, port: Int) {
        guard !configured else { return }
        let shownHost = host.contains(":") ? "[\(host)]" : host
        url.withLock { $0 = "http://\(shownHost):\(port)" }
    }
}
