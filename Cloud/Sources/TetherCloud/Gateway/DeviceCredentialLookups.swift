import Logging
import TetherCore

/// The credential lookups of devices connecting, coalesced: lookups that arrive while a query
/// runs go together in the next one, a statement per product and batch. A connect storm then
/// costs the database a few hundred queries, not one per device (100,000 separate lookups
/// outran the connect timeout on PostgreSQL).
final class DeviceCredentialLookups: Sendable {
    private struct Lookup: Sendable {
        var productKey: String
        var deviceName: String
        var answer: AsyncPromise<DeviceCredentials?, StorageError>
    }

    private let queue = BatchQueue<Lookup>(capacity: 100_000)
    private let database: any SQLDatabase
    private let logger: Logger

    init(database: any SQLDatabase, logger: Logger) {
        self.database = database
        self.logger = logger
    }

    /// The device's credentials, nil when there is no such device.
    func credentials(productKey: String, deviceName: String) async throws(StorageError) -> DeviceCredentials? {
        let answer = AsyncPromise<DeviceCredentials?, StorageError>()
        // Not running (yet, or any more), or the queue is full: ask on our own.
        guard queue.push(Lookup(productKey: productKey, deviceName: deviceName, answer: answer)) else {
            return try await DeviceStore(database).credentials(productKey: productKey, deviceName: deviceName)
        }
        return try await answer.value(ifCancelled: { StorageError(.queryFailed, "the device's connection was given up") })
    }

    /// Answers lookups until cancelled or finished (whatever is queued then is still answered).
    func run() async {
        while let batch = await queue.next(maximum: Self.batchSize) {
            var byProduct: [String: [Lookup]] = [:]
            for lookup in batch { byProduct[lookup.productKey, default: []].append(lookup) }
            for (productKey, lookups) in byProduct {
                var names = Set<String>()
                let distinct = lookups.map(\.deviceName).filter { names.insert($0).inserted }
                do {
                    let found = try await DeviceStore(database).credentials(productKey: productKey, deviceNames: distinct)
                    for lookup in lookups { lookup.answer.resolve(.success(found[lookup.deviceName])) }
                } catch {
                    logger.error("device credentials could not be read", metadata: ["count": "\(lookups.count)", "error": "\(error)"])
                    for lookup in lookups { lookup.answer.resolve(.failure(error)) }
                }
            }
        }
    }

    func finish() { queue.finish() }

    static let batchSize = 500
}
