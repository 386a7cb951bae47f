import TetherCloudProtocol
import TetherCore

/// The `users` table: accounts of each app, their credentials and profiles.
struct UserStore: Sendable {
    let executor: any SQLExecutor

    init(_ executor: any SQLExecutor) { self.executor = executor }

    /// What a login checks.
    struct Credentials: Sendable {
        var uid: String
        var passwordHash: String?
        var email: String?
        var emailConfirmed: Bool
        var isDisabled: Bool
    }

    /// How a new account is known, besides its uid: exactly one of these (a column of `users`
    /// each, under a unique index per app).
    enum Identity: Sendable {
        case username(String)
        case phone(String)
        case email(String)
        case anonymous(phoneID: String)
        case thirdParty(source: String, subject: String)

        var columns: [(name: String, value: SQLValue)] {
            switch self {
            case .username(let name): [("username", .text(name))]
            case .phone(let phone): [("phone", .text(phone))]
            case .email(let email): [("email", .text(email))]
            case .anonymous(let phoneID): [("is_anonymous", .int(1)), ("phone_id", .text(phoneID))]
            case .thirdParty(let source, let subject): [("third_party_src", .text(source)), ("third_party_uid", .text(subject))]
            }
        }
    }

    /// A column the profile update may set.
    enum Assignment: Sendable {
        case username(String)
        case phone(String)
        /// A new address, not confirmed yet.
        case email(String)
        /// An anonymous user becomes a real account: same uid, so the bindings stay; the
        /// phone_id is free again.
        case notAnonymous
        case profile(field: String, value: String)
        case passwordHash(String)

        var columns: [(name: String, value: SQLValue)] {
            switch self {
            case .username(let name): [("username", .text(name))]
            case .phone(let phone): [("phone", .text(phone))]
            case .email(let email): [("email", .text(email)), ("email_confirmed", .int(0))]
            case .notAnonymous: [("is_anonymous", .int(0)), ("phone_id", .null)]
            case .profile(let field, let value):
                UserUpdateBody.profileFields.contains(field) ? [(field, .text(value))] : []
            case .passwordHash(let hash): [("password_hash", .text(hash))]
            }
        }
    }

    /// Creates an account; a `StorageError` of kind `uniqueViolation` when its identity is taken.
    func insert(uid: String, appID: String, identity: Identity, passwordHash: String?, now: Int64) async throws(StorageError) {
        let columns = identity.columns
        let binds: [SQLValue] = [.text(uid), .text(appID), passwordHash.map(SQLValue.text) ?? .null, .int(now), .int(now)] + columns.map(\.value)
        let placeholders = (1...binds.count).map { "$\($0)" }.joined(separator: ", ")
        try await executor.query(
            "INSERT INTO users (uid, app_id, password_hash, created_at, updated_at\(columns.map { ", " + $0.name }.joined())) VALUES (\(placeholders))",
            binds
        )
    }

    /// The uid of the account of `appID` with this identity.
    func uid(appID: String, _ identity: Identity) async throws(StorageError) -> String? {
        let sql =
            switch identity {
            case .username: "SELECT uid FROM users WHERE app_id = $1 AND username = $2"
            case .phone: "SELECT uid FROM users WHERE app_id = $1 AND phone = $2"
            case .email: "SELECT uid FROM users WHERE app_id = $1 AND email = $2"
            case .anonymous: "SELECT uid FROM users WHERE app_id = $1 AND phone_id = $2"
            case .thirdParty: "SELECT uid FROM users WHERE app_id = $1 AND third_party_src = $2 AND third_party_uid = $3"
            }
        let values: [SQLValue] =
            switch identity {
            case .anonymous(let phoneID): [.text(phoneID)]
            default: identity.columns.map(\.value)
            }
        return try await executor.query(sql, [.text(appID)] + values).first?.text("uid")
    }

    /// The account a login name designates: a user name (as given or normalized), an e-mail
    /// address or a phone number.
    func credentials(appID: String, loginName name: String, normalized: String) async throws(StorageError) -> Credentials? {
        guard
            let row = try await executor.first(
                """
                SELECT uid, password_hash, email, email_confirmed, is_disabled FROM users
                WHERE app_id = $1 AND (username = $2 OR username = $4 OR email = $3 OR phone = $2)
                """,
                .text(appID), .text(name), .text(name.lowercased()), .text(normalized)
            )
        else { return nil }
        return Credentials(
            uid: try row.text("uid"), passwordHash: row.optionalText("password_hash"), email: row.optionalText("email"),
            emailConfirmed: try row.bool("email_confirmed"), isDisabled: try row.bool("is_disabled")
        )
    }

    func profile(uid: String) async throws(StorageError) -> UserBody? {
        guard
            let row = try await executor.first(
                """
                SELECT uid, username, phone, email, name, gender, birthday, address, lang, remark, is_anonymous
                FROM users WHERE uid = $1
                """,
                .text(uid)
            )
        else { return nil }
        func text(_ column: String) -> String { row.optionalText(column) ?? "" }
        return UserBody(
            uid: try row.text("uid"), username: text("username"), phone: text("phone"), email: text("email"), name: text("name"),
            gender: text("gender"), birthday: text("birthday"), address: text("address"), lang: text("lang"), remark: text("remark"),
            isAnonymous: try row.bool("is_anonymous")
        )
    }

    /// Whether the account is anonymous, and its password hash; nil when there is no account.
    func kind(uid: String) async throws(StorageError) -> (isAnonymous: Bool, passwordHash: String?)? {
        guard let row = try await executor.first("SELECT is_anonymous, password_hash FROM users WHERE uid = $1", .text(uid)) else { return nil }
        return (try row.bool("is_anonymous"), row.optionalText("password_hash"))
    }

    /// Applies `assignments` at once; a `uniqueViolation` when a user name, phone or address is taken.
    func update(uid: String, _ assignments: [Assignment], now: Int64) async throws(StorageError) {
        let columns = assignments.flatMap(\.columns) + [("updated_at", SQLValue.int(now))]
        let setList = columns.enumerated().map { "\($0.element.name) = $\($0.offset + 2)" }.joined(separator: ", ")
        try await executor.query("UPDATE users SET \(setList) WHERE uid = $1", [.text(uid)] + columns.map(\.value))
    }

    /// A new password, with every count of failed logins cleared.
    func setPasswordHash(uid: String, _ hash: String, now: Int64) async throws(StorageError) {
        try await executor.query(
            "UPDATE users SET password_hash = $2, failed_logins = 0, locked_until = 0, updated_at = $3 WHERE uid = $1",
            .text(uid), .text(hash), .int(now)
        )
    }

    /// Disables or enables the account; false when there is none.
    /// Locks the user's row (on PostgreSQL; SQLite's transaction holds the database), so that two
    /// requests counting the user's things at once cannot both pass a limit: call on a
    /// transaction before counting.
    func lockForCounting(uid: String) async throws(StorageError) {
        let lock = executor.dialect == .postgres ? " FOR UPDATE" : ""
        _ = try await executor.first("SELECT uid FROM users WHERE uid = $1\(lock)", .text(uid))
    }

    /// True for a user an operator disabled (and for no user at all).
    /// Which of `uids` are disabled (or gone).
    func disabled(_ uids: Set<String>) async throws(StorageError) -> Set<String> {
        guard !uids.isEmpty else { return [] }
        let list = uids.sorted()
        let placeholders = list.indices.map { "$\($0 + 1)" }.joined(separator: ", ")
        var active = Set<String>()
        for row in try await executor.query("SELECT uid, is_disabled FROM users WHERE uid IN (\(placeholders))", list.map(SQLValue.text)) {
            if try !row.bool("is_disabled") { active.insert(try row.text("uid")) }
        }
        return uids.subtracting(active)
    }

    func isDisabled(uid: String) async throws(StorageError) -> Bool {
        guard let row = try await executor.first("SELECT is_disabled FROM users WHERE uid = $1", .text(uid)) else { return true }
        return try row.bool("is_disabled")
    }

    func setDisabled(uid: String, _ disabled: Bool, now: Int64) async throws(StorageError) -> Bool {
        let rows = try await executor.query(
            "UPDATE users SET is_disabled = $2, updated_at = $3 WHERE uid = $1 RETURNING uid", .text(uid), .bool(disabled), .int(now)
        )
        return !rows.isEmpty
    }

    func confirmEmail(uid: String) async throws(StorageError) {
        try await executor.query("UPDATE users SET email_confirmed = 1 WHERE uid = $1", .text(uid))
    }
}
