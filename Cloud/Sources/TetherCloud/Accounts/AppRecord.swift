/// An application registered with `tether-cloud admin app create`; its id is the
/// `X-Gizwits-Application-Id` every request carries.
public struct AppRecord: Sendable, Equatable {
    public var appID: String
    public var name: String
    public var secret: String
    /// Where third-party ID tokens for this app are verified; nil when third-party login is off.
    public var thirdParty: ThirdPartyIssuer?

    static func find(_ appID: String, in executor: any SQLExecutor) async throws(StorageError) -> AppRecord? {
        guard let row = try await executor.first(
            "SELECT app_id, name, secret, jwks_url, jwt_issuer, jwt_audience FROM apps WHERE app_id = $1", .text(appID)
        ) else {
            return nil
        }
        return AppRecord(
            appID: try row.text("app_id"), name: try row.text("name"), secret: try row.text("secret"),
            thirdParty: row.optionalText("jwks_url").map {
                ThirdPartyIssuer(jwksURL: $0, issuer: row.optionalText("jwt_issuer"), audience: row.optionalText("jwt_audience"))
            }
        )
    }
}
