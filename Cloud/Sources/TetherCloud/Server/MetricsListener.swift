import Hummingbird
public import Logging
public import NIOCore
import Prometheus
public import ServiceLifecycle
import TetherCore

/// `GET /metrics` (Prometheus) on a listener of its own, loopback by default, so that the
/// counters an operator scrapes are not served to the Internet with the API. A port that is
/// taken is logged and the cloud serves on without metrics.
public struct MetricsListener: Service {
    let address: BindAddress
    let metrics: CloudMetrics
    let logger: Logger
    private let bound = AsyncPromise<SocketAddress?, Never>()

    public init(host: String, port: Int, metrics: CloudMetrics, logger: Logger) {
        self.address = .hostname(host, port: port)
        self.metrics = metrics
        self.logger = logger
    }

    /// Where it listens, once it does; nil if it could not.
    public func listeningAddress() async -> SocketAddress? { await bound.result(ifCancelled: { .success(nil) }).get() }

    public func run() async throws {
        let router = Router()
        let metrics = self.metrics
        router.get("/metrics") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4"],
                body: ResponseBody(byteBuffer: ByteBuffer(bytes: metrics.registry.emitToBuffer()))
            )
        }
        let bound = self.bound
        let application = Application(
            router: router,
            configuration: .init(address: address, serverName: "tether-cloud-metrics"),
            onServerRunning: { channel in bound.resolve(.success(channel.localAddress)) },
            logger: logger
        )
        do {
            try await application.run()
        } catch {
            bound.resolve(.success(nil))
            logger.error("the metrics listener cannot listen; serving without /metrics", metadata: ["address": "\(address)", "error": "\(error)"])
            try? await gracefulShutdown()
        }
    }
}
