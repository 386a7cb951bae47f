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
    let client: String

    init(client: String) {
        self.client = client
    }

    mutating func receive(_ message: GizwitsLANMessage, device: VirtualDevice, hotspots: [GizwitsHotspot], hardwareInfo: GizwitsHardwareInfo) -> [Action] {
        if !loggedIn, !GizwitsLANCommand.allowedBeforeLogin.contains(message.command) {
            return [.close(reason: "\(message.command) before login")]
        }
        switch message {
        case .passcodeRequest:
            guard device.isBindingWindowOpen else {
                return [.send(.passcodeResponse(nil)), .close(reason: "passcode requested outside the binding window")]
            }
            return [.send(.passcodeResponse(device.identity.passcode))]
        case .login(let passcode):
            // Byte for byte: String == would accept canonically equivalent Unicode (U+212A for K).
            guard passcode.utf8.elementsEqual(device.identity.passcode.utf8) else {
                return [.send(.loginResult(success: false)), .close(reason: "wrong passcode")]
            }
            loggedIn = true
            device.events.yield(.clientLoggedIn(client))
            return [.send(.loginResult(success: true))]
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

    /// Executes a P0 payload; returns the reply P0, if the action has one.
    private func handleP0(_ p0: ByteBuffer, device: VirtualDevice, acknowledged: Bool) -> ByteBuffer? {
        let message: P0Message
        do {
            message = try device.codec.decode(p0)
        } catch {
            device.events.yield(.rejectedControl(error, client: client))
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
