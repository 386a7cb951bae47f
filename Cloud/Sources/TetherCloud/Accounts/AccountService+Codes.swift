import Foundation
import Logging
import TetherCloudProtocol

/// SMS verification codes and the links of confirmation and reset e-mails.
extension AccountService {
    enum EmailLinkPurpose: String {
        case confirmEmail = "confirm_email"
        case resetPassword = "reset_password"
    }

    private func codeHash(appID: String, phone: String, code: String) -> String {
        Secrets.sha256("\(appID):\(phone):\(code)")
    }

    /// `POST /app/sms_code {phone}`: sends a six-digit code, at most one per number per
    /// `smsMinimumInterval` and `smsMaximumPerHour` per hour.
    func sendSMSCode(appID: String, phone: String) async throws {
        try Validation.phone(phone)
        let now = Clock.unixNow()
        let codes = VerificationStore(database)
        let recent = try await codes.codeTimes(appID: appID, phone: phone, since: now - 3600)
        if let last = recent.max(), now - last < policy.smsMinimumInterval {
            throw CloudAPIError.requestThrottled(
                detail: "a code was sent to this number less than \(policy.smsMinimumInterval) s ago", retryAfter: policy.smsMinimumInterval - (now - last))
        }
        if recent.count >= policy.smsMaximumPerHour {
            throw CloudAPIError.requestThrottled(detail: "at most \(policy.smsMaximumPerHour) codes per number per hour", retryAfter: 3600)
        }
        let code = Secrets.digits(6)
        try await codes.insertCode(
            appID: appID, phone: phone, codeHash: codeHash(appID: appID, phone: phone, code: code), expiresAt: now + policy.smsCodeLifetime, now: now
        )
        do {
            try await sender.send(
                OutgoingMessage(
                    channel: .sms, recipient: phone, subject: "verification code",
                    body: "Your verification code is \(code). It is valid for \(policy.smsCodeLifetime / 3600) hours."
                ))
        } catch {
            logger.error("sending an SMS failed", metadata: ["error": "\(error)"])
            throw CloudAPIError.sendSMSFailed()
        }
    }

    /// Checks the newest code sent to `phone`; a correct code is used up. Five wrong guesses
    /// void it.
    func verifySMSCode(appID: String, phone: String, code: String) async throws {
        let codes = VerificationStore(database)
        guard let sent = try await codes.newestUnusedCode(appID: appID, phone: phone) else {
            throw CloudAPIError.codeInvalid(detail: "no code was sent to this number, or it was used")
        }
        guard sent.expiresAt > Clock.unixNow() else { throw CloudAPIError.codeExpired() }
        guard Secrets.constantTimeEquals(sent.codeHash, codeHash(appID: appID, phone: phone, code: code)) else {
            let attempts = sent.attempts + 1
            try await codes.recordWrongGuess(id: sent.id, attempts: attempts, void: attempts >= policy.smsMaximumAttempts)
            throw CloudAPIError.codeInvalid()
        }
        try await codes.useCode(id: sent.id)
    }

    func sendEmailLink(uid: String, email: String, purpose: EmailLinkPurpose) async throws {
        let token = Secrets.hex(bytes: 20)
        try await VerificationStore(database).insertEmailLink(
            tokenHash: Secrets.sha256(token), uid: uid, purpose: purpose.rawValue, expiresAt: Clock.unixNow() + policy.emailLinkLifetime
        )
        let message =
            switch purpose {
            case .confirmEmail:
                OutgoingMessage(
                    channel: .email, recipient: email, subject: "Confirm your e-mail address",
                    body: "Open this link to confirm your address:\n\(publicURL)/app/users/confirm_email?token=\(token)\n"
                )
            case .resetPassword:
                OutgoingMessage(
                    channel: .email, recipient: email, subject: "Reset your password",
                    body: """
                        To choose a new password, send it with this token to \(publicURL)/app/reset_password/confirm \
                        ({"token": "\(token)", "new_pwd": "…"}).
                        token: \(token)

                        """
                )
            }
        try await sender.send(message)
    }

    /// Uses up an e-mail link and returns its user.
    func consumeEmailLink(token: String, purpose: EmailLinkPurpose, on executor: any SQLExecutor) async throws -> String {
        guard
            let uid = try await VerificationStore(executor).consumeEmailLink(tokenHash: Secrets.sha256(token), purpose: purpose.rawValue, now: Clock.unixNow())
        else {
            throw CloudAPIError.codeInvalid(detail: "the link is unknown, used or expired")
        }
        return uid
    }

    /// `GET /app/users/confirm_email?token=` (the link of the confirmation e-mail).
    func confirmEmail(token: String) async throws {
        try await database.transaction { transaction in
            let uid = try await consumeEmailLink(token: token, purpose: .confirmEmail, on: transaction)
            try await UserStore(transaction).confirmEmail(uid: uid)
        }
    }

    /// `POST /app/reset_password`: `{email}` mails a link; `{phone, new_pwd, code}` resets at once.
    /// An unknown e-mail address is answered like a known one, so the endpoint tells no one who
    /// has an account.
    func resetPassword(appID: String, _ body: PasswordResetBody) async throws {
        switch body {
        case .email(let email):
            try Validation.email(email)
            if let uid = try await UserStore(database).uid(appID: appID, .email(email.lowercased())) {
                try await sendEmailLink(uid: uid, email: email.lowercased(), purpose: .resetPassword)
            }
        case .phone(let phone, let code, let newPassword):
            try PasswordPolicy.check(newPassword, field: "new_pwd")
            try await verifySMSCode(appID: appID, phone: phone, code: code)
            guard let uid = try await UserStore(database).uid(appID: appID, .phone(phone)) else {
                throw CloudAPIError.userNotExist()
            }
            try await setPassword(uid: uid, newPassword)
        }
    }

    /// `POST /app/reset_password/confirm {token, new_pwd}`: the second step of a reset by e-mail.
    func completePasswordReset(_ body: PasswordResetConfirmBody) async throws {
        let token = body.token
        let newPassword = body.newPassword
        try PasswordPolicy.check(newPassword, field: "new_pwd")
        let hash = try await hasher.hash(newPassword)
        let uid = try await database.transaction { transaction in
            let uid = try await consumeEmailLink(token: token, purpose: .resetPassword, on: transaction)
            try await storePassword(uid: uid, hash: hash, on: transaction)
            return uid
        }
        await announce(uid: uid)
    }

    /// Sets a new password, ends every session and lifts a lockout.
    func setPassword(uid: String, _ password: String) async throws {
        let hash = try await hasher.hash(password)
        try await database.transaction { transaction in
            try await storePassword(uid: uid, hash: hash, on: transaction)
        }
        await announce(uid: uid)
    }

    private func storePassword(uid: String, hash: String, on executor: any SQLExecutor) async throws {
        try await UserStore(executor).setPasswordHash(uid: uid, hash, now: Clock.unixNow())
        try await revokeTokens(uid: uid, on: executor)
        // The owner proved who they are: failed logins from anywhere no longer hold them back.
        try await RateLimiter(database: executor).forget(keyAndBelow: "login:\(uid)")
    }
}
