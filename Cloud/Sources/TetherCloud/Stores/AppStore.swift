import TetherCore

/// The `apps` table: the applications the operator registered, and their third-party login.
struct AppStore: Sendable {
    let executor: any SQLExecutor

    init(_ executor: any SQLExecutor) { self.executor = executor }

    func insert(appID: String, name: String, secret: String, now: Int64) async throws(StorageError) {
        try await executor.query(
            "INSERT INTO apps (app_id, name, secret, created_at) VALUES ($1, $2, $3, $4)",
            .text(appID), .text(name), .text(secret), .int(now)
        )
    }

    func find(_ appID: String) async throws(StorageError) -> AppRecord? {
        guard
            let row = try await executor.first(
                "SELECT app_id, name, secret, jwks_url, jwt_issuer, jwt_audience FROM apps WHERE app_id = $1", .text(appID)
            )
        else {
            return nil
        }
        return AppRecord(
            appID: try row.text("app_id"), name: try row.text("name"), secret: try row.text("secret"),
            thirdParty: row.optionalText("jwks_url").map {
                ThirdPartyIssuer(jwksURL: $0, issuer: row.optionalText("jwt_issuer"), audience: row.optionalText("jwt_audience"))
            }
        )
    }

    /// Sets (or with nil clears) where the app's third-party ID tokens are verified; false when
    /// there is no such app.
    func setThirdParty(appID: String, _ issuer: ThirdPartyIssuer?) async throws(StorageError) -> Bool {
        let rows = try await executor.query(
            "UPDATE apps SET jwks_url = $2, jwt_issuer = $3, jwt_audience = $4 WHERE app_id = $1 RETURNING app_id",
            .text(appID), .optional(issuer?.jwksURL), .optional(issuer?.issuer), .optional(issuer?.audience)
        )
        return !rows.isEmpty
    }
}
