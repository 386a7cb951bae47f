#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Logging
import Synchronization
public import TetherCloudClient
import TetherCloudProtocol

/// What happens to the user's session.
public enum AccountEvent: Sendable, Hashable {
    case loggedIn(uid: String)
    case loggedOut
    /// The session was renewed before it expired; nothing for the user to do.
    case sessionRenewed
    /// The session is over and could not be renewed (it expired, or the password changed on
    /// another device): the user must log in again. Sent once per session.
    case sessionExpired
}

/// The user's account with the cloud: every registration and login mode of the Gizwits SDK,
/// the session kept in a ``SessionStore`` across launches and renewed before it expires.
///
/// ```swift
/// try await client.account!.login(username: "alice", password: "Passw0rd!")
/// let user = try await client.account!.userInfo()
/// ```
public final class TetherAccount: Sendable {
    /// The cloud's Open API with this client's app ID, for calls the account does not wrap; pass
    /// it ``validSession()``.
    public let api: TetherCloudAPI
    let store: any SessionStore
    let renewBefore: Duration
    let logger: Logger
    private let current = Mutex<CloudSession?>(nil)
    /// Why there is no session, when it ended rather than never began: every call says so, not
    /// only the first to find out.
    private let ended = Mutex<String?>(nil)
    private let eventBroadcast = Broadcast<AccountEvent>(bufferSize: 64)
    /// The renewal under way, which every request that needs one waits for.
    private let renewal = Mutex<AsyncPromise<CloudSession, TetherError>?>(nil)

    init(api: TetherCloudAPI, store: any SessionStore, renewBefore: Duration, logger: Logger) {
        self.api = api
        self.store = store
        self.renewBefore = renewBefore
        self.logger = logger
        let stored = try? store.load()
        current.withLock { $0 = stored ?? nil }
    }

    /// The session now (loaded from the store at start), nil when nobody is logged in.
    public var session: CloudSession? { current.withLock { $0 } }

    /// Whether a session is held (it may still turn out to be revoked on its next use).
    public var isLoggedIn: Bool { session != nil }

    /// Account events from now on.
    public func events() -> AsyncStream<AccountEvent> { eventBroadcast.subscribe() }

    // MARK: Logging in

    /// Creates an account with a username and password and logs in with it.
    @discardableResult
    public func register(username: String, password: String) async throws(TetherError) -> CloudSession {
        try adopt(try await api.register(username: username, password: password))
    }

    /// Creates an account with a phone number and the SMS code sent to it (``requestSMSCode(phone:)``)
    /// and logs in with it.
    @discardableResult
    public func register(phone: String, code: String, password: String) async throws(TetherError) -> CloudSession {
        try adopt(try await api.register(phone: phone, code: code, password: password))
    }

    /// Registers by e-mail; the user logs in once the confirmation link was opened.
    public func register(email: String, password: String) async throws(TetherError) {
        try await api.register(email: email, password: password)
    }

    /// Logs in with a username (or phone number, or e-mail address) and password.
    @discardableResult
    public func login(username: String, password: String) async throws(TetherError) -> CloudSession {
        try adopt(try await api.login(username: username, password: password))
    }

    /// Logs in as the anonymous user of this phone (`phoneID`: a stable id of the installation);
    /// ``convertAnonymous(username:password:)`` turns the account into a named one later.
    @discardableResult
    public func loginAnonymously(phoneID: String) async throws(TetherError) -> CloudSession {
        try adopt(try await api.loginAnonymously(phoneID: phoneID))
    }

    /// Logs in with a third party's ID token (`source`: the provider, as configured for the app).
    @discardableResult
    public func login(thirdParty source: String, uid: String, token: String) async throws(TetherError) -> CloudSession {
        try adopt(try await api.login(thirdParty: source, uid: uid, token: token))
    }

    /// Asks the cloud to send a verification code to `phone` (needs the app secret).
    public func requestSMSCode(phone: String) async throws(TetherError) { try await api.requestSMSCode(phone: phone) }
    /// Sets a new password with the SMS code sent to `phone`.
    public func resetPassword(phone: String, code: String, newPassword: String) async throws(TetherError) {
        try await api.resetPassword(phone: phone, code: code, newPassword: newPassword)
    }
    /// Sends a password-reset link to `email`.
    public func resetPassword(email: String) async throws(TetherError) { try await api.resetPassword(email: email) }

    /// Forgets the session, here and in the store.
    public func logout() {
        current.withLock { $0 = nil }
        ended.withLock { $0 = nil }
        try? store.save(nil)
        eventBroadcast.yield(.loggedOut)
    }

    // MARK: The logged-in user

    /// The logged-in user's profile.
    public func userInfo() async throws(TetherError) -> CloudUser {
        try await withSession { session throws(TetherError) in try await api.userInfo(session) }
    }

    /// A single-use token for a device of the user's to bind itself with: the `iotToken` of
    /// `/sys/{pk}/{dn}/account/bind`, sent through `TetherChannel` (TetherAlink) by the phone acting as a
    /// device. It stops working after a few minutes, once used, or when this session ends.
    public func iotToken() async throws(TetherError) -> String {
        try await withSession { session throws(TetherError) in try await api.iotToken(session).token }
    }

    /// A pairing token for a new device (valid ten minutes, once): ``TetherClient/onboard(_:progress:)``
    /// gets one itself; this is for a device set up some other way. A token for a product binds
    /// only that product's devices; one for a home places the device in it.
    public func pairingToken(productKey: String? = nil, homeID: Int64? = nil) async throws(TetherError) -> PairingToken {
        try await withSession { session throws(TetherError) in try await api.pairingToken(session, productKey: productKey, homeID: homeID) }
    }

    /// Where a pairing stands.
    public func pairingStatus(id: String) async throws(TetherError) -> PairingStatus {
        try await withSession { session throws(TetherError) in try await api.pairingStatus(session, id: id) }
    }

    /// Changes the password; the cloud ends every other session of the user, this one goes on
    /// with the new token.
    public func changePassword(old: String, new: String) async throws(TetherError) {
        let renewed = try await withSession { session throws(TetherError) in try await api.changePassword(session, old: old, new: new) }
        try store(renewed)
    }

    /// Turns an anonymous user into a named one, keeping the uid and the bound devices.
    public func convertAnonymous(username: String, password: String) async throws(TetherError) {
        try await withSession { session throws(TetherError) in try await api.convertAnonymous(session, username: username, password: password) }
    }

    // MARK: Session

    /// A session that is valid now: renewed first when it expires within `renewBefore`.
    /// Throws `TetherError.Code.notLoggedIn` when there is none, or when it is over (and then
    /// sends ``AccountEvent/sessionExpired`` once).
    public func validSession() async throws(TetherError) -> CloudSession {
        guard let session else {
            throw TetherError(.notLoggedIn, ended.withLock { $0 } ?? "nobody is logged in")
        }
        let now = Self.unixNow()
        guard session.expireAt - now <= renewBefore.components.seconds else { return session }
        guard session.expireAt > now else {
            expire(session)
            throw TetherError(.notLoggedIn, "the session expired; log in again")
        }
        return try await renew(session)
    }

    /// Runs `operation` with a valid session; a session the cloud says is over is reported
    /// once and the error rethrown.
    func withSession<Result: Sendable>(_ operation: (CloudSession) async throws(TetherError) -> Result) async throws(TetherError) -> Result {
        let session = try await validSession()
        do {
            return try await operation(session)
        } catch let error where error.code == .notLoggedIn {
            expire(session)
            throw error
        }
    }

    private func renew(_ session: CloudSession) async throws(TetherError) -> CloudSession {
        // One renewal at a time, however many requests need it: the first asks, the others wait.
        let (renewed, asks) = renewal.withLock { running -> (AsyncPromise<CloudSession, TetherError>, Bool) in
            if let running { return (running, false) }
            let promise = AsyncPromise<CloudSession, TetherError>()
            running = promise
            return (promise, true)
        }
        if asks {
            // Stored and announced once, by the one who asked.
            let result: Result<CloudSession, TetherError>
            do {
                let fresh = try await api.refresh(session)
                try store(fresh)
                result = .success(fresh)
            } catch {
                result = .failure(error)
            }
            renewal.withLock { $0 = nil }
            renewed.resolve(result)
            if case .success = result {
                eventBroadcast.yield(.sessionRenewed)
                logger.debug("session renewed")
            }
        }
        do {
            return try await renewed.value(ifCancelled: { TetherError(.cancelled, "cancelled while the session was renewed") })
        } catch let error where error.code == .notLoggedIn {
            expire(session)
            throw error
        } catch {
            // Not renewed now (the cloud is unreachable): the session is still valid until it expires.
            logger.debug("session renewal postponed", metadata: ["tether.error": "\(error)"])
            return session
        }
    }

    /// The session is over: forget it and say so, once.
    private func expire(_ session: CloudSession) {
        let wasCurrent = current.withLock { current -> Bool in
            guard current == session else { return false }
            current = nil
            return true
        }
        guard wasCurrent else { return }
        ended.withLock { $0 = "the session is over (expired, or ended by a password change); log in again" }
        try? store.save(nil)
        eventBroadcast.yield(.sessionExpired)
    }

    private func adopt(_ session: CloudSession) throws(TetherError) -> CloudSession {
        try store(session)
        eventBroadcast.yield(.loggedIn(uid: session.uid))
        return session
    }

    private func store(_ session: CloudSession) throws(TetherError) {
        current.withLock { $0 = session }
        ended.withLock { $0 = nil }
        do {
            try store.save(session)
        } catch {
            throw TetherError(.invalidArgument, "the session could not be stored: \(error)")
        }
    }

    static func unixNow() -> Int64 { Int64(Date().timeIntervalSince1970) }

    func finish() { eventBroadcast.finish() }
}
