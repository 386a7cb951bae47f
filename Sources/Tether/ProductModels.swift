import Logging
import Synchronization
import TetherCloudClient
import TetherCore

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
        /// Fetches under way, which every device of the product waits for.
        var inFlight: [String: AsyncPromise<ThingModel?, Never>] = [:]
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
        // The first to ask fetches; the others wait for its answer.
        let asked = state.withLock { state -> (promise: AsyncPromise<ThingModel?, Never>, fetches: Bool)? in
            if let promise = state.inFlight[productKey] { return (promise, false) }
            if state.fetched[productKey] != nil { return nil }
            if let failed = state.failedAt[productKey], ContinuousClock.now - failed < Self.retryAfter { return nil }
            let promise = AsyncPromise<ThingModel?, Never>()
            state.inFlight[productKey] = promise
            return (promise, true)
        }
        guard let asked else { return known(productKey) }
        if asked.fetches {
            let model: ThingModel?
            do {
                model = try await api.productModel(productKey: productKey)
            } catch {
                logger.debug("product model not fetched", metadata: ["tether.productKey": "\(productKey)", "tether.error": "\(error)"])
                model = nil
            }
            state.withLock { state in
                state.inFlight[productKey] = nil
                if let model {
                    state.fetched[productKey] = model
                    state.failedAt[productKey] = nil
                } else if !Task.isCancelled {
                    // A fetch given up by its asker is not a failure of the cloud: the next one asks again.
                    if state.failedAt.count >= Self.maximumFailures { state.failedAt.removeAll() }
                    state.failedAt[productKey] = .now
                }
            }
            asked.promise.resolve(.success(model))
        }
        return await asked.promise.result(ifCancelled: { .success(nil) }).get()
    }
}
