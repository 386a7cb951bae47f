import Synchronization
import TetherAlink
import TetherMQTT

/// The sub-devices online through gateway connections on this node: which connection carries
/// each, so that the broker lets a gateway use its sub-devices' topics (and only theirs), what
/// a gateway publishes for a sub-device is stored as that device's, and what the cloud sends a
/// sub-device goes to its gateway's connection.
final class SubDeviceSessions: Sendable {
    private struct Session {
        var did: String
        var gatewayClientID: String
    }

    private struct State {
        var bySubDevice: [AlinkDeviceIdentity: Session] = [:]
        var byDid: [String: AlinkDeviceIdentity] = [:]
        var byGateway: [String: Set<AlinkDeviceIdentity>] = [:]
    }

    private let state = Mutex(State())

    /// `sub` is online through `gatewayClientID`; the gateway connection it had before, if another.
    @discardableResult
    func login(_ sub: AlinkDeviceIdentity, did: String, via gatewayClientID: String) -> String? {
        state.withLock { state in
            let previous = state.bySubDevice[sub]?.gatewayClientID
            if let previous { state.byGateway[previous]?.remove(sub) }
            state.bySubDevice[sub] = Session(did: did, gatewayClientID: gatewayClientID)
            state.byDid[did] = sub
            state.byGateway[gatewayClientID, default: []].insert(sub)
            return previous == gatewayClientID ? nil : previous
        }
    }

    /// `sub` goes offline if `gatewayClientID` carries it; its did then.
    func logout(_ sub: AlinkDeviceIdentity, via gatewayClientID: String) -> String? {
        state.withLock { state in
            guard let session = state.bySubDevice[sub], session.gatewayClientID == gatewayClientID else { return nil }
            state.bySubDevice[sub] = nil
            state.byDid[session.did] = nil
            state.byGateway[gatewayClientID]?.remove(sub)
            return session.did
        }
    }

    /// The gateway's connection ended: the dids of the sub-devices it carried, now offline.
    func end(gateway gatewayClientID: String) -> [String] {
        state.withLock { state in
            let subs = state.byGateway.removeValue(forKey: gatewayClientID) ?? []
            return subs.compactMap { sub in
                guard let session = state.bySubDevice[sub], session.gatewayClientID == gatewayClientID else { return nil }
                state.bySubDevice[sub] = nil
                state.byDid[session.did] = nil
                return session.did
            }
        }
    }

    /// The did of `sub` if `clientID` carries it.
    func did(of sub: AlinkDeviceIdentity, via clientID: String) -> String? {
        state.withLock { state in
            guard let session = state.bySubDevice[sub], session.gatewayClientID == clientID else { return nil }
            return session.did
        }
    }

    /// The connection carrying sub-device `did`, if one on this node does.
    func gatewayClientID(did: String) -> String? {
        state.withLock { state in state.byDid[did].flatMap { state.bySubDevice[$0]?.gatewayClientID } }
    }
}

/// Where a device is reached on this node: its own connection, or its gateway's.
struct DeviceConnections: Sendable {
    let broker: MQTTBroker
    let catalogue: DeviceCatalogue
    let subDevices: SubDeviceSessions

    /// The device and the client id of the connection that carries it here; nil when none does.
    func route(_ did: String) async throws -> (device: DeviceCatalogue.Device, clientID: String)? {
        guard let device = try await catalogue.device(did) else { return nil }
        if broker.isConnected(clientID: device.clientID) { return (device, device.clientID) }
        if let gateway = subDevices.gatewayClientID(did: did), broker.isConnected(clientID: gateway) { return (device, gateway) }
        return nil
    }
}
