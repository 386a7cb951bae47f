import TetherCloudClient

extension Device {
    /// Runs one REST call about this device with the user's session (renewed when needed): the
    /// client must have a cloud and the device a did.
    func withCloudCall<Result: Sendable>(
        _ call: (TetherCloudAPI, CloudSession, String) async throws(TetherError) -> Result
    ) async throws(TetherError) -> Result {
        guard let link else { throw TetherError(.invalidArgument, "the client has no cloud configured") }
        let did = self.did
        guard !did.isEmpty else { throw TetherError(.invalidArgument, "device \(id) has no did yet") }
        let account = link.account
        return try await account.withSession { session throws(TetherError) in try await call(account.api, session, did) }
    }
}
