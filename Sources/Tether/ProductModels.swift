import Logging
import Synchronization
import TetherCloudClient

/// The product models a client knows: the configuration's first, then those the cloud gave
/// (`/app/datapoint`, fetched once per product key, on demand).
final class ProductModels: Sendable {
    private let configured: [String: ThingModel]
    private let api: TetherCloudAPI?
    private let logger: Logger
    private let fetched = Mutex<[String: ThingModel]>([:])
    private let inFlight = Mutex<[String: Task<ThingModel?, Never>]>([:])

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
        configured[productKey] ?? fetched.withLock { $0[productKey] }
    }

    /// The model, fetched from the cloud when it is not known yet (one request per product key
    /// however many devices ask); nil when the cloud cannot give it (asked again next time).
    func model(for productKey: String) async -> ThingModel? {
        if let model = known(productKey) { return model }
        guard let api, !productKey.isEmpty else { return nil }
        let task = inFlight.withLock { running -> Task<ThingModel?, Never> in
            if let task = running[productKey] { return task }
            let logger = self.logger
            let task = Task<ThingModel?, Never> {
                do {
                    return try await api.productModel(productKey: productKey)
                } catch {
                    logger.debug("product model not fetched", metadata: ["tether.productKey": "\(productKey)", "tether.error": "\(error)"])
                    return nil
                }
            }
            running[productKey] = task
            return task
        }
        let model = await task.value
        inFlight.withLock { _ = $0.removeValue(forKey: productKey) }
        if let model { fetched.withLock { $0[productKey] = model } }
        return model
    }
}
