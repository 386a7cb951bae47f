import Foundation
import TetherCloudProtocol
import TetherCore

/// `GET /app/users` and `PUT /app/users`: the profile, conversions of an anonymous user, and
/// password changes.
extension AccountService {
    func userInfo(_ user: AuthenticatedUser) async throws -> UserBody {
        guard let row = try await database.first(
            """
            SELECT uid, username, phone, email, name, gender, birthday, address, lang, remark, is_anonymous
            FROM users WHERE uid = $1
            """,
            .text(user.uid)
        ) else {
            throw CloudAPIError.userNotExist()
        }
        func text(_ column: String) -> String { row.optionalText(column) ?? "" }
        return UserBody(
            uid: try row.text("uid"), username: text("username"), phone: text("phone"), email: text("email"), name: text("name"),
            gender: text("gender"), birthday: text("birthday"), address: text("address"), lang: text("lang"), remark: text("remark"),
            isAnonymous: try row.bool("is_anonymous")
        )
    }

    /// Applies every change the form asks for, or none (one transaction). A password change
    /// ends every session and answers a new token for the caller (a Tether extension:
    /// `token` and `expire_at` next to `updatedAt`).
    func updateUser(_ user: AuthenticatedUser, _ body: UserUpdateBody, client: SessionClient = SessionClient()) async throws -> UserUpdatedBody {
        guard let current = try await database.first(
            "SELECT is_anonymous, password_hash FROM users WHERE uid = $1", .text(user.uid)
        ) else {
            throw CloudAPIError.userNotExist()
        }
        let isAnonymous = try current.bool("is_anonymous")
        var assignments: [(column: String, value: SQLValue)] = []
        var newPasswordHash: String?
        var confirmationFor: String?
        var changed = false

        if body.oldPassword != nil || body.newPassword != nil {
            let oldPassword = try Self.required(body.oldPassword, "old_pwd")
            let newPassword = try Self.required(body.newPassword, "new_pwd")
            try PasswordPolicy.check(newPassword, field: "new_pwd")
            guard let hash = current.optionalText("password_hash"), try await hasher.verify(oldPassword, hash: hash) else {
                throw CloudAPIError.usernamePasswordError(detail: "old_pwd is wrong")
            }
            newPasswordHash = try await hasher.hash(newPassword)
        }
        if let given = body.username {
            guard isAnonymous else { throw CloudAPIError.formInvalid(detail: "only an anonymous user can take a username") }
            let username = Validation.normalizedName(given)
            try Validation.username(username)
            let password = try Self.required(body.password, "password")
            try PasswordPolicy.check(password)
            assignments.append(("username", .text(username)))
            newPasswordHash = try await hasher.hash(password)
        }
        if let phone = body.phone {
            try Validation.phone(phone)
            try await verifySMSCode(appID: user.appID, phone: phone, code: try Self.required(body.code, "code"))
            assignments.append(("phone", .text(phone)))
        }
        if let email = body.email {
            try Validation.email(email)
            assignments.append(("email", .text(email.lowercased())))
            assignments.append(("email_confirmed", .int(0)))
            confirmationFor = email.lowercased()
            if isAnonymous, newPasswordHash == nil, let password = body.password {
                try PasswordPolicy.check(password)
                newPasswordHash = try await hasher.hash(password)
            }
        }
        if !assignments.isEmpty, isAnonymous {
            // A real account now: same uid, so the bindings stay; the phone_id is free again.
            assignments.append(("is_anonymous", .int(0)))
            assignments.append(("phone_id", .null))
        }
        for field in UserUpdateBody.profileFields {
            guard let value = body.profile[field] else { continue }
            try Self.validateProfile(field, value)
            assignments.append((field, .text(value)))
        }
        if let newPasswordHash {
            assignments.append(("password_hash", .text(newPasswordHash)))
        }
        changed = !assignments.isEmpty
        guard changed else {
            throw CloudAPIError.formInvalid(detail: "nothing to change: expected profile fields, username and password, phone and code, email, or old_pwd and new_pwd")
        }

        let now = Clock.unixNow()
        assignments.append(("updated_at", .int(now)))
        let setList = assignments.enumerated().map { "\($0.element.column) = $\($0.offset + 2)" }.joined(separator: ", ")
        let binds = [SQLValue.text(user.uid)] + assignments.map(\.value)
        let passwordChanged = body.oldPassword != nil
        let session: UserSession?
        do {
            session = try await database.transaction { transaction in
                try await transaction.query("UPDATE users SET \(setList) WHERE uid = $1", binds)
                guard passwordChanged else { return nil }
                try await revokeTokens(uid: user.uid, on: transaction)
                return try await issueToken(uid: user.uid, appID: user.appID, on: transaction, client: client)
            }
        } catch let error as StorageError where error.kind == .uniqueViolation {
            let column = assignments.first { ["username", "phone", "email"].contains($0.column) }?.column
            throw switch column {
            case "phone": CloudAPIError.phoneUnavailable()
            case "email": CloudAPIError.emailUnavailable()
            default: CloudAPIError.usernameUnavailable()
            }
        }
        if passwordChanged { await announce(uid: user.uid) }
        if let confirmationFor {
            try await sendEmailLink(uid: user.uid, email: confirmationFor, purpose: .confirmEmail)
        }
        return UserUpdatedBody(updatedAt: Self.isoTime(now), token: session?.token, expireAt: session?.expireAt)
    }

    private static func required(_ value: String?, _ field: String) throws(CloudAPIError) -> String {
        guard let value, !value.isEmpty else { throw .formInvalid(detail: "\(field) is required") }
        return value
    }

    private static func validateProfile(_ field: String, _ value: String) throws(CloudAPIError) {
        try Validation.displayText(value, field: field)
        switch field {
        case "gender":
            guard ["M", "F", "N"].contains(value) else { throw .formInvalid(detail: "gender must be M, F or N") }
        case "birthday":
            let parts = value.split(separator: "-")
            let valid = (parts.count == 3 && parts[0].count == 4 || parts.count == 2)
                && parts.allSatisfy { !$0.isEmpty && $0.allSatisfy(\.isNumber) }
            guard valid || value.isEmpty else { throw .formInvalid(detail: "birthday must be YYYY-MM-DD or MM-DD") }
        default:
            break
        }
    }

    static func isoTime(_ seconds: Int64) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.timeZone = TimeZone(identifier: "UTC")
        return formatter.string(from: Date(timeIntervalSince1970: TimeInterval(seconds)))
    }
}
