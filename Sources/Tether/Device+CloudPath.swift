import Logging
import Synchronization
import TetherCloudClient

/// The path a device's requests take now.
public enum ControlPath: String, Hashable, Sendable, CustomStringConvertible {
    /// The TCP connection on the LAN.
    case lan
    /// The cloud's real-time connection.
    case cloud

    public var description: String { rawValue }
}

/// A path with what a request needs to take it.
enum ControlRoute {
    case lan(GizwitsLANClient)
    case tuya(TuyaLANSession)
    case cloud(CloudRealtime)
}

extension Device {
    /// The path requests take now; nil when the device is not controllable.
    public var controlPath: ControlPath? { state.withLock { $0.path.controlPath } }

    var isConnectedOnLAN: Bool { state.withLock { $0.path.isConnectedOnLAN } }

    /// A subscription: the cloud is attached while the LAN is dialled, so that neither waits for
    /// the other; the LAN session consults the attachment when it cannot log in.
    func runSubscription(established: AsyncPromise<Void, TetherError>) async {
        if lanProtocol == .tuya {
            // Tuya devices are reached on the LAN only.
            await runTuyaSession(firstLogin: established)
            return
        }
        let cloudAttachment = AsyncPromise<TetherError?, Never>()
        await withDiscardingTaskGroup { group in
            group.addTask { cloudAttachment.resolve(.success(await self.attachCloud())) }
            await runSession(firstLogin: established, cloudAttachment: cloudAttachment)
            group.cancelAll()
        }
    }

    /// Subscribes the device on the cloud's real-time connection when the user is bound to it
    /// and the device is subscribed. Returns why the cloud cannot carry it, nil when it does (or
    /// when there is no cloud to ask).
    @discardableResult
    func attachCloud() async -> TetherError? {
        guard let link else { return nil }
        let (did, token, bound) = state.withLock { ($0.did, $0.session?.firstLogin, $0.path.isBound) }
        guard let token, bound, !did.isEmpty else { return nil }
        guard let realtime = await link.connected(within: lan.requestTimeout) else {
            return TetherError(.connectionFailed, "the cloud's real-time connection is not up")
        }
        do {
            if let code = try await realtime.subscribe([did])[did] {
                return TetherError(.cloudRefused, "the cloud refused the subscription to \(did)", cloudCode: code)
            }
        } catch {
            return error
        }
        updatePath { state in
            if state.session?.firstLogin === token, state.path.isBound {
                // The subscription's answer shows the connection is up.
                return [.cloudLink(up: true), .cloudSubscription(carried: true)]
            }
            if state.session == nil || !state.path.isBound {
                // Unsubscribed meanwhile. Under the lock, so that a newer subscription cannot
                // attach between the check and this.
                realtime.unsubscribe(did)
            }
            return []
        }
        return nil
    }

    /// A binding appeared for a subscribed device that the cloud does not carry yet (bound after
    /// subscribing, or the bindings arrived after the real-time connection): attach it now.
    func attachCloudIfSubscribed() async {
        guard state.withLock({ $0.path.isSubscribed && !$0.path.isCarriedByCloud && $0.path.isBound }) else { return }
        guard await attachCloud() == nil else { return }
        await resyncThroughCloud()
    }

    /// The cloud's connection ended (logout): the subscription is on the LAN alone.
    func detachCloud() {
        apply(.cloudLink(up: false), .cloudSubscription(carried: false))
    }

    func cloudCarries(_ token: AsyncPromise<Void, TetherError>) -> Bool {
        state.withLock { $0.session?.firstLogin === token && $0.path.isCarriedByCloud }
    }

    /// With the cloud carrying the subscription `token` stands for, the device is waited for
    /// on the LAN rather than dialled (gone from the LAN, or never seen there).
    func waitsForLAN(_ token: AsyncPromise<Void, TetherError>) -> Bool {
        state.withLock { $0.session?.firstLogin === token && $0.path.isCarriedByCloud && ($0.endpoint == nil || $0.path.waitsForLAN) }
    }

    /// The LAN cannot establish the subscription but the cloud carries it.
    func settleOnCloud(_ token: AsyncPromise<Void, TetherError>) async {
        guard !token.isResolved else { return }
        await resyncThroughCloud()
        token.resolve(.success(()))
    }

    /// Reads the status through the cloud when the LAN is not connected, so that the app does not
    /// show values from before a change of path or a reconnection.
    func resyncThroughCloud() async {
        guard state.withLock({ $0.path.readsThroughCloud }), let realtime = link?.connected else { return }
        do throws(TetherError) {
            _ = try await readThroughCloud(realtime)
        } catch {
            logger.debug("status resynchronisation through the cloud failed", metadata: ["tether.device": "\(id)", "tether.error": "\(error)"])
        }
    }

    func readThroughCloud(_ realtime: CloudRealtime) async throws(TetherError) -> DeviceStatus {
        let status = statusFromCloud(try await realtime.read(did: did))
        record(DeviceStatusReport(status: status, sn: 0))
        return status
    }

    /// Writes through the cloud; with `waitForReport`, returns the report that answers `sn` when
    /// it comes within the request timeout (nil otherwise), and throws when the device rejects
    /// the write after the cloud accepted it.
    func writeThroughCloud(
        _ values: [String: DataValue], sn: UInt32, on realtime: CloudRealtime, waitForReport: Bool
    ) async throws(TetherError) -> DeviceStatus? {
        var attrs = JSONObject()
        for (name, value) in values { attrs[name] = value.jsonValue }
        // Registered before the write: the report can follow the acknowledgement immediately.
        let outcome = AsyncPromise<DeviceStatus?, TetherError>()
        state.withLock { $0.cloudWrites[sn] = outcome }
        defer { _ = state.withLock { $0.cloudWrites.removeValue(forKey: sn) } }
        _ = try await realtime.write(did: did, attrs: attrs, sn: Int(sn))
        guard waitForReport else { return nil }
        return try await outcome.result(within: lan.requestTimeout) { .success(nil) }.get()
    }

    /// The cloud says a write it had accepted failed (the device rejected it, or it expired).
    func cloudWriteFailed(sn: Int, error: TetherError) {
        let waiter = UInt32(exactly: sn).flatMap { sn in state.withLock { $0.cloudWrites[sn] } }
        waiter?.resolve(.failure(error))
        emit(.error(error))
    }

    /// The cloud's attributes as a status; values the model does not accept are left out.
    func statusFromCloud(_ attrs: JSONObject) -> DeviceStatus {
        guard let model else { return DeviceStatus() }
        var values: [String: DataValue] = [:]
        for name in attrs.keys {
            guard let json = attrs[name], let raw = DataValue(json: json), let value = try? model.normalize(raw, for: name) else { continue }
            values[name] = value
        }
        return DeviceStatus(values: values, model: model)
    }

    // MARK: Pushes from the cloud

    /// A report the cloud passed on. Ignored while the LAN connection is up: the device sends
    /// the same report there, and one copy is enough.
    func cloudReported(_ attrs: JSONObject, sn: Int?) {
        let number = sn.flatMap(UInt32.init(exactly:)) ?? 0
        let waiter = number == 0 ? nil : state.withLock { $0.cloudWrites[number] }
        // A report answering a write through the cloud is delivered even if the LAN came back
        // meanwhile: the LAN never sees that sn.
        guard waiter != nil || !isConnectedOnLAN else { return }
        let status = statusFromCloud(attrs)
        guard !status.isEmpty else { return }
        record(DeviceStatusReport(status: status, sn: number))
        waiter?.resolve(.success(status))
    }

    func cloudSentBinary(_ bytes: [UInt8]) {
        guard !isConnectedOnLAN else { return }
        emit(.binary(bytes))
    }

    func cloudPresenceChanged(online: Bool) {
        apply(.cloudPresence(online: online))
    }

    // MARK: Binding

    /// After a LAN login: binds the device to the logged-in user with its passcode when it is
    /// not bound yet (the Gizwits SDK's subscribe does the same). A failure leaves the LAN
    /// subscription as it is.
    func bindThroughCloudIfNeeded() async {
        guard let link, link.account.isLoggedIn, !isBound else { return }
        let (did, passcode) = state.withLock { ($0.did, $0.passcode) }
        guard !did.isEmpty, let passcode else { return }
        let account = link.account
        do throws(TetherError) {
            let bound = try await account.withSession { session throws(TetherError) in try await account.api.bind(session, did: did, passcode: passcode) }
            guard bound else {
                logger.notice("the cloud did not bind the device with its passcode", metadata: ["tether.device": "\(id)"])
                return
            }
            await link.bindingsDidChange()
            await attachCloud()
        } catch {
            logger.debug("binding through the cloud failed", metadata: ["tether.device": "\(id)", "tether.error": "\(error)"])
        }
    }

    /// Unbinds the device from the user in the cloud. It leaves the list unless it is on the LAN.
    public func unbind() async throws(TetherError) {
        guard let link else { throw TetherError(.invalidArgument, "the client has no cloud configured") }
        let did = self.did
        guard !did.isEmpty else { throw TetherError(.invalidArgument, "device \(id) has no did yet") }
        let account = link.account
        let unbound = try await account.withSession { session throws(TetherError) in try await account.api.unbind(session, dids: [did]) }
        guard unbound.contains(did) else { throw TetherError(.cloudRefused, "the cloud did not unbind \(did)", cloudCode: 9017) }
        link.realtime?.unsubscribe(did)
        updateCloud(nil)
        await link.bindingsDidChange()
    }

    /// Sets the user's remark and alias of the bound device in the cloud; nil leaves one as is.
    public func setCustomInfo(remark: String? = nil, alias: String? = nil) async throws(TetherError) {
        guard let link else { throw TetherError(.invalidArgument, "the client has no cloud configured") }
        guard isBound else { throw TetherError(.invalidArgument, "device \(id) is not bound to the user") }
        let did = self.did
        let account = link.account
        try await account.withSession { session throws(TetherError) in try await account.api.updateBinding(session, did: did, remark: remark, alias: alias) }
        apply(.customInfo(remark: remark, alias: alias))
    }
}
