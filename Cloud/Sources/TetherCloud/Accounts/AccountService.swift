import Foundation
public import Logging
import TetherCore
import TetherCloudProtocol

/// Users, their tokens and their credentials: everything behind `/app/users`, `/app/login`,
/// `/app/request_token`, `/app/sms_code` and `/app/reset_password`.
public struct AccountService: Sendable {
    let database: any SQLDatabase
    let sender: any MessageSender
    let policy: AccountPolicy
    /// The base of links in e-mails, as users' browsers reach this server.
    let publicURL: String
    let tokenVerifier: ThirdPartyTokenVerifier
    let logger: Logger
    let abuse: AbusePolicy
    let limiter: RateLimiter
    /// Where revocations are announced, so that every node ends the live sessions they concern.
    let bus: (any ClusterBus)?

    var hasher: PasswordHasher { PasswordHasher(cost: policy.bcryptCost) }

    public init(
        database: any SQLDatabase, sender: any MessageSender, policy: AccountPolicy, publicURL: String,
        tokenVerifier: ThirdPartyTokenVerifier, abuse: AbusePolicy = AbusePolicy(), bus: (any ClusterBus)? = nil, logger: Logger
    ) {
        self.abuse = abuse
        self.limiter = RateLimiter(database: database)
        self.bus = bus
        self.database = database
        self.sender = sender
        self.policy = policy
        self.publicURL = publicURL
        self.tokenVerifier = tokenVerifier
        self.logger = logger
    }

    // MARK: Apps

    /// The app named by `X-Gizwits-Application-Id`; 9003 when there is none.
    func requireApp(_ appID: String?) async throws -> AppRecord {
        guard let appID, !appID.isEmpty else { throw CloudAPIError.appIDInvalid(detail: "X-Gizwits-Application-Id is required") }
        guard let app = try await AppStore(database).find(appID) else {
            throw CloudAPIError.appIDInvalid(detail: "no app has this id")
        }
        return app
    }

    // MARK: App tokens

    /// `POST /app/request_token`: an app token for the SMS endpoints, given
    /// `X-Gizwits-Application-Auth` = md5(appid + appsecret).
    func requestAppToken(app: AppRecord, auth: String?) async throws -> (token: String, expiredAt: Int64) {
        guard let auth, Secrets.constantTimeEquals(auth.lowercased(), Secrets.md5(app.appID + app.secret)) else {
            throw CloudAPIError.applicationAuthInvalid()
        }
        let token = Secrets.hex(bytes: 16)
        let expiredAt = Clock.unixNow() + policy.appTokenLifetime
        try await TokenStore(database).insertAppToken(tokenHash: Secrets.sha256(token), appID: app.appID, expiresAt: expiredAt)
        return (token, expiredAt)
    }

    /// Checks `X-Gizwits-Application-Token`.
    func verifyAppToken(appID: String, token: String?) async throws {
        guard let token, !token.isEmpty else {
            throw CloudAPIError.tokenInvalid(detail: "X-Gizwits-Application-Token is required")
        }
        guard let expiresAt = try await TokenStore(database).appTokenExpiry(tokenHash: Secrets.sha256(token), appID: appID) else {
            throw CloudAPIError.tokenInvalid(detail: "unknown application token")
        }
        guard expiresAt > Clock.unixNow() else { throw CloudAPIError.tokenExpired(detail: "application token expired") }
    }

    // MARK: Registration and login

    /// `POST /app/users`, one of the reference's registration forms.
    func register(app: AppRecord, _ body: RegistrationBody, client: SessionClient = SessionClient()) async throws -> UserSession {
        let appID = app.appID
        switch body {
        case .anonymous(let phoneID):
            return try await anonymousLogin(appID: appID, phoneID: phoneID, client: client)
        case .thirdParty(let source, let uid, let token):
            return try await thirdPartyLogin(app: app, source: source, claimedUID: uid, token: token, client: client)
        case .username(let given, let password):
            let username = Validation.normalizedName(given)
            try Validation.username(username)
            try PasswordPolicy.check(password)
            return try await createUser(appID: appID, identity: .username(username), password: password, duplicate: .usernameUnavailable(), client: client)
        case .phone(let phone, let code, let password):
            try Validation.phone(phone)
            try PasswordPolicy.check(password)
            try await verifySMSCode(appID: appID, phone: phone, code: code)
            return try await createUser(appID: appID, identity: .phone(phone), password: password, duplicate: .phoneUnavailable(), client: client)
        case .email(let email, let password):
            try Validation.email(email)
            try PasswordPolicy.check(password)
            let session = try await createUser(
                appID: appID, identity: .email(email.lowercased()), password: password, duplicate: .emailUnavailable(), client: client)
            try await sendEmailLink(uid: session.uid, email: email.lowercased(), purpose: .confirmEmail)
            return session
        }
    }

    static let thirdPartySources: Set<String> = ["qq", "sina", "baidu", "wechat", "twitter", "facebook", "google", "amazon"]

    /// `{src, uid, token}`: the token is the third party's ID token (a JWT), verified against the
    /// key set configured for the app; `uid` must be its subject. The same subject logs in as
    /// the same user every time.
    private func thirdPartyLogin(app: AppRecord, source: String, claimedUID: String, token: String, client: SessionClient) async throws -> UserSession {
        guard Self.thirdPartySources.contains(source) else {
            throw CloudAPIError.formInvalid(detail: "src must be one of \(Self.thirdPartySources.sorted().joined(separator: ", "))")
        }
        var token = token
        if token.hasPrefix("Bearer ") { token.removeFirst("Bearer ".count) }
        guard let issuer = app.thirdParty else {
            throw CloudAPIError.formInvalid(detail: "third-party login is not configured for this app (tether-cloud admin app configure --jwks-url)")
        }
        let subject = try await tokenVerifier.verify(token, issuer: issuer)
        guard subject == claimedUID else {
            throw CloudAPIError.tokenInvalid(detail: "uid is not the token's subject")
        }
        return try await loginOrCreate(appID: app.appID, identity: .thirdParty(source: source, subject: subject), client: client)
    }

    private func anonymousLogin(appID: String, phoneID: String, client: SessionClient) async throws -> UserSession {
        guard !phoneID.isEmpty, phoneID.count <= 128 else { throw CloudAPIError.formInvalid(detail: "phone_id must have 1 to 128 characters") }
        return try await loginOrCreate(appID: appID, identity: .anonymous(phoneID: phoneID), client: client)
    }

    /// Logs in the account with a password-less identity (an anonymous phone, a third party's
    /// subject), created at its first login.
    private func loginOrCreate(appID: String, identity: UserStore.Identity, client: SessionClient) async throws -> UserSession {
        let users = UserStore(database)
        if let uid = try await users.uid(appID: appID, identity) {
            return try await issueToken(uid: uid, appID: appID, on: database, client: client)
        }
        do {
            return try await createUser(appID: appID, identity: identity, password: nil, duplicate: .formInvalid(), client: client)
        } catch let error as CloudAPIError where error.code == CloudAPIError.formInvalid().code {
            // Two first logins with one identity raced: the other one created the user.
            guard let uid = try await users.uid(appID: appID, identity) else { throw error }
            return try await issueToken(uid: uid, appID: appID, on: database, client: client)
        }
    }

    private func createUser(
        appID: String, identity: UserStore.Identity, password: String?, duplicate: CloudAPIError, client: SessionClient
    ) async throws -> UserSession {
        let uid = Secrets.hex(bytes: 16)
        let passwordHash: String? = if let password { try await hasher.hash(password) } else { nil }
        do {
            return try await database.transaction { transaction in
                try await UserStore(transaction).insert(uid: uid, appID: appID, identity: identity, passwordHash: passwordHash, now: Clock.unixNow())
                return try await issueToken(uid: uid, appID: appID, on: transaction, client: client)
            }
        } catch let error as StorageError where error.kind == .uniqueViolation {
            throw duplicate
        }
    }

    /// `POST /app/login`: `username` may be a user name, an e-mail address or a phone number.
    ///
    /// Wrong passwords are counted per account and source (``AbusePolicy``): after a few each
    /// further attempt is answered late, and past the limit that source is locked out of the
    /// account for the rest of the window while its owner, elsewhere, still logs in. Only far
    /// more failures, from many sources together, lock the account for everyone.
    func login(appID: String, _ body: LoginBody, client: SessionClient) async throws -> UserSession {
        let name = body.username
        let password = body.password
        guard let account = try await UserStore(database).credentials(appID: appID, loginName: name, normalized: Validation.normalizedName(name)),
            let storedHash = account.passwordHash
        else {
            // Hash anyway, so that the answer takes as long as for a real account.
            _ = try await hasher.hash(password)
            throw CloudAPIError.usernamePasswordError()
        }
        let uid = account.uid
        let sourceKey = "login:\(uid):\(client.source.key)"
        let accountKey = "login:\(uid)"
        // Counted before the password is checked, so that parallel attempts cannot all pass a
        // check made before any of them was counted; a success takes its count back.
        let bySource = try await limiter.consume(sourceKey, abuse.loginFailuresPerAccountAndSource)
        let byAccount = try await limiter.consume(accountKey, abuse.loginFailuresPerAccount)
        try bySource.require("too many failed logins from this address; try again later")
        // The account-wide limit does not hold back a source that has a session of this account:
        // its owner's phone keeps logging in while strangers guess from many addresses.
        var accountLimited = byAccount.count >= abuse.loginFailuresPerAccount.count
        if accountLimited, try await TokenStore(database).hasSession(uid: uid, source: client.source.key) {
            accountLimited = false
        }
        if accountLimited { try byAccount.require("too many failed logins for this account; try again later") }
        guard try await hasher.verify(password, hash: storedHash) else {
            try await failedLogin(uid: uid, bySource: bySource, byAccount: byAccount, accountLimited: accountLimited)
        }
        guard !account.isDisabled else {
            throw CloudAPIError.userInvalid(detail: "this account is disabled")
        }
        if account.email == name.lowercased(), !account.emailConfirmed {
            throw CloudAPIError.emailNotActivated(detail: "open the link in the confirmation e-mail first")
        }
        try await limiter.reset(sourceKey, abuse.loginFailuresPerAccountAndSource)
        try await limiter.refund(accountKey, abuse.loginFailuresPerAccount)
        return try await issueToken(uid: uid, appID: appID, on: database, client: client)
    }

    private func failedLogin(uid: String, bySource: RateLimiter.Decision, byAccount: RateLimiter.Decision, accountLimited: Bool) async throws -> Never {
        if bySource.count >= abuse.loginFailuresPerAccountAndSource.count || accountLimited {
            logger.notice(
                "logins locked after failed attempts",
                metadata: [
                    "uid": "\(uid)", "from this source": "\(bySource.count)", "from all sources": "\(byAccount.count)",
                ])
            let window = max(abuse.loginFailuresPerAccountAndSource.window, abuse.loginFailuresPerAccount.window)
            throw CloudAPIError.requestThrottled(detail: "too many failed logins; locked for a while", retryAfter: window)
        }
        if bySource.count > policy.slowAfterFailures {
            let delay = min(policy.maximumDelay, Double(bySource.count - policy.slowAfterFailures) * policy.delayPerFailure)
            try await Task.sleep(for: .seconds(delay))
        }
        throw CloudAPIError.usernamePasswordError()
    }
}
