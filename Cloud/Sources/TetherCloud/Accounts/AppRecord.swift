/// An application registered with `tether-cloud admin app create`; its id is the
/// `X-Gizwits-Application-Id` every request carries.
public struct AppRecord: Sendable, Equatable {
    public var appID: String
    public var name: String
    public var secret: String

    static func find(_ appID: String, in executor: any SQLExecutor) async throws(StorageError) -> AppRecord? {
        guard let row = try await executor.first("SELECT app_id, name, secret FROM apps WHERE app_id = $1", .text(appID)) else {
            return nil
        }
        return AppRecord(appID: try row.text("app_id"), name: try row.text("name"), secret: try row.text("secret"))
    }
}
