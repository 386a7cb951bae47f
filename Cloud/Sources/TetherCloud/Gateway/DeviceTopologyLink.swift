import Logging
import TetherAlink
import TetherCore

/// Gateways and their sub-devices (Aliyun's `thing/topo/add|delete|get` and
/// `/ext/session/…/combine/login|batch_login|logout|batch_logout`): a gateway adds a sub-device
/// to its topology only by proving it holds the sub-device's secret (a fresh signature), brings
/// only its own sub-devices online, and their traffic then travels over its connection.
/// Requests naming several devices succeed or fail as a whole; a refusal (460) names the device.
struct DeviceTopologyLink: Sendable {
    let database: any SQLDatabase
    let sessions: SubDeviceSessions
    let presence: DevicePresence
    /// How far a sign-in's timestamp may be from the server's clock, in seconds.
    let timestampSkew: Int64
    let logger: Logger

    /// The gateway sending a request: its did and its connection.
    struct Gateway: Sendable {
        var did: String
        var device: AlinkDeviceIdentity
        var clientID: String
    }

    struct Refusal: Error {
        var message: String
    }

    /// Answers one request of a gateway's.
    func handle(_ request: AlinkRequest, topic: AlinkTopic, from gateway: Gateway) async -> AlinkReply {
        do {
            let devices: [AlinkDeviceIdentity]
            switch topic {
            case .system("thing/topo/add"): devices = try await add(try SubDeviceMessages.signIns(request), to: gateway)
            case .system("thing/topo/delete"): devices = try await remove(try SubDeviceMessages.identities(request), from: gateway)
            case .system("thing/topo/get"): devices = try await topology(of: gateway)
            case .session("combine/login"), .session("combine/batch_login"): devices = try await login(try SubDeviceMessages.signIns(request), via: gateway)
            case .session("combine/logout"), .session("combine/batch_logout"):
                devices = try await logout(try SubDeviceMessages.identities(request), via: gateway)
            default: return request.reply(code: AlinkCodes.invalidParameter, message: "not a gateway request")
            }
            return request.reply(data: .array(devices.map(SubDeviceMessages.json)))
        } catch let refusal as Refusal {
            logger.info("a gateway request was refused", metadata: ["did": "\(gateway.did)", "reason": "\(refusal.message)"])
            return request.reply(code: AlinkCodes.invalidParameter, message: refusal.message)
        } catch let error as TetherError where error.code == .malformedPayload {
            return request.reply(code: AlinkCodes.invalidParameter, message: error.message)
        } catch {
            logger.error("a gateway request could not be handled", metadata: ["did": "\(gateway.did)", "error": "\(error)"])
            return request.reply(code: AlinkCodes.serverError, message: "the request could not be handled")
        }
    }

    /// Checks every sign-in; the dids in order, or the first refusal.
    private func verify(_ signIns: [SubDeviceSignIn], by gateway: Gateway) async throws -> [String] {
        let now = Clock.unixNow()
        var dids: [String] = []
        for signIn in signIns {
            guard signIn.device != gateway.device else { throw Refusal(message: "a gateway cannot be its own sub-device") }
            guard let stamp = signIn.timestampSeconds, abs(now - stamp) <= timestampSkew else {
                throw Refusal(message: "\(signIn.device): the timestamp is not within \(timestampSkew) s of the server's clock")
            }
            guard let stored = try await DeviceStore(database).credentials(productKey: signIn.device.productKey, deviceName: signIn.device.deviceName),
                signIn.verify(secret: stored.deviceSecret)
            else {
                throw Refusal(message: "\(signIn.device): no such device, or a wrong signature")
            }
            guard !stored.isDisabled else { throw Refusal(message: "\(signIn.device): the device is disabled") }
            dids.append(stored.did)
        }
        return dids
    }

    private func add(_ signIns: [SubDeviceSignIn], to gateway: Gateway) async throws -> [AlinkDeviceIdentity] {
        let dids = try await verify(signIns, by: gateway)
        let now = Clock.unixMilliseconds()
        try await database.transaction { transaction in
            for did in dids { try await TopologyStore(transaction).attach(did, to: gateway.did, atMs: now) }
        }
        return signIns.map(\.device)
    }

    private func remove(_ devices: [AlinkDeviceIdentity], from gateway: Gateway) async throws -> [AlinkDeviceIdentity] {
        var removed: [AlinkDeviceIdentity] = []
        for device in devices {
            guard let stored = try await DeviceStore(database).credentials(productKey: device.productKey, deviceName: device.deviceName),
                try await TopologyStore(database).detach(stored.did, from: gateway.did)
            else { continue }
            if let did = sessions.logout(device, via: gateway.clientID) {
                try await presence.disconnected(did: did, atMs: Clock.unixMilliseconds(), reason: nil, why: "removed from its gateway")
            }
            removed.append(device)
        }
        return removed
    }

    private func topology(of gateway: Gateway) async throws -> [AlinkDeviceIdentity] {
        try await TopologyStore(database).subDevices(of: gateway.did).map { try AlinkDeviceIdentity(productKey: $0.productKey, deviceName: $0.deviceName) }
    }

    private func login(_ signIns: [SubDeviceSignIn], via gateway: Gateway) async throws -> [AlinkDeviceIdentity] {
        let dids = try await verify(signIns, by: gateway)
        for (signIn, did) in zip(signIns, dids) where try await TopologyStore(database).gateway(of: did) != gateway.did {
            throw Refusal(message: "\(signIn.device): not a sub-device of this gateway (add it with thing/topo/add)")
        }
        let now = Clock.unixMilliseconds()
        for (signIn, did) in zip(signIns, dids) {
            sessions.login(signIn.device, did: did, via: gateway.clientID)
            try await presence.connected(did: did, atMs: now, remoteAddress: "")
        }
        return signIns.map(\.device)
    }

    private func logout(_ devices: [AlinkDeviceIdentity], via gateway: Gateway) async throws -> [AlinkDeviceIdentity] {
        var offline: [AlinkDeviceIdentity] = []
        let now = Clock.unixMilliseconds()
        for device in devices {
            guard let did = sessions.logout(device, via: gateway.clientID) else { continue }
            try await presence.disconnected(did: did, atMs: now, reason: nil, why: "logged out by its gateway")
            offline.append(device)
        }
        return offline
    }
}
