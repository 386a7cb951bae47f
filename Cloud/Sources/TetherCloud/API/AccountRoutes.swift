import Hummingbird
import TetherCore

/// `/app/users`, `/app/login`, `/app/request_token`, `/app/sms_code`, `/app/reset_password`.
struct AccountRoutes<Context: RequestContext> {
    let accounts: AccountService
    let metrics: CloudMetrics

    func register(on router: Router<Context>) {
        router.post("/app/users") { request, _ in
            let app = try await accounts.requireApp(request.header(.gizwitsApplicationID))
            let form = try await RequestForm.decode(request)
            let session = try await accounts.register(appID: app.appID, form: form)
            metrics.registered()
            return Response.json(session.json, status: .created)
        }
        router.get("/app/users") { request, _ in
            let user = try await accounts.authenticate(request)
            return Response.json(try await accounts.userInfo(user))
        }
        router.put("/app/users") { request, _ in
            let user = try await accounts.authenticate(request)
            let form = try await RequestForm.decode(request)
            return Response.json(try await accounts.updateUser(user, form: form))
        }
        router.post("/app/login") { request, _ in
            let app = try await accounts.requireApp(request.header(.gizwitsApplicationID))
            let form = try await RequestForm.decode(request)
            do {
                let session = try await accounts.login(appID: app.appID, form: form)
                metrics.logins(succeeded: true)
                return Response.json(session.json)
            } catch {
                metrics.logins(succeeded: false)
                throw error
            }
        }
        router.post("/app/request_token") { request, _ in
            let app = try await accounts.requireApp(request.header(.gizwitsApplicationID))
            let (token, expiredAt) = try await accounts.requestAppToken(app: app, auth: request.header(.gizwitsApplicationAuth))
            return Response.json(.object(["token": .string(token), "expired_at": .int(expiredAt)]))
        }
        router.post("/app/sms_code") { request, _ in
            let app = try await accounts.requireApp(request.header(.gizwitsApplicationID))
            try await accounts.verifyAppToken(appID: app.appID, token: request.header(.gizwitsApplicationToken))
            let form = try await RequestForm.decode(request)
            let phone = try form.string("phone")
            if let code = try form.optionalString("code") {
                try await accounts.verifySMSCode(appID: app.appID, phone: phone, code: code)
            } else {
                try await accounts.sendSMSCode(appID: app.appID, phone: phone)
            }
            return Response.emptyJSON
        }
        router.post("/app/reset_password") { request, _ in
            let app = try await accounts.requireApp(request.header(.gizwitsApplicationID))
            try await accounts.resetPassword(appID: app.appID, form: try await RequestForm.decode(request))
            return Response.emptyJSON
        }
        router.post("/app/reset_password/confirm") { request, _ in
            try await accounts.completePasswordReset(form: try await RequestForm.decode(request))
            return Response.emptyJSON
        }
        router.get("/app/users/confirm_email") { request, _ in
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
