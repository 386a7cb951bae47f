import Logging
import Synchronization
import NIOCore

extension Device {
    /// Connects to the device on the LAN, logs in and reads its status. Returns when the device
    /// is ``NetStatus/controllable``; from then on the client keeps the subscription up: it sends
    /// heartbeats, reconnects when the link drops and reads the status again after every
    /// reconnection, until ``unsubscribe()``.
    ///
    /// - Parameter passcode: the device's passcode. When nil, the client uses the passcode it
    ///   used before, or asks the device for it, which works only in the binding window.
    /// - Throws: ``TetherError/Code/deviceOffline`` when the device's address is unknown;
    ///   ``TetherError/Code/connectionFailed``; ``TetherError/Code/notInBindingWindow`` when no
    ///   passcode is known and the device will not give it; ``TetherError/Code/loginFailed``
    ///   (wrong passcode, or the device serves its maximum of clients); ``TetherError/Code/timeout``.
    public func subscribe(passcode: String? = nil) async throws(TetherError) {
        let promise = AsyncPromise<Void, TetherError>()
        let started = state.withLock { state -> AsyncPromise<Void, TetherError>? in
            if let passcode { state.passcode = passcode }
            if let session = state.session { return session.firstLogin }
            state.session = LANSession(task: nil, connection: nil, firstLogin: promise)
            return nil
        }
        if let started {
            return try await started.value()
        }
        let task = Task { await self.runSession(firstLogin: promise) }
        state.withLock { $0.session?.task = task }
        try await promise.value()
    }

    /// Ends the subscription and closes the connection.
    public func unsubscribe() async {
        let session = state.withLock { state -> LANSession? in
            defer { state.session = nil }
            return state.session
        }
        session?.task?.cancel()
        await session?.connection?.close()
        await session?.task?.value
        updateNetStatus()
    }

    /// Writes data points. The values are checked against the product model first.
    ///
    /// - Parameter sn: the sequence number the device's acknowledgement must carry. Nil lets the
    ///   client pick one; 0 sends the write without asking for an acknowledgement (it returns as
    ///   soon as the write is sent, and the device's report follows as an event).
    /// - Returns: the acknowledged `sn` and the status the device sent with its acknowledgement,
    ///   which is also delivered as a ``DeviceEvent/status(_:)`` event with that `sn`.
    @discardableResult
    public func write(_ values: [String: DataValue], sn: UInt32? = nil) async throws(TetherError) -> WriteResult {
        let codec = try requireCodec()
        let normalized = try codec.model.validateWrite(values)
        let connection = try requireConnection()
        let p0 = try codec.encode(.control(normalized), baseline: status.allValues)
        if sn == 0 {
            try await connection.send(.p0ToDevice(p0))
            return WriteResult(sn: 0, status: nil)
        }
        let sn = try reserveSN(sn)
        defer { releaseSN(sn) }
        let status = try await requestStatus(p0, sn: sn, on: connection, reportedSN: sn)
        return WriteResult(sn: sn, status: status)
    }

    /// Reads the device's status now (P0 read with acknowledgement) and returns it; it is also
    /// delivered as a ``DeviceEvent/status(_:)`` event with `sn` 0.
    public func getStatus() async throws(TetherError) -> DeviceStatus {
        let codec = try requireCodec()
        let connection = try requireConnection()
        return try await readStatus(codec: codec, on: connection)
    }

    /// Sends transparent data (P0 action 0x05), outside the data-point model. Answers arrive as
    /// ``DeviceEvent/binary(_:)`` events.
    public func sendBinary(_ bytes: [UInt8]) async throws(TetherError) {
        let connection = try requireConnection()
        var p0 = ByteBuffer(bytes: [P0Action.transparentToDevice.rawValue])
        p0.writeBytes(bytes)
        try await connection.send(.p0ToDevice(p0))
    }

    /// The device's hardware and firmware versions. Works without a subscription (GAgent answers
    /// this before login), on the LAN only.
    public func hardwareInfo() async throws(TetherError) -> HardwareInfo {
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
            throw TetherError(.unknownProduct, "no product model for product key \(productKey): add it to the client's configuration")
        }
        return codec
    }

    func requireConnection() throws(TetherError) -> GizwitsLANClient {
        let (subscribed, connection) = state.withLock { ($0.session != nil, $0.session?.connection) }
        guard subscribed else { throw TetherError(.notControllable, "device \(id) is not subscribed") }
        guard let connection, connection.isActive else {
            throw TetherError(.notControllable, "device \(id) is subscribed but not connected right now (it reconnects on its own)")
        }
        return connection
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
    private func requestStatus(_ p0: ByteBuffer, sn: UInt32, on connection: GizwitsLANClient, reportedSN: UInt32) async throws(TetherError) -> DeviceStatus? {
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
    private func reserveSN(_ requested: UInt32?) throws(TetherError) -> UInt32 {
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

    private func releaseSN(_ sn: UInt32) {
        _ = state.withLock { $0.snInFlight.remove(sn) }
    }
}
