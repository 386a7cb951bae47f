import Foundation
import TetherCloudProtocol
import TetherCore

/// `GET /app/users` and `PUT /app/users`: the profile, conversions of an anonymous user, and
/// password changes.
extension AccountService {
    func userInfo(_ user: AuthenticatedUser) async throws -> UserBody {
        guard let profile = try await UserStore(database).profile(uid: user.uid) else {
            throw CloudAPIError.userNotExist()
        }
        return profile
    }

    /// Applies every change the form asks for, or none (one transaction). A password change
    /// ends every session and answers a new token for the caller (a Tether extension:
    /// `token` and `expire_at` next to `updatedAt`).
    func updateUser(_ user: AuthenticatedUser, _ body: UserUpdateBody, client: SessionClient = SessionClient()) async throws -> UserUpdatedBody {
        guard let current = try await UserStore(database).kind(uid: user.uid) else {
            throw CloudAPIError.userNotExist()
        }
        let isAnonymous = current.isAnonymous
        var assignments: [UserStore.Assignment] = []
        var newPasswordHash: String?
        var confirmationFor: String?
        var changed = false

        if body.oldPassword != nil || body.newPassword != nil {
            let oldPassword = try Self.required(body.oldPassword, "old_pwd")
            let newPassword = try Self.required(body.newPassword, "new_pwd")
            try PasswordPolicy.check(newPassword, field: "new_pwd")
            guard let hash = current.passwordHash, try await hasher.verify(oldPassword, hash: hash) else {
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
            assignments.append(.username(username))
            newPasswordHash = try await hasher.hash(password)
        }
        if let phone = body.phone {
            try Validation.phone(phone)
            try await verifySMSCode(appID: user.appID, phone: phone, code: try Self.required(body.code, "code"))
            assignments.append(.phone(phone))
        }
        if let email = body.email {
            try Validation.email(email)
            assignments.append(.email(email.lowercased()))
            confirmationFor = email.lowercased()
            if isAnonymous, newPasswordHash == nil, let password = body.password {
                try PasswordPolicy.check(password)
                newPasswordHash = try await hasher.hash(password)
            }
        }
        if !assignments.isEmpty, isAnonymous {
            assignments.append(.notAnonymous)
        }
        for field in UserUpdateBody.profileFields {
            guard let value = body.profile[field] else { continue }
            try Self.validateProfile(field, value)
            assignments.append(.profile(field: field, value: value))
        }
        if let newPasswordHash {
            assignments.append(.passwordHash(newPasswordHash))
        }
        changed = !assignments.isEmpty
        guard changed else {
            throw CloudAPIError.formInvalid(
                detail: "nothing to change: expected profile fields, username and password, phone and code, email, or old_pwd and new_pwd")
        }

        let now = Clock.unixNow()
        let changes = assignments
        let passwordChanged = body.oldPassword != nil
        let session: UserSession?
        do {
            session = try await database.transaction { transaction in
                try await UserStore(transaction).update(uid: user.uid, changes, now: now)
                guard passwordChanged else { return nil }
                try await revokeTokens(uid: user.uid, on: transaction)
                return try await issueToken(uid: user.uid, appID: user.appID, on: transaction, client: client)
            }
        } catch let error as StorageError where error.kind == .uniqueViolation {
            // The first identity the change sets is the one taken, as before.
            let identity = assignments.lazy.compactMap { assignment -> CloudAPIError? in
                switch assignment {
                case .username: .usernameUnavailable()
                case .phone: .phoneUnavailable()
                case .email: .emailUnavailable()
                default: nil
                }
            }.first
            throw identity ?? CloudAPIError.usernameUnavailable()
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
            let valid =
                (parts.count == 3 && parts[0].count == 4 || parts.count == 2)
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
