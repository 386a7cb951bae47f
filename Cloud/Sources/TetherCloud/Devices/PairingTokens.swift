import HTTPTypes
import TetherCloudProtocol
import TetherCore

/// Pairing tokens (Tether extension; Tuya's AP-mode token): a logged-in app asks for one, hands
/// it to a new device with the Wi-Fi credentials, and the device presents it when it first
/// reaches the cloud; the cloud binds the device to the token's user (and places it in the
/// token's home) and pushes the outcome to that user's sessions (`s2c_pairing`).
///
/// A token is random (128 bits), kept as its SHA-256, valid ten minutes, used once, and only as
/// good as the session that asked for it. Refusals have their own codes: 9513 unknown (never
/// issued here), 9514 expired (or its session ended), 9515 already used, 9516 issued for another
/// product; a device that cannot be bound (disabled, owned by someone else) gets the binding's
/// own code. A device that presents its own token again (its first answer was lost) is told the
/// same outcome, not 9515.
struct PairingTokens: Sendable {
    let database: any SQLDatabase
    let bus: any ClusterBus

    static let lifetime: Int64 = 600
    /// A user's pending tokens at once: enough for a family onboarding devices side by side.
    static let maximumPending = 20

    func issue(_ user: AuthenticatedUser, _ request: PairingTokenRequestBody) async throws -> PairingTokenBody {
        if let productKey = request.productKey {
            guard try await ProductStore(database).find(productKey) != nil else { throw CloudAPIError.productKeyInvalid() }
        }
        if let homeID = request.homeID {
            // The device will be placed there: only who may place devices in the home may ask.
            let home = try await HomeService(database: database, bus: bus).home(user, id: homeID)
            guard home.role != .member else { throw CloudAPIError(.homeRoleInsufficient, detail: "a home's members do not add devices to it") }
        }
        let now = Clock.unixNow()
        let token = Secrets.hex(bytes: 16)
        // Never past the session's own end.
        let record = PairingTokenStore.Record(
            id: "pt_" + Secrets.hex(bytes: 8), uid: user.uid, appID: user.appID, sessionHash: user.tokenHash, productKey: request.productKey,
            homeID: request.homeID, expiresAt: min(now + Self.lifetime, user.expiresAt))
        try await database.transaction { transaction in
            let store = PairingTokenStore(transaction)
            guard try await store.pendingCount(uid: user.uid, now: now) < Self.maximumPending else {
                throw CloudAPIError.requestThrottled(detail: "at most \(Self.maximumPending) pairing tokens wait for their devices at once")
            }
            try await store.insert(record, tokenHash: Secrets.sha256(token), now: now)
        }
        return PairingTokenBody(id: record.id, token: token, expireAt: record.expiresAt, productKey: request.productKey, homeID: request.homeID)
    }

    /// The user's token's outcome so far; another user's token is not found (9513).
    func status(_ user: AuthenticatedUser, id: String) async throws -> PairingStatusBody {
        guard let record = try await PairingTokenStore(database).find(id: id, uid: user.uid) else {
            throw CloudAPIError.pairingTokenUnknown(detail: "no pairing token \(id) of this user")
        }
        return try await status(record)
    }

    /// The user gives up a pairing (the app's attempt failed): the token ends at once unless a
    /// device has used it already, whose outcome stands. 9513 for a token that is not the user's.
    func cancel(_ user: AuthenticatedUser, id: String) async throws -> PairingStatusBody {
        try await PairingTokenStore(database).cancel(id: id, uid: user.uid, now: Clock.unixNow())
        return try await status(user, id: id)
    }

    /// A device presents a token: bound to its user, or refused with the reason's code (thrown).
    func activate(token: String, did: String) async throws -> PairingStatusBody {
        guard !token.isEmpty, token.utf8.count <= 128 else { throw CloudAPIError.pairingTokenUnknown(detail: "no such pairing token") }
        let store = PairingTokenStore(database)
        let hash = Secrets.sha256(token)
        let now = Clock.unixNow()
        guard let record = try await store.redeem(tokenHash: hash, did: did, now: now) else {
            guard let found = try await store.find(tokenHash: hash) else { throw CloudAPIError.pairingTokenUnknown(detail: "no such pairing token") }
            guard found.usedAt != nil else { throw CloudAPIError.pairingTokenExpired(detail: "its ten minutes are up") }
            // The same device asking again (its answer was lost) hears the same outcome.
            if found.did == did {
                let status = try await status(found)
                switch status.state {
                case .bound:
                    return status
                case .pending:
                    // Its first presentation is still being answered: the device asks again later.
                    throw CloudAPIError.requestThrottled(detail: "this device's activation is under way; ask again", retryAfter: 1)
                case .refused, .expired:
                    throw CloudAPIError(
                        code: status.errorCode ?? CloudError.pairingTokenUsed.code, status: HTTPResponse.Status.forbidden, message: status.message ?? "refused")
                }
            }
            throw CloudAPIError.pairingTokenUsed(detail: "another device used it")
        }
        // Used up from here: whatever happens is its outcome, told to the user's sessions.
        var role: String?
        var placed: Int64?
        var failure: CloudAPIError?
        do {
            guard let device = try await DeviceStore(database).find(did) else { throw CloudAPIError.deviceNotFound() }
            if let productKey = record.productKey, productKey != device.productKey {
                throw CloudAPIError.pairingTokenForeign(detail: "the token is for product \(productKey), the device is of \(device.productKey)")
            }
            guard let sessionEnds = try await TokenStore(database).expiry(tokenHash: record.sessionHash), sessionEnds > now else {
                throw CloudAPIError.pairingTokenExpired(detail: "the session that asked for it has ended")
            }
            let user = AuthenticatedUser(uid: record.uid, appID: record.appID, tokenHash: record.sessionHash, expiresAt: sessionEnds)
            role = try await BindingService(database: database, endpoint: M2MEndpoint(), bus: bus).bindByDevice(user, did: did).rawValue
            if let homeID = record.homeID {
                do {
                    try await HomeService(database: database, bus: bus).place(user, id: homeID, did: did, room: nil)
                    placed = homeID
                } catch {
                    // Bound all the same: the app shows the device and says why it is not in the home.
                    failure = (error as? CloudAPIError) ?? CloudAPIError.serverError(detail: "the device could not be placed in the home")
                }
            }
        } catch {
            // Whatever failed, the token's outcome is stored: never left used and unsettled.
            failure = (error as? CloudAPIError) ?? CloudAPIError.serverError(detail: "the pairing could not be completed")
        }
        try await store.settle(
            id: record.id, role: role, placedHomeID: placed, errorCode: failure?.code,
            message: failure.map { $0.detail.isEmpty ? $0.message : $0.detail })
        var settled = record
        settled.role = role
        settled.placedHomeID = placed
        settled.errorCode = failure.map { Int64($0.code) }
        settled.message = failure.map { $0.detail.isEmpty ? $0.message : $0.detail }
        settled.usedAt = now
        settled.did = did
        let outcome = try await status(settled)
        await bus.publish(.pairing(uid: record.uid, outcome))
        if role == nil, let failure { throw failure }
        return outcome
    }

    private func status(_ record: PairingTokenStore.Record) async throws -> PairingStatusBody {
        var device: DeviceRecord?
        if let did = record.did { device = try await DeviceStore(database).find(did) }
        return record.status(now: Clock.unixNow(), productKey: device?.productKey, mac: device?.mac)
    }
}
