import Logging
import Synchronization
import TetherCore
import TetherTuyaLAN

/// Which local protocol a device speaks on the LAN.
public enum LANProtocol: String, Hashable, Sendable {
    /// The Gizwits GAgent protocol (TCP 12416, discovery on UDP 12414).
    case gizwits
    /// The Tuya local protocol 3.1 to 3.5 (TCP 6668, announcements on UDP 6666/6667).
    case tuya
}

/// What the client needs to talk Tuya to a device: its id, version and local key.
struct TuyaLink: Sendable {
    var deviceID: String
    var version: TuyaVersion
    /// Nil for a device heard announcing itself whose key the app has not given yet.
    var localKey: TuyaLocalKey?
    /// Its address comes from its announcements (its presence expires), not from the app.
    var addressFromAnnouncements = false
    /// Its version comes from its announcements. Not for a version the app or the cloud gave:
    /// announcements are not authenticated, and one must not downgrade a device's protocol.
    var versionFromAnnouncements = false
}

extension Device {
    /// The protocol the device speaks on the LAN.
    public var lanProtocol: LANProtocol { state.withLock { $0.tuya == nil ? .gizwits : .tuya } }

    /// The Tuya protocol version, for a Tuya device.
    public var tuyaVersion: TuyaVersion? { state.withLock { $0.tuya?.version } }

    /// Gives a Tuya device its local key (for a device heard announcing itself whose key the
    /// configuration did not have). The next connection uses it.
    public func setTuyaLocalKey(_ key: TuyaLocalKey) throws(TetherError) {
        try state.withLock { state throws(TetherError) in
            guard state.tuya != nil else { throw TetherError(.invalidArgument, "device \(id) is not a Tuya device") }
            state.tuya?.localKey = key
        }
    }

    /// Makes the device a Tuya device with what the app or the cloud gave (its key and version,
    /// and when given its address and model), whether the client knew it already (the cloud's
    /// bindings, an announcement) or not. A device subscribed on GAgent cannot change protocol.
    func configureTuya(_ link: TuyaLink, endpoint: LANEndpoint?, model: ThingModel?) throws(TetherError) {
        var refused = false
        updatePath { state in
            if state.tuya == nil, state.session != nil {
                refused = true
                return []
            }
            var link = link
            if endpoint == nil, let known = state.tuya { link.addressFromAnnouncements = known.addressFromAnnouncements }
            state.tuya = link
            if let model { state.productKey = model.productKey }
            guard let endpoint else { return [] }
            state.endpoint = endpoint
            state.lastSeen = .now
            return [.seenOnLAN]
        }
        if refused { throw TetherError(.invalidArgument, "device \(id) is subscribed on GAgent: unsubscribe before making it a Tuya device") }
        if let model { replaceModel(model) }
    }

    /// Records an announcement: where the device is now (for a device whose address comes from
    /// its announcements), and its version (for one whose version does too).
    func heardAnnouncement(productKey: String, endpoint: LANEndpoint, version: TuyaVersion?) {
        updatePath { state in
            if state.tuya?.addressFromAnnouncements == true {
                if !productKey.isEmpty, model == nil { state.productKey = productKey }
                state.endpoint = endpoint
            }
            if let version, state.tuya?.versionFromAnnouncements == true { state.tuya?.version = version }
            state.lastSeen = .now
            return [.seenOnLAN]
        }
    }

    func tuyaAddress() throws(TetherError) -> TuyaDeviceAddress {
        let (link, endpoint) = state.withLock { ($0.tuya, $0.endpoint) }
        guard let link else { throw TetherError(.invalidArgument, "device \(id) is not a Tuya device") }
        guard let key = link.localKey else {
            throw TetherError(.notControllable, "Tuya device \(id) has no local key: give one with setTuyaLocalKey(_:) or the configuration")
        }
        guard let endpoint else { throw TetherError(.deviceOffline, "Tuya device \(id) has no known address") }
        return try TuyaDeviceAddress(host: endpoint.host, port: endpoint.port, deviceID: link.deviceID, localKey: key.bytes, version: link.version)
    }

    /// Keeps a Tuya device's connection up until cancelled: connect (negotiating the session key
    /// on 3.4/3.5), read the status, then heartbeats and pushes until the link drops, then again
    /// after the reconnect policy's delay. A device serves one client at a time (most drop the
    /// older connection for a newer one): while another client takes it, the attempts back off
    /// rather than compete. The first attempt decides
    /// whether ``subscribe(passcode:)`` succeeds.
    func runTuyaSession(firstLogin: AsyncPromise<Void, TetherError>) async {
        var generator = SystemRandomNumberGenerator()
        var attempt = 0
        while !Task.isCancelled {
            do throws(TetherError) {
                let session = try await TuyaLANSession.connect(to: try tuyaAddress(), configuration: tuyaConfiguration.sessionConfiguration)
                guard setTuyaSession(session, for: firstLogin) else {
                    await session.close()
                    break
                }
                do throws(TetherError) {
                    _ = try await readTuyaStatus(on: session)
                } catch {
                    _ = setTuyaSession(nil, for: firstLogin)
                    await session.close()
                    throw error
                }
                firstLogin.resolve(.success(()))
                let connectedAt = ContinuousClock.now
                await serve(session)
                // Many devices serve the newest client and drop the one before: a connection
                // that ends soon after it began was most likely taken by another app, and
                // coming straight back would take it from them. The backoff starts again only
                // after a connection that lasted.
                if ContinuousClock.now - connectedAt >= Self.stableTuyaConnection { attempt = 0 }
                _ = setTuyaSession(nil, for: firstLogin)
                logger.debug("Tuya device link lost, reconnecting", metadata: ["tether.device": "\(id)"])
            } catch {
                if !firstLogin.isResolved {
                    subscriptionFailed(firstLogin, error)
                    return
                }
                logger.debug("Tuya device reconnection failed", metadata: ["tether.device": "\(id)", "tether.error": "\(error)"])
            }
            let delay = lan.reconnect.delay(attempt: attempt, using: &generator)
            attempt += 1
            do { try await Task.sleep(for: delay) } catch { break }
        }
        firstLogin.resolve(.failure(TetherError(.cancelled, "the subscription to \(id) ended before it was established")))
        let session = state.withLock { $0.session?.firstLogin === firstLogin ? $0.session?.tuyaSession : nil }
        await session?.close()
    }

    /// How long a connection must last for the next reconnection to start from the shortest delay.
    static let stableTuyaConnection = Duration.seconds(30)

    private func setTuyaSession(_ session: TuyaLANSession?, for token: AsyncPromise<Void, TetherError>) -> Bool {
        var current = false
        updatePath { state in
            guard state.session?.firstLogin === token else { return [] }
            current = true
            state.session?.tuyaSession = session
            return [.lanSession(up: session != nil)]
        }
        return current
    }

    /// Runs a connection until it closes: pushes become status events, unreadable frames error
    /// events, and heartbeats check the link (a missed one closes it).
    private func serve(_ session: TuyaLANSession) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for await report in session.reports { self.recordTuya(report, sn: 0) }
            }
            group.addTask {
                for await problem in session.problems { self.emit(.error(problem)) }
            }
            group.addTask {
                while !Task.isCancelled {
                    do { try await Task.sleep(for: self.tuyaConfiguration.heartbeatInterval) } catch { return }
                    do throws(TetherError) {
                        try await session.heartbeat()
                    } catch {
                        self.logger.debug("Tuya heartbeat failed, closing the link", metadata: ["tether.device": "\(self.id)", "tether.error": "\(error)"])
                        await session.close()
                        return
                    }
                }
            }
            await session.closed()
            group.cancelAll()
        }
    }

    /// Reads every data point (naming the model's points for a device22) and records them.
    func readTuyaStatus(on session: TuyaLANSession) async throws(TetherError) -> DeviceStatus {
        let ids = model.map { TuyaDataPointMap(model: $0).ids } ?? []
        let status = try await session.status(dataPoints: ids)
        return recordTuya(status, sn: 0)
    }

    /// The device's whole status after a read (a Tuya answer names only the points it holds).
    func tuyaStatus(on session: TuyaLANSession) async throws(TetherError) -> DeviceStatus {
        _ = try await readTuyaStatus(on: session)
        return status
    }

    /// Merges what a Tuya device reported into the status and publishes it: by name with a model
    /// (points it does not name are left out), by DP id (`"1"`) without one.
    @discardableResult
    func recordTuya(_ status: TuyaStatus, sn: UInt32) -> DeviceStatus {
        let report: DeviceStatus
        if let model {
            report = DeviceStatus(values: TuyaDataPointMap(model: model).values(status.dps), model: model)
        } else {
            var values: [String: DataValue] = [:]
            for id in status.dps.keys { if let value = status.dps[id].flatMap(DataValue.init(json:)) { values[id] = value } }
            report = DeviceStatus(data: values)
        }
        if !report.isEmpty { record(DeviceStatusReport(status: report, sn: sn)) }
        return report
    }

    /// A write on a Tuya connection: checked against the model and sent by DP id (without a
    /// model, the names must be DP ids and go unchecked); the points the device answered with are
    /// recorded under `sn`. A device that only acknowledges reports the change afterwards as a push.
    func writeTuya(_ values: [String: DataValue], sn: UInt32?, on session: TuyaLANSession) async throws(TetherError) -> WriteResult {
        var dps = JSONObject()
        if let model {
            dps = TuyaDataPointMap(model: model).dps(try model.validateWrite(values))
        } else {
            for (id, value) in values.sorted(by: { $0.key < $1.key }) {
                guard Int(id) != nil else {
                    throw TetherError(.unknownDataPoint, "without a product model, a Tuya device's points are written by DP id (\"1\"), not \(id)")
                }
                dps[id] = TuyaDataPointMap.json(value)
            }
        }
        guard !dps.isEmpty else { throw TetherError(.invalidArgument, "nothing to write") }
        let number = sn ?? 0
        guard let answered = try await session.set(dps) else { return WriteResult(sn: number, status: nil) }
        let status = recordTuya(answered, sn: number)
        return WriteResult(sn: number, status: status.isEmpty ? nil : status)
    }

}
