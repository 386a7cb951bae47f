import Synchronization
import TetherCore

/// Products' thing models and devices' Alink names, read once from the database: neither
/// changes while a node runs.
final class DeviceCatalogue: Sendable {
    struct Device: Sendable {
        var did: String
        var productKey: String
        var deviceName: String
        /// The session id of the device's gateway connection.
        var clientID: String { "\(productKey)&\(deviceName)" }
    }

    private let database: any SQLDatabase
    private let models = Mutex<[String: ThingModel]>([:])
    private let devices = Mutex<[String: Device]>([:])

    init(database: any SQLDatabase) { self.database = database }

    /// The product's model; `executor` reads it on a miss (a transaction under way must read on
    /// its own connection: SQLite's one connection is the transaction's).
    func model(_ productKey: String, on executor: (any SQLExecutor)? = nil) async throws -> ThingModel {
        if let model = models.withLock({ $0[productKey] }) { return model }
        guard let product = try await ProductStore(executor ?? database).find(productKey) else {
            throw StorageError(.unexpectedValue, "no product \(productKey)")
        }
        models.withLock { $0[productKey] = product.model }
        return product.model
    }

    func device(_ did: String) async throws -> Device? {
        if let device = devices.withLock({ $0[did] }) { return device }
        guard let record = try await DeviceStore(database).find(did) else { return nil }
        let device = Device(did: did, productKey: record.productKey, deviceName: record.deviceName)
        devices.withLock { $0[did] = device }
        return device
    }
}
