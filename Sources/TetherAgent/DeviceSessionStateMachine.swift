import NIOCore
import TetherCore
import TetherGizwitsLAN

/// The device side of one TCP client, as GAgent behaves (`shared/reference/gizwits-lan.md`
/// §3, §5–§7): the authorization gate, passcode only in the binding window, login, P0 control
/// and reads with `sn`, heartbeat, hardware info and the hotspot list.
///
/// A value: feed it messages, run the actions it returns.
struct DeviceSessionStateMachine {
    enum Action: Equatable {
        case send(GizwitsLANMessage)
        /// Close the connection now (after sending what came before).
        case close(reason: String)
        /// Close after a short delay (GAgent closes ~100 ms after the hotspot list).
        case closeSoon
    }

    private(set) var loggedIn = false
    /// When the grant the client logged in with lapses (Unix seconds); nil after a passcode login.
    private(set) var grantExpiry: Int64?
    /// What the client may do: everything after a passcode login, the grant's rights otherwise.
    private(set) var rights: LANGrant.Rights = []
    let client: String

    init(client: String) {
        self.client = client
    }

    mutating func receive(_ message: GizwitsLANMessage, device: VirtualDevice, hotspots: [GizwitsHotspot], hardwareInfo: GizwitsHardwareInfo) -> [Action] {
        if !loggedIn, !GizwitsLANCommand.allowedBeforeLogin.contains(message.command) {
            return [.close(reason: "\(message.command) before login")]
        }
        if loggedIn, let grantExpiry, device.lanGrants.now() >= grantExpiry, !message.isLogin {
            // A session lasts no longer than its grant: a revoked user's open connection ends too.
            return [.send(.loginResult(.grantExpired)), .close(reason: "the grant expired")]
        }
        switch message {
        case .passcodeRequest:
            guard device.isBindingWindowOpen else {
                return [.send(.passcodeResponse(nil)), .close(reason: "passcode requested outside the binding window")]
            }
            return [.send(.passcodeResponse(device.identity.passcode))]
        case .login(let text) where LANGrant.isGrant(text) && device.lanGrants.isActivated:
            // Before activation a grant is just a wrong passcode (01), as on GAgent: the app falls back.
            return login(grant: text, device: device)
        case .login(let passcode):
            // Byte for byte: String == would accept canonically equivalent Unicode (U+212A for K).
            guard passcode.utf8.elementsEqual(device.identity.passcode.utf8) else {
                return refuse(.refused, reason: "wrong passcode")
            }
            guard device.lanGrants.acceptsPasscode(bindingWindowOpen: device.isBindingWindowOpen) else {
                return refuse(.grantRequired, reason: "a passcode alone no longer logs in: the device takes grants")
            }
            loggedIn = true
            grantExpiry = nil
            rights = [.read, .control]
            device.events.yield(.clientLoggedIn(client))
            return [.send(.loginResult(.success))]
        case .hotspotListRequest:
            return [.send(.hotspotList(hotspots)), .closeSoon]
        case .hardwareInfoRequest:
            return [.send(.hardwareInfo(hardwareInfo))]
        case .productionTestRequest:
            return [.send(.productionTestAck)]
        case .heartbeat:
            return [.send(.heartbeatReply)]
        case .p0ToDevice(let p0):
            // A control without acknowledgement gets no direct answer: the status push reports it.
            return handleP0(p0, device: device, acknowledged: false).map { reply in [.send(.p0FromDevice(reply))] } ?? []
        case .p0WithAck(let sn, let p0):
            let reply = handleP0(p0, device: device, acknowledged: true) ?? (try? device.codec.encode(.readAck(device.status))) ?? ByteBuffer()
            return [.send(.p0Ack(sn: sn, p0: reply))]
        default:
            // 0x0094 acknowledgements of our pushes, 0x000A, 0x0010 and unknown commands: nothing to do.
            return []
        }
    }

    /// A grant at login, or a new one on a logged-in connection (the app renews it before it
    /// lapses); a refused grant ends the connection either way.
    private mutating func login(grant text: String, device: VirtualDevice) -> [Action] {
        switch device.lanGrants.verify(text, did: device.identity.did) {
        case .success(let grant):
            let first = !loggedIn
            loggedIn = true
            grantExpiry = grant.expiresAt
            rights = grant.rights
            if first { device.events.yield(.clientLoggedIn(client)) }
            return [.send(.loginResult(.success))]
        case .failure(.expired):
            return refuse(.grantExpired, reason: "expired grant")
        case .failure(.foreign):
            return refuse(.grantInvalid, reason: "a grant for another device")
        case .failure(.invalid):
            return refuse(.grantInvalid, reason: "a grant the device cannot verify")
        }
    }

    private mutating func refuse(_ result: GizwitsLoginResult, reason: String) -> [Action] {
        loggedIn = false
        return [.send(.loginResult(result)), .close(reason: reason)]
    }

    /// Executes a P0 payload; returns the reply P0, if the action has one.
    private func handleP0(_ p0: ByteBuffer, device: VirtualDevice, acknowledged: Bool) -> ByteBuffer? {
        let message: P0Message
        do {
            message = try device.codec.decode(p0)
        } catch {
            device.events.yield(.rejectedControl(error, client: client))
            return nil
        }
        if message.changesTheDevice, !rights.contains(.control) {
            device.events.yield(.rejectedControl(TetherError(.notControllable, "the client's grant does not allow control"), client: client))
            return nil
        }
        if case .read = message, !rights.contains(.read) {
            device.events.yield(.rejectedControl(TetherError(.notControllable, "the client's grant does not allow reading"), client: client))
            return nil
        }
        switch message {
        case .control(let values):
            let status = device.applyControl(values, from: client)
            return acknowledged ? try? device.codec.encode(.readAck(status)) : nil
        case .read:
            return try? device.codec.encode(.readAck(device.status))
        case .transparentToDevice(let bytes):
            // The simulator echoes transparent data, so apps can test their binary path.
            device.events.yield(.transparentData(bytes, client: client))
            return try? device.codec.encode(.transparentFromDevice(bytes))
        case .readAck, .report, .transparentFromDevice:
            return nil
        }
    }
}

extension GizwitsLANMessage {
    fileprivate var isLogin: Bool {
        if case .login = self { true } else { false }
    }
}

extension P0Message {
    fileprivate var changesTheDevice: Bool {
        switch self {
        case .control, .transparentToDevice: true
        case .read, .readAck, .report, .transparentFromDevice: false
        }
    }
}
