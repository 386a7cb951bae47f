import Logging
import Synchronization
import TetherCore

/// One app connection of the WebSocket M2M API (`shared/reference/gizwits-openapi.md` §4):
/// login, subscriptions, reads, writes with `req_sn` answered by `res_sn`, raw frames, pings.
/// Frames are handled strictly in order; what the cloud pushes goes out through the same
/// ordered outbound stream.
final class M2MSession: Sendable {
    struct State {
        /// Who logged in, with the token's hash and expiry; nil before `login_req`.
        var user: AuthenticatedUser?
        /// Set when the session must end: its token was revoked or expired.
        var endReason: String?
        var rawOnly = false
        var heartbeatSeconds: Int64 = 180
        var subscribed: Set<String> = []
        /// Commands sent with a `req_sn`, by ledger id.
        /// This session's commands in flight, by ledger id, and whether `s2c_ack` went out.
        var pending: [Int64: (reqSN: JSONValue, attrs: JSONValue, acknowledged: Bool)] = [:]
    }

    /// What goes out on the WebSocket: frames, then possibly a close that ends the session.
    enum Output: Sendable {
        case frame(JSONValue)
        /// Close the connection with a policy-violation close frame and this reason.
        case close(reason: String)
    }

    private let state = Mutex(State())
    private let outbound: AsyncStream<Output>.Continuation
    let output: AsyncStream<Output>
    private let accounts: AccountService
    private let control: ControlService
    private let history: DeviceHistory
    private let hub: RealtimeHub
    private let logger: Logger

    init(accounts: AccountService, control: ControlService, history: DeviceHistory, hub: RealtimeHub, logger: Logger) {
        // A client that does not read its socket loses the oldest pushes, never the server's memory.
        (output, outbound) = AsyncStream.makeStream(of: Output.self, bufferingPolicy: .bufferingNewest(10_000))
        self.accounts = accounts
        self.control = control
        self.history = history
        self.hub = hub
        self.logger = logger
    }

    var uid: String? { state.withLock { $0.user?.uid } }
    var isLoggedIn: Bool { state.withLock { $0.user != nil } }
    var heartbeatSeconds: Int64 { state.withLock { $0.heartbeatSeconds } }

    func isSubscribed(_ did: String) -> Bool {
        state.withLock { $0.subscribed.contains(did) }
    }

    /// A push from the hub: decoded data points (`s2c_noti`) are not sent to sessions that
    /// logged in with `p0_type: custom`.
    func push(_ frame: JSONValue) {
        if frame["cmd"] == "s2c_noti", state.withLock({ $0.rawOnly }) { return }
        send(frame)
    }

    func unsubscribe(_ did: String) { _ = state.withLock { $0.subscribed.remove(did) } }

    func send(_ frame: JSONValue) {
        guard state.withLock({ $0.endReason == nil }) else { return }
        outbound.yield(.frame(frame))
    }

    func finish() { outbound.finish() }

    // MARK: Revocation

    /// Checks the session's token again (its user's credentials changed, or a minute passed):
    /// a revoked token, or a disabled account, ends the session; a shortened one (refreshed)
    /// ends it when it expires.
    func revalidate() async {
        guard let user = state.withLock({ $0.user }) else { return }
        do {
            guard let expiresAt = try await accounts.currentExpiry(of: user) else {
                end(reason: "the session was revoked; log in again")
                return
            }
            state.withLock { $0.user?.expiresAt = expiresAt }
        } catch {
            // A database that does not answer says nothing about the token: check again later.
            logger.warning("M2M session could not re-check its token", metadata: ["error": "\(error)"])
        }
        endIfExpired()
    }

    /// Ends the session if its token has expired.
    func endIfExpired(now: Int64 = Clock.unixNow()) {
        guard let expiresAt = state.withLock({ $0.user?.expiresAt }), expiresAt <= now else { return }
        end(reason: "the token expired; log in again")
    }

    /// Tells the app why, then closes: nothing is sent or handled for this session afterwards.
    func end(reason: String) {
        let first = state.withLock { state -> Bool in
            guard state.endReason == nil else { return false }
            state.endReason = reason
            state.subscribed = []
            state.pending = [:]
            return true
        }
        guard first else { return }
        outbound.yield(.frame(["cmd": "s2c_invalid_msg", "data": ["error_code": 9004, "msg": .string(reason)]]))
        outbound.yield(.close(reason: reason))
        outbound.finish()
    }

    /// The ledger moved one of this session's commands: `s2c_ack` when the device accepted it,
    /// `s2c_noti` with `res_sn` when a report shows it applied, `s2c_invalid_msg` with `res_sn`
    /// when it was rejected, expired or failed.
    func commandChanged(_ update: CommandUpdate) {
        let pending = state.withLock { state -> (reqSN: JSONValue, attrs: JSONValue, acknowledged: Bool)? in
            guard let pending = state.pending[update.id] else { return nil }
            if update.state.isFinal {
                state.pending[update.id] = nil
            } else if update.state == .acknowledged {
                state.pending[update.id]?.acknowledged = true
            }
            return pending
        }
        guard let pending else { return }
        let acknowledgement: JSONValue = ["cmd": "s2c_ack", "res_sn": pending.reqSN, "did": .string(update.did), "command_id": .int(update.id)]
        switch update.state {
        case .acknowledged:
            if !pending.acknowledged { send(acknowledgement) }
        case .applied:
            // A device may report the values before its set_reply arrives: the ledger then goes
            // from sent to applied, and the app, which waits for the acknowledgement first, gets it here.
            if !pending.acknowledged { send(acknowledgement) }
            send(["cmd": "s2c_noti", "res_sn": pending.reqSN, "command_id": .int(update.id), "data": ["did": .string(update.did), "attrs": pending.attrs]])
        case .rejected, .expired, .failed:
            send(["cmd": "s2c_invalid_msg", "res_sn": pending.reqSN, "command_id": .int(update.id), "data": [
                "error_code": .int(Int64(update.code ?? (update.state == .rejected ? 9021 : 9042))),
                "msg": .string("command \(update.state.rawValue): \(update.message)"), "did": .string(update.did),
            ]])
        case .accepted, .queued, .sent:
            break
        }
    }

    // MARK: Inbound

    /// Handles one text frame from the app.
    func receive(_ text: String) async {
        guard text.utf8.count <= 64 * 1024, let message = try? JSONValue.parse(text), let cmd = message["cmd"]?.stringValue else {
            invalid(9015, "a frame is one JSON object {\"cmd\", \"data\"} of at most 64 KiB")
            return
        }
        let data = message["data"] ?? .null
        if cmd == "ping" {
            send(["cmd": "pong"])
            return
        }
        if cmd == "login_req" {
            await login(data)
            return
        }
        guard state.withLock({ $0.endReason == nil }) else { return }
        guard let user = state.withLock({ $0.user }) else {
            invalid(9004, "log in first (login_req)")
            return
        }
        switch cmd {
        case "subscribe_req": await subscribe(user, data)
        case "c2s_write": await write(user, data, reqSN: message["req_sn"])
        case "c2s_read": await read(user, data, reqSN: message["req_sn"])
        case "c2s_raw": await raw(user, data)
        case "c2s_ack": break
        default: invalid(9015, "unknown cmd \"\(cmd.prefix(40))\"")
        }
    }

    private func invalid(_ code: Int64, _ message: String, reqSN: JSONValue? = nil) {
        var frame: JSONObject = ["cmd": "s2c_invalid_msg", "data": ["error_code": .int(code), "msg": .string(message)]]
        if let reqSN { frame["res_sn"] = reqSN }
        send(.object(frame))
    }

    private func login(_ data: JSONValue) async {
        guard let appID = data["appid"]?.stringValue, let uid = data["uid"]?.stringValue, let token = data["token"]?.stringValue else {
            send(["cmd": "login_res", "data": ["success": false, "error_code": 9015, "msg": "login_req needs appid, uid and token"]])
            return
        }
        do {
            let user = try await accounts.authenticate(appID: appID, token: token)
            guard user.uid == uid else { throw CloudAPIError.tokenInvalid(detail: "the token belongs to another user") }
            // A connection belongs to one user: its subscriptions and commands were authorized
            // for that user, and a revocation of that user must find it.
            if let current = state.withLock({ $0.user }), current.uid != user.uid {
                throw CloudAPIError.tokenInvalid(detail: "this connection is logged in as another user; open a new one")
            }
            let heartbeat: Int64 = switch data["heartbeat_interval"] {
            case .int(let seconds)?: min(max(seconds, 10), 180)
            default: 180
            }
            state.withLock { state in
                state.user = user
                state.rawOnly = data["p0_type"]?.stringValue == "custom"
                state.heartbeatSeconds = heartbeat
            }
            send(["cmd": "login_res", "data": ["success": true]])
            if data["auto_subscribe"] != .bool(false) {
                let dids = try await accounts.database.query("SELECT did FROM bindings WHERE uid = $1 ORDER BY did", .text(uid)).map { try $0.text("did") }
                await subscribe(user, .array(dids.map { ["did": .string($0)] }))
            }
        } catch let error as CloudAPIError {
            send(["cmd": "login_res", "data": ["success": false, "error_code": .int(Int64(error.code)), "msg": .string(error.message)]])
        } catch {
            logger.error("M2M login failed", metadata: ["error": "\(error)"])
            send(["cmd": "login_res", "data": ["success": false, "error_code": 9008, "msg": "server error"]])
        }
    }

    private func subscribe(_ user: AuthenticatedUser, _ data: JSONValue) async {
        guard let entries = data.arrayValue, entries.count <= 1000 else {
            invalid(9015, "subscribe_req data is a list of at most 1000 {did}")
            return
        }
        var success: [JSONValue] = []
        var failed: [JSONValue] = []
        var subscribed: [String] = []
        for entry in entries {
            guard let did = entry["did"]?.stringValue else {
                failed.append(["did": entry["did"] ?? .null, "error_code": 9015, "msg": "did missing"])
                continue
            }
            if (try? await control.isBound(user, did: did)) == true {
                state.withLock { _ = $0.subscribed.insert(did) }
                success.append(["did": .string(did), "error_code": 0, "msg": "ok"])
                subscribed.append(did)
            } else {
                failed.append(["did": .string(did), "error_code": 9017, "msg": "device not bound"])
            }
        }
        send(["cmd": "subscribe_res", "data": ["success": .array(success), "failed": .array(failed)]])
        for did in subscribed {
            let online = (try? await accounts.database.first("SELECT is_online FROM devices WHERE did = $1", .text(did))?.bool("is_online")) ?? false
            let info = await hub.info(did)
            send(["cmd": "s2c_online_status", "data": ["did": .string(did), "passcode": .string(info.passcode), "mac": .string(info.mac), "online": .bool(online)]])
        }
    }

    private func write(_ user: AuthenticatedUser, _ data: JSONValue, reqSN: JSONValue?) async {
        guard state.withLock({ !$0.rawOnly }) else {
            invalid(9015, "c2s_write is not available with p0_type custom; use c2s_raw", reqSN: reqSN)
            return
        }
        guard let did = data["did"]?.stringValue, let attrs = data["attrs"]?.objectValue, !attrs.isEmpty else {
            invalid(9015, "c2s_write data is {did, attrs}", reqSN: reqSN)
            return
        }
        await dispatch(user, did: did, .attrs(attrs), queue: data["queue_ttl"], reqSN: reqSN)
    }

    private func raw(_ user: AuthenticatedUser, _ data: JSONValue) async {
        guard let did = data["did"]?.stringValue, let items = data["raw"]?.arrayValue else {
            invalid(9015, "c2s_raw data is {did, raw: [byte, …]}")
            return
        }
        var bytes: [UInt8] = []
        for item in items {
            guard case .int(let value) = item, let byte = UInt8(exactly: value) else {
                invalid(9015, "raw holds integers 0…255")
                return
            }
            bytes.append(byte)
        }
        await dispatch(user, did: did, .raw(bytes), queue: data["queue_ttl"], reqSN: nil)
    }

    private func dispatch(_ user: AuthenticatedUser, did: String, _ request: ControlService.Request, queue: JSONValue?, reqSN: JSONValue?) async {
        var queueSeconds: Int64?
        if case .int(let seconds)? = queue { queueSeconds = seconds }
        do {
            // Registered before dispatch, so that a fast answer finds it; removed on failure.
            try await control.control(user, did: did, request, queueSeconds: queueSeconds) { record in
                if let reqSN {
                    self.state.withLock { $0.pending[record.id] = (reqSN, record.body, false) }
                }
            }
        } catch let error as CloudAPIError {
            invalid(Int64(error.code), error.detail.isEmpty ? error.message : error.detail, reqSN: reqSN)
        } catch {
            logger.error("M2M control failed", metadata: ["error": "\(error)"])
            invalid(9008, "server error", reqSN: reqSN)
        }
    }

    /// The cloud keeps each device's latest status, so a read is answered from it.
    private func read(_ user: AuthenticatedUser, _ data: JSONValue, reqSN: JSONValue?) async {
        guard state.withLock({ !$0.rawOnly }) else {
            invalid(9015, "c2s_read is not available with p0_type custom", reqSN: reqSN)
            return
        }
        guard let did = data["did"]?.stringValue else {
            invalid(9015, "c2s_read data is {did, names?}", reqSN: reqSN)
            return
        }
        guard (try? await control.isBound(user, did: did)) == true else {
            invalid(9017, "device not bound", reqSN: reqSN)
            return
        }
        var attrs = (try? await history.status(did: did))?.attrs ?? [:]
        if let names = data["names"]?.arrayValue?.compactMap(\.stringValue), !names.isEmpty {
            var selected = JSONObject()
            for name in names { selected[name] = attrs[name] }
            attrs = selected
        }
        var frame: JSONObject = ["cmd": "s2c_noti", "data": ["did": .string(did), "attrs": .object(attrs)]]
        if let reqSN { frame["res_sn"] = reqSN }
        send(.object(frame))
    }
}
