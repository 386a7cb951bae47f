import Logging
import Synchronization
import TetherCloudClient

/// The product models a client knows: the configuration's first, then those the cloud gave
/// (`/app/datapoint`, fetched once per product key, on demand).
final class ProductModels: Sendable {
    /// A product the cloud could not give is not asked for again before this.
    static let retryAfter: Duration = .seconds(30)
    /// Products remembered as unavailable, at most (a LAN full of made-up product keys must not
    /// grow this without end).
    static let maximumFailures = 256

    private let configured: [String: ThingModel]
    private let api: TetherCloudAPI?
    private let logger: Logger

    private struct State {
        var fetched: [String: ThingModel] = [:]
        var inFlight: [String: Task<ThingModel?, Never>] = [:]
        var failedAt: [String: ContinuousClock.Instant] = [:]
    }

    private let state = Mutex(State())

    /// - Parameter api: where missing models come from; nil fetches none.
    init(configured: [ThingModel], api: TetherCloudAPI?, logger: Logger) {
        var byKey: [String: ThingModel] = [:]
        for model in configured where byKey[model.productKey] == nil { byKey[model.productKey] = model }
        self.configured = byKey
        self.api = api
        self.logger = logger
    }

    /// The model known now, without asking the cloud.
    func known(_ productKey: String) -> ThingModel? {
        configured[productKey] ?? state.withLock { $0.fetched[productKey] }
    }

    /// The model, fetched from the cloud when it is not known yet: one request per product key
    /// however many devices ask, and none for `retryAfter` after the cloud could not give it.
    func model(for productKey: String) async -> ThingModel? {
        if let model = known(productKey) { return model }
        guard let api, !productKey.isEmpty else { return nil }
        let logger = self.logger
        let task = state.withLock { state -> Task<ThingModel?, Never>? in
            if let model = state.fetched[productKey] { return Task { model } }
            if let task = state.inFlight[productKey] { return task }
            if let failed = state.failedAt[productKey], ContinuousClock.now - failed < Self.retryAfter { return nil }
            let task = Task<ThingModel?, Never> {
                let model: ThingModel?
                do {
                    model = try await api.productModel(productKey: productKey)
                } catch {
                    logger.debug("product model not fetched", metadata: ["tether.productKey": "\(productKey)", "tether.error": "\(error)"])
                    model = nil
                }
                // Recorded by the task itself, so that no caller finds neither the task nor its result.
                self.state.withLock { state in
                    state.inFlight[productKey] = nil
                    if let model {
                        state.fetched[productKey] = model
                        state.failedAt[productKey] = nil
                    } else {
                        if state.failedAt.count >= Self.maximumFailures { state.failedAt.removeAll() }
                        state.failedAt[productKey] = .now
                    }
                }
                return model
            }
            state.inFlight[productKey] = task
            return task
        }
        return await task?.value
    }
}
