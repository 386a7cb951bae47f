import Logging
import Synchronization
import NIOCore

extension Device {
    /// Subscribes to the device: from then on the client keeps it controllable on whichever path
    /// reaches it, LAN first. On the LAN it connects, logs in and reads the status (and binds the
    /// device to the logged-in user through the cloud when it is not yet); through the cloud it
    /// subscribes on the real-time connection. Returns once either path is up. Afterwards the
    /// client sends heartbeats, reconnects, moves to the cloud when the LAN link drops and back
    /// when it returns, and reads the status again after every change of path, until
    /// ``unsubscribe()``.
    ///
    /// - Parameter passcode: the device's passcode. When nil, the client uses the passcode it
    ///   used before, the one the cloud gave for a bound device, or asks the device for it,
    ///   which works only in the binding window.
    /// - Throws: `TetherError.Code.deviceOffline` when no path reaches the device;
    ///   `TetherError.Code.connectionFailed`; `TetherError.Code.notInBindingWindow` when no
    ///   passcode is known and the device will not give it; `TetherError.Code.loginFailed`
    ///   (wrong passcode, or the device serves its maximum of clients); `TetherError.Code.timeout`;
    ///   `TetherError.Code.cloudRefused` when only the cloud could reach it and refused.
    public func subscribe(passcode: String? = nil) async throws(TetherError) {
        await ensureModel()
        let promise = AsyncPromise<Void, TetherError>()
        var started: AsyncPromise<Void, TetherError>?
        updatePath { state in
            if let passcode { state.passcode = passcode }
            if let session = state.session {
                started = session.firstLogin
                return []
            }
            state.session = Subscription(work: nil, connection: nil, firstLogin: promise)
            return [.subscribed]
        }
        if let started {
            return try await started.value(ifCancelled: { TetherError(.cancelled, "cancelled while subscribing") })
        }
        let work = tasks.start(ifNotRun: { self.subscriptionFailed(promise, TetherError(.cancelled, "the client has shut down")) }) {
            await self.runSubscription(established: promise)
        }
        state.withLock { if $0.session?.firstLogin === promise { $0.session?.work = work } }
        try await promise.value(ifCancelled: { TetherError(.cancelled, "cancelled while subscribing") })
    }

    /// Ends the subscription on both paths and closes the LAN connection.
    public func unsubscribe() async {
        var ended: (session: Subscription?, carriedByCloud: Bool) = (nil, false)
        updatePath { state in
            ended = (state.session, state.path.isCarriedByCloud)
            state.session = nil
            return [.unsubscribed]
        }
        if ended.carriedByCloud, let realtime = link?.realtime {
            // Under the lock: a subscription made after this one must keep its cloud feed.
            state.withLock { if $0.session == nil { realtime.unsubscribe(did) } }
        }
        ended.session?.work?.cancel()
        await ended.session?.connection?.close()
        await ended.session?.tuyaSession?.close()
        await ended.session?.work?.wait()
    }

    /// The subscription `token` stands for could not be established on either path: it ends, and
    /// subscribe() throws `error`.
    func subscriptionFailed(_ token: AsyncPromise<Void, TetherError>, _ error: TetherError) {
        updatePath { state in
            guard state.session?.firstLogin === token else { return [] }
            state.session = nil
            return [.unsubscribed]
        }
        token.resolve(.failure(error))
    }

    /// Writes data points, on the LAN when the device is connected there, through the cloud
    /// otherwise. The values are checked against the product model first.
    ///
    /// - Parameter sn: the sequence number the device's acknowledgement must carry. Nil lets the
    ///   client pick one; 0 sends the write without asking for an acknowledgement (it returns as
    ///   soon as the write is sent, or through the cloud accepted, and the device's report
    ///   follows as an event). A Tuya device has no sequence numbers of the app's: it always
    ///   answers a write, and the write returns with that answer; `sn` only labels the result
    ///   and its status event.
    /// - Returns: the acknowledged `sn` and the status the device sent with its acknowledgement
    ///   (through the cloud: the report that answered the `sn`, when it came within the request
    ///   timeout), which is also delivered as a ``DeviceEvent/status(_:)`` event with that `sn`.
    @discardableResult
    public func write(_ values: [String: DataValue], sn: UInt32? = nil) async throws(TetherError) -> WriteResult {
        await ensureModel()
        let route = try requirePath()
        if case .tuya(let session) = route { return try await writeTuya(values, sn: sn, on: session) }
        let codec = try requireCodec()
        let normalized = try codec.model.validateWrite(values)
        switch route {
        case .tuya(let session):
            return try await writeTuya(values, sn: sn, on: session)
        case .lan(let connection):
            let p0 = try codec.encode(.control(normalized), baseline: status.allValues)
            if sn == 0 {
                try await connection.send(.p0ToDevice(p0))
                return WriteResult(sn: 0, status: nil)
            }
            let sn = try reserveSN(sn)
            defer { releaseSN(sn) }
            let status = try await requestStatus(p0, sn: sn, on: connection, reportedSN: sn)
            return WriteResult(sn: sn, status: status)
        case .cloud(let realtime):
            let number = try reserveSN(sn == 0 ? nil : sn)
            defer { releaseSN(number) }
            let status = try await writeThroughCloud(normalized, sn: number, on: realtime, waitForReport: sn != 0)
            return WriteResult(sn: sn == 0 ? 0 : number, status: status)
        }
    }

    /// Reads the device's status now and returns it: from the device on the LAN (P0 read with
    /// acknowledgement), or the cloud's latest copy of it. It is also delivered as a
    /// ``DeviceEvent/status(_:)`` event with `sn` 0.
    public func getStatus() async throws(TetherError) -> DeviceStatus {
        let route = try requirePath()
        if case .tuya(let session) = route { return try await tuyaStatus(on: session) }
        let codec = try requireCodec()
        switch route {
        case .tuya(let session): return try await tuyaStatus(on: session)
        case .lan(let connection): return try await readStatus(codec: codec, on: connection)
        case .cloud(let realtime): return try await readThroughCloud(realtime)
        }
    }

    /// Sends transparent data (P0 action 0x05), outside the data-point model. Answers arrive as
    /// ``DeviceEvent/binary(_:)`` events.
    public func sendBinary(_ bytes: [UInt8]) async throws(TetherError) {
        switch try requirePath() {
        case .tuya:
            throw TetherError(.invalidArgument, "a Tuya device takes data points only (write), not transparent data")
        case .lan(let connection):
            var p0 = ByteBuffer(bytes: [P0Action.transparentToDevice.rawValue])
            p0.writeBytes(bytes)
            try await connection.send(.p0ToDevice(p0))
        case .cloud(let realtime):
            try realtime.sendRaw(did: did, bytes: bytes)
        }
    }

    /// The device's hardware and firmware versions. Works without a subscription (GAgent answers
    /// this before login), on the LAN only.
    public func hardwareInfo() async throws(TetherError) -> HardwareInfo {
        guard lanProtocol == .gizwits else { throw TetherError(.invalidArgument, "hardware information is a GAgent request; \(id) is a Tuya device") }
        if let connection = state.withLock({ $0.session?.connection }), connection.isActive {
            return try await Self.hardwareInfo(from: connection)
        }
        guard let endpoint = lanEndpoint else { throw TetherError(.deviceOffline, "device \(id) has no known LAN address") }
        let connection = try await GizwitsLANClient.connect(host: endpoint.host, port: endpoint.port, configuration: lan.clientConfiguration)
        do {
            let info = try await Self.hardwareInfo(from: connection)
            await connection.close()
            return info
        } catch {
            await connection.close()
            throw error
        }
    }

    private static func hardwareInfo(from connection: GizwitsLANClient) async throws(TetherError) -> HardwareInfo {
        guard case .hardwareInfo(let info) = try await connection.request(.hardwareInfoRequest) else {
            throw TetherError(.unexpectedResponse, "the device answered the hardware info request with something else")
        }
        return info
    }

    // MARK: Helpers shared with the session

    func requireCodec() throws(TetherError) -> P0Codec {
        guard let codec else {
            throw TetherError(
                .unknownProduct,
                "no product model for product key \(productKey): add it to the client's configuration, or let the client fetch it from a cloud that has it")
        }
        return codec
    }

    /// The path a request takes now: the LAN connection when it is up, the cloud when the
    /// device is subscribed there and online.
    func requirePath() throws(TetherError) -> ControlRoute {
        let (subscribed, connection, cloud, online, bound) = state.withLock {
            ($0.session != nil, $0.session?.connection, $0.path.isCarriedByCloud, $0.path.isOnlineInCloud, $0.path.isBound)
        }
        guard subscribed else { throw TetherError(.notControllable, "device \(id) is not subscribed") }
        if let tuya = state.withLock({ $0.session?.tuyaSession }), tuya.isActive { return .tuya(tuya) }
        if let connection, connection.isActive { return .lan(connection) }
        if cloud, let realtime = link?.connected {
            guard online else { throw TetherError(.deviceOffline, "device \(id) is not connected on the LAN and the cloud says it is offline") }
            return .cloud(realtime)
        }
        if !bound, link != nil, connection == nil, lanEndpoint == nil {
            throw TetherError(.notControllable, "device \(id) is no longer bound to the user and is not on the LAN")
        }
        throw TetherError(.notControllable, "device \(id) is subscribed but no path reaches it right now (the client reconnects on its own)")
    }

    func readStatus(codec: P0Codec, on connection: GizwitsLANClient) async throws(TetherError) -> DeviceStatus {
        let sn = try reserveSN(nil)
        defer { releaseSN(sn) }
        let status = try await requestStatus(try codec.encode(.read([])), sn: sn, on: connection, reportedSN: 0)
        guard let status else { throw TetherError(.unexpectedResponse, "the device acknowledged a read without its status") }
        return status
    }

    /// Sends P0 with an acknowledgement and returns the status carried by the acknowledgement,
    /// after recording and publishing it.
    func requestStatus(_ p0: ByteBuffer, sn: UInt32, on connection: GizwitsLANClient, reportedSN: UInt32) async throws(TetherError) -> DeviceStatus? {
        guard case .p0Ack(_, let reply) = try await connection.request(.p0WithAck(sn: sn, p0: p0)) else {
            throw TetherError(.unexpectedResponse, "the device answered sn \(sn) with something else")
        }
        guard reply.readableBytes > 0, let codec else { return nil }
        let message = try codec.decode(reply)
        guard let status = message.status else { return nil }
        record(DeviceStatusReport(status: status, sn: reportedSN))
        return status
    }

    /// Merges a report into the known status and publishes it.
    func record(_ report: DeviceStatusReport) {
        state.withLock { $0.status.merge(report.status) }
        emit(.status(report))
    }

    /// Picks a free `sn` (or checks the app's), so that two requests in flight never share one.
    func reserveSN(_ requested: UInt32?) throws(TetherError) -> UInt32 {
        try state.withLock { state throws(TetherError) -> UInt32 in
            if let requested {
                guard state.snInFlight.insert(requested).inserted else {
                    throw TetherError(.invalidArgument, "sn \(requested) is already waiting for an acknowledgement")
                }
                return requested
            }
            while state.nextSN == 0 || state.snInFlight.contains(state.nextSN) { state.nextSN &+= 1 }
            let sn = state.nextSN
            state.nextSN &+= 1
            state.snInFlight.insert(sn)
            return sn
        }
    }

    func releaseSN(_ sn: UInt32) {
        _ = state.withLock { $0.snInFlight.remove(sn) }
    }
}
