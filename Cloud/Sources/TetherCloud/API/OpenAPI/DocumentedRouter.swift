import Hummingbird
import Synchronization

/// The operations a server registered, in order.
final class OperationCatalogue: Sendable {
    private let storage = Mutex<[APIOperation]>([])

    func append(_ operation: APIOperation) { storage.withLock { $0.append(operation) } }

    var operations: [APIOperation] { storage.withLock { $0 } }
}

/// Registers a route together with its documentation.
struct DocumentedRouter<Context: RequestContext> {
    let router: Router<Context>
    let catalogue: OperationCatalogue

    func on(
        _ operation: APIOperation,
        use handler: @escaping @Sendable (Request, Context) async throws -> Response
    ) {
        catalogue.append(operation)
        router.on(RouterPath(operation.path), method: operation.method, use: handler)
    }
}
