import Hummingbird
import TetherCore
import TetherCloudProtocol

/// `/app/users`, `/app/login`, `/app/request_token`, `/app/sms_code`, `/app/reset_password`.
struct AccountRoutes<Context: RemoteAddressRequestContext> {
    let accounts: AccountService
    let metrics: CloudMetrics
    let sources: ClientSourceResolver

    func client(_ request: Request, _ context: Context) -> SessionClient {
        SessionClient(source: sources.source(of: request, context: context), userAgent: request.headers[.userAgent])
    }

    func register(on router: DocumentedRouter<Context>) {
        router.on(
            .init(
                method: .post, path: "/app/users", summary: "Register (username, phone + code, e-mail) or log in anonymously (phone_id)",
                tag: "users", security: .app,
                body: JSONSchema.object([
                    "phone_id": JSONSchema.string("Anonymous: the same uid every time for the same id.", maxLength: 128),
                    "username": JSONSchema.string, "password": JSONSchema.string, "phone": JSONSchema.string, "code": JSONSchema.string,
                    "email": JSONSchema.string, "lang": JSONSchema.string,
                    "src": JSONSchema.string("Third party: qq, sina, baidu, wechat, twitter, facebook, google or amazon."),
                    "uid": JSONSchema.string("Third party: the ID token's subject."),
                    "token": JSONSchema.string("Third party: the ID token (a JWT), optionally after \"Bearer \"."),
                ]),
                success: .created(JSONSchema.ref("Session"))
            )
        ) { request, context in
            let app = try await accounts.requireApp(request.header(.gizwitsApplicationID))
            let body = try await RequestForm.decode(request, as: RegistrationBody.init(json:))
            let session = try await accounts.register(app: app, body, client: client(request, context))
            metrics.registered()
            return Response.json(session.json, status: .created)
        }
        router.on(
            .init(
                method: .get, path: "/app/users", summary: "The user's profile", tag: "users", security: .appAndUser,
                success: .ok(JSONSchema.ref("User"))
            )
        ) { request, _ in
            let user = try await accounts.authenticate(request)
            return Response.json(try await accounts.userInfo(user).json)
        }
        router.on(
            .init(
                method: .put, path: "/app/users", summary: "Update the profile, convert an anonymous user, or change the password",
                tag: "users", security: .appAndUser,
                body: JSONSchema.object([
                    "username": JSONSchema.string, "password": JSONSchema.string, "phone": JSONSchema.string, "code": JSONSchema.string,
                    "email": JSONSchema.string, "old_pwd": JSONSchema.string, "new_pwd": JSONSchema.string, "name": JSONSchema.string,
                    "gender": JSONSchema.string, "birthday": JSONSchema.string, "address": JSONSchema.string, "lang": JSONSchema.string,
                    "remark": JSONSchema.string,
                ]),
                success: .ok(
                    JSONSchema.object(
                        [
                            "updatedAt": JSONSchema.string, "token": JSONSchema.string("After a password change: the caller's new token."),
                            "expire_at": JSONSchema.integer,
                        ], required: ["updatedAt"]))
            )
        ) { request, context in
            let user = try await accounts.authenticate(request)
            let body = try await RequestForm.decode(request, as: UserUpdateBody.init(json:))
            return Response.json(try await accounts.updateUser(user, body, client: client(request, context)).json)
        }
        router.on(
            .init(
                method: .post, path: "/app/login", summary: "Log in with a username, e-mail address or phone number",
                tag: "users", security: .app,
                body: JSONSchema.object(
                    ["username": JSONSchema.string, "password": JSONSchema.string, "lang": JSONSchema.string], required: ["username", "password"]),
                success: .ok(JSONSchema.ref("Session"))
            )
        ) { request, context in
            let app = try await accounts.requireApp(request.header(.gizwitsApplicationID))
            let body = try await RequestForm.decode(request, as: LoginBody.init(json:))
            do {
                let session = try await accounts.login(appID: app.appID, body, client: client(request, context))
                metrics.logins(succeeded: true)
                return Response.json(session.json)
            } catch {
                metrics.logins(succeeded: false)
                throw error
            }
        }
        router.on(
            .init(
                method: .post, path: "/app/request_token", summary: "An app token for the SMS endpoints", tag: "users",
                security: .appAndAuth,
                success: .ok(JSONSchema.object(["token": JSONSchema.string, "expired_at": JSONSchema.integer], required: ["token", "expired_at"]))
            )
        ) { request, _ in
            let app = try await accounts.requireApp(request.header(.gizwitsApplicationID))
            let (token, expiredAt) = try await accounts.requestAppToken(app: app, auth: request.header(.gizwitsApplicationAuth))
            return Response.json(.object(["token": .string(token), "expired_at": .int(expiredAt)]))
        }
        router.on(
            .init(
                method: .post, path: "/app/sms_code", summary: "Send an SMS code ({phone}) or verify one ({phone, code})",
                tag: "users", security: .appAndAppToken,
                body: JSONSchema.object(["phone": JSONSchema.string, "code": JSONSchema.string], required: ["phone"]),
                success: .ok(JSONSchema.empty)
            )
        ) { request, _ in
            let app = try await accounts.requireApp(request.header(.gizwitsApplicationID))
            try await accounts.verifyAppToken(appID: app.appID, token: request.header(.gizwitsApplicationToken))
            let body = try await RequestForm.decode(request, as: SMSCodeBody.init(json:))
            if let code = body.code {
                try await accounts.verifySMSCode(appID: app.appID, phone: body.phone, code: code)
            } else {
                try await accounts.sendSMSCode(appID: app.appID, phone: body.phone)
            }
            return Response.emptyJSON
        }
        router.on(
            .init(
                method: .post, path: "/app/reset_password", summary: "Reset the password: {email} mails a link; {phone, new_pwd, code} resets at once",
                tag: "users", security: .app,
                body: JSONSchema.object(["email": JSONSchema.string, "phone": JSONSchema.string, "new_pwd": JSONSchema.string, "code": JSONSchema.string]),
                success: .ok(JSONSchema.empty)
            )
        ) { request, _ in
            let app = try await accounts.requireApp(request.header(.gizwitsApplicationID))
            try await accounts.resetPassword(appID: app.appID, try await RequestForm.decode(request, as: PasswordResetBody.init(json:)))
            return Response.emptyJSON
        }
        router.on(
            .init(
                method: .post, path: "/app/token/refresh",
                summary: "Tether extension: a new token for the user of a valid one; the old one ends a minute later",
                tag: "users", security: .appAndUser,
                success: .created(JSONSchema.ref("Session"))
            )
        ) { request, context in
            let user = try await accounts.authenticate(request)
            let session = try await accounts.refresh(user, client: client(request, context))
            return Response.json(session.json, status: .created)
        }
        router.on(
            .init(
                method: .post, path: "/app/logout", summary: "Tether extension: end this session (the token stops working everywhere at once)",
                tag: "users", security: .appAndUser, success: .ok(JSONSchema.empty)
            )
        ) { request, _ in
            try await accounts.logout(try await accounts.authenticate(request))
            return Response.emptyJSON
        }
        router.on(
            .init(
                method: .post, path: "/app/iot_token",
                summary:
                    "Tether: a single-use token (10 min) a device of the user's presents on /sys/{pk}/{dn}/account/bind to be bound to the user (the channel SDK's iotToken)",
                tag: "users", security: .appAndUser,
                success: .created(JSONSchema.object(["iot_token": JSONSchema.string, "expire_at": JSONSchema.integer], required: ["iot_token", "expire_at"]))
            )
        ) { request, _ in
            let token = try await accounts.issueIoTToken(try await accounts.authenticate(request))
            return Response.json(token.json, status: .created)
        }
        router.on(
            .init(
                method: .get, path: "/app/sessions", summary: "Tether extension: the user's sessions (id, app, times, source address, user agent)",
                tag: "users", security: .appAndUser,
                success: .ok(JSONSchema.object(["sessions": JSONSchema.array(JSONSchema.ref("SessionInfo"))], required: ["sessions"]))
            )
        ) { request, _ in
            let sessions = try await accounts.sessions(try await accounts.authenticate(request))
            return Response.json(["sessions": .array(sessions.map(\.json))])
        }
        router.on(
            .init(
                method: .delete, path: "/app/sessions/{id}",
                summary: "Tether extension: end one of the user's sessions (its WebSocket connections close at once)",
                tag: "users", security: .appAndUser, success: .ok(JSONSchema.empty)
            )
        ) { request, context in
            let user = try await accounts.authenticate(request)
            try await accounts.revokeSession(user, id: try context.pathParameter("id"))
            return Response.emptyJSON
        }
        router.on(
            .init(
                method: .post, path: "/app/reset_password/confirm", summary: "Tether extension: set the new password with the token of a reset e-mail",
                tag: "users", security: .none,
                body: JSONSchema.object(["token": JSONSchema.string, "new_pwd": JSONSchema.string], required: ["token", "new_pwd"]),
                success: .ok(JSONSchema.empty)
            )
        ) { request, _ in
            try await accounts.completePasswordReset(try await RequestForm.decode(request, as: PasswordResetConfirmBody.init(json:)))
            return Response.emptyJSON
        }
        router.on(
            .init(
                method: .get, path: "/app/users/confirm_email", summary: "Tether extension: the link of the confirmation e-mail",
                tag: "users", security: .none,
                parameters: [.query("token", JSONSchema.string, required: true)],
                success: .text(200, "The address is confirmed.")
            )
        ) { request, _ in
            guard let token = request.query("token"), !token.isEmpty else {
                throw CloudAPIError.formInvalid(detail: "token is required")
            }
            try await accounts.confirmEmail(token: token)
            return Response(
                status: .ok, headers: [.contentType: "text/plain; charset=utf-8"],
                body: ResponseBody(byteBuffer: .init(string: "Your e-mail address is confirmed. You can log in now.\n"))
            )
        }
    }
}

extension AccountService {
    /// The app and the user of a request that needs both headers A and U.
    func authenticate(_ request: Request) async throws -> AuthenticatedUser {
        let app = try await requireApp(request.header(.gizwitsApplicationID))
        return try await authenticate(appID: app.appID, token: request.header(.gizwitsUserToken))
    }
}
