import Logging
import Synchronization
import TetherCloudProtocol
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
        /// This session's commands sent with a `req_sn`, by ledger id: the sequence, the values
        /// written, and whether `s2c_ack` went out.
        var pending: [Int64: (sequence: M2MSequence, attrs: JSONObject, acknowledged: Bool)] = [:]
    }

    /// What goes out on the WebSocket: frames, then possibly a close that ends the session.
    enum Output: Sendable {
        case frame(M2MFrame)
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
    func push(_ frame: M2MFrame) {
        if case .notification = frame, state.withLock({ $0.rawOnly }) { return }
        send(frame)
    }

    func unsubscribe(_ did: String) { _ = state.withLock { $0.subscribed.remove(did) } }

    func send(_ frame: M2MFrame) {
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
        outbound.yield(.frame(.invalid(M2MInvalid(errorCode: CloudError.tokenInvalid.code, message: reason))))
        outbound.yield(.close(reason: reason))
        outbound.finish()
    }

    /// The ledger moved one of this session's commands: `s2c_ack` when the device accepted it,
    /// `s2c_noti` with `res_sn` when a report shows it applied, `s2c_invalid_msg` with `res_sn`
    /// when it was rejected, expired or failed.
    func commandChanged(_ update: CommandUpdate) {
        let pending = state.withLock { state -> (sequence: M2MSequence, attrs: JSONObject, acknowledged: Bool)? in
            guard let pending = state.pending[update.id] else { return nil }
            if update.state.isFinal {
                state.pending[update.id] = nil
            } else if update.state == .acknowledged {
                state.pending[update.id]?.acknowledged = true
            }
            return pending
        }
        guard let pending else { return }
        let acknowledgement = M2MFrame.writeAcknowledged(M2MWriteAcknowledgement(sequence: pending.sequence, did: update.did, commandID: update.id))
        switch update.state {
        case .acknowledged:
            if !pending.acknowledged { send(acknowledgement) }
        case .applied:
            // A device may report the values before its set_reply arrives: the ledger then goes
            // from sent to applied, and the app, which waits for the acknowledgement first, gets it here.
            if !pending.acknowledged { send(acknowledgement) }
            send(.notification(M2MNotification(answering: pending.sequence, commandID: update.id, did: update.did, attrs: pending.attrs)))
        case .rejected, .expired, .failed:
            let fallback = update.state == .rejected ? CloudError.sendCommandFailed : CloudError.deviceOffline
            send(
                .invalid(
                    M2MInvalid(
                        sequence: pending.sequence, commandID: update.id, errorCode: update.code ?? fallback.code,
                        message: "command \(update.state.rawValue): \(update.message)", did: update.did
                    )))
        case .accepted, .queued, .sent:
            break
        }
    }

    // MARK: Inbound

    /// Handles one text frame from the app.
    func receive(_ text: String) async {
        let frame: M2MFrame
        do {
            frame = try M2MFrame(decoding: text)
        } catch {
            invalid(.formInvalid, error.message, sequence: error.sequence)
            return
        }
        switch frame {
        case .ping:
            send(.pong)
            return
        case .login(let login):
            await self.login(login)
            return
        default:
            break
        }
        guard state.withLock({ $0.endReason == nil }) else { return }
        guard let user = state.withLock({ $0.user }) else {
            invalid(.tokenInvalid, "log in first (login_req)")
            return
        }
        switch frame {
        case .subscribe(let dids): await subscribe(user, dids)
        case .write(let write): await self.write(user, write)
        case .read(let read): await self.read(user, read)
        case .raw(let raw): await dispatch(user, did: raw.did, .raw(raw.bytes), queueSeconds: raw.queueTTL, sequence: nil)
        case .acknowledge: break
        default: invalid(.formInvalid, "\(frame.command) is sent by the cloud, not to it")
        }
    }

    private func invalid(_ error: CloudError, _ message: String, sequence: M2MSequence? = nil) {
        send(.invalid(M2MInvalid(sequence: sequence, errorCode: error.code, message: message)))
    }

    private func login(_ login: M2MLogin) async {
        do {
            let user = try await accounts.authenticate(appID: login.appID, token: login.token)
            guard user.uid == login.uid else { throw CloudAPIError.tokenInvalid(detail: "the token belongs to another user") }
            // A connection belongs to one user: its subscriptions and commands were authorized
            // for that user, and a revocation of that user must find it.
            if let current = state.withLock({ $0.user }), current.uid != user.uid {
                throw CloudAPIError.tokenInvalid(detail: "this connection is logged in as another user; open a new one")
            }
            let heartbeat = min(max(login.heartbeatInterval ?? 180, 10), 180)
            state.withLock { state in
                state.user = user
                state.rawOnly = login.dataFormat == .custom
                state.heartbeatSeconds = heartbeat
            }
            send(.loginResult(M2MLoginResult(success: true)))
            if login.autoSubscribe {
                let dids = try await BindingStore(accounts.database).dids(boundBy: user.uid)
                await subscribe(user, dids)
            }
        } catch let error as CloudAPIError {
            send(.loginResult(M2MLoginResult(success: false, errorCode: error.code, message: error.message)))
        } catch {
            logger.error("M2M login failed", metadata: ["error": "\(error)"])
            send(.loginResult(M2MLoginResult(success: false, errorCode: CloudError.serverError.code, message: CloudError.serverError.message)))
        }
    }

    private func subscribe(_ user: AuthenticatedUser, _ dids: [String]) async {
        guard dids.count <= 1000 else {
            invalid(.formInvalid, "subscribe_req data is a list of at most 1000 {did}")
            return
        }
        var success: [M2MSubscribeResult.Entry] = []
        var failed: [M2MSubscribeResult.Entry] = []
        var subscribed: [String] = []
        for did in dids {
            if (try? await control.isBound(user, did: did)) == true {
                state.withLock { _ = $0.subscribed.insert(did) }
                success.append(.init(did: did))
                subscribed.append(did)
            } else {
                failed.append(.init(did: did, errorCode: CloudError.deviceNotBound.code, message: CloudError.deviceNotBound.message))
            }
        }
        send(.subscribeResult(M2MSubscribeResult(success: success, failed: failed)))
        for did in subscribed {
            // Read each time: a module that registers again changes its passcode.
            let device = try? await DeviceStore(accounts.database).find(did)
            send(.onlineStatus(M2MOnlineStatus(did: did, passcode: device?.passcode ?? "", mac: device?.mac ?? "", online: device?.isOnline ?? false)))
        }
    }

    private func write(_ user: AuthenticatedUser, _ write: M2MWrite) async {
        guard state.withLock({ !$0.rawOnly }) else {
            invalid(.formInvalid, "c2s_write is not available with p0_type custom; use c2s_raw", sequence: write.sequence)
            return
        }
        guard !write.attrs.isEmpty else {
            invalid(.formInvalid, "c2s_write data is {did, attrs} with at least one data point", sequence: write.sequence)
            return
        }
        await dispatch(user, did: write.did, .attrs(write.attrs), queueSeconds: write.queueTTL, sequence: write.sequence)
    }

    private func dispatch(_ user: AuthenticatedUser, did: String, _ request: ControlService.Request, queueSeconds: Int64?, sequence: M2MSequence?) async {
        do {
            // Registered before dispatch, so that a fast answer finds it; removed on failure.
            try await control.control(user, did: did, request, queueSeconds: queueSeconds) { record in
                if let sequence {
                    self.state.withLock { $0.pending[record.id] = (sequence, record.body.objectValue ?? [:], false) }
                }
            }
        } catch let error as CloudAPIError {
            send(.invalid(M2MInvalid(sequence: sequence, errorCode: error.code, message: error.detail.isEmpty ? error.message : error.detail)))
        } catch {
            logger.error("M2M control failed", metadata: ["error": "\(error)"])
            invalid(.serverError, "server error", sequence: sequence)
        }
    }

    /// The cloud keeps each device's latest status, so a read is answered from it.
    private func read(_ user: AuthenticatedUser, _ read: M2MRead) async {
        guard state.withLock({ !$0.rawOnly }) else {
            invalid(.formInvalid, "c2s_read is not available with p0_type custom", sequence: read.sequence)
            return
        }
        guard (try? await control.isBound(user, did: read.did)) == true else {
            invalid(.deviceNotBound, "device not bound", sequence: read.sequence)
            return
        }
        var attrs = (try? await history.status(did: read.did))?.attrs ?? [:]
        if let names = read.names, !names.isEmpty {
            var selected = JSONObject()
            for name in names { selected[name] = attrs[name] }
            attrs = selected
        }
        send(.notification(M2MNotification(answering: read.sequence, did: read.did, attrs: attrs)))
    }
}
