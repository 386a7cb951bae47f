import NIOCore
import Synchronization
import TetherCore
import TetherTuyaLAN

/// One connection's codec and session, used on its event loop by its handler (answers) and by
/// the device's change observer (pushes).
final class TuyaDeviceLink: Sendable {
    private struct State {
        var codec: TuyaCodec
        var session: TuyaDeviceSession
        /// The points as the client last heard them (answers and pushes), by id.
        var reported: JSONObject
    }

    private let state: Mutex<State>
    let points: TuyaDataPointMap

    init(configuration: TuyaDeviceConfiguration, device: VirtualDevice) throws(TetherError) {
        points = TuyaDataPointMap(model: device.model)
        state = Mutex(
            State(
                codec: try TuyaCodec(version: configuration.version, key: configuration.localKey, sender: .device),
                session: try TuyaDeviceSession(
                    version: configuration.version, deviceID: configuration.deviceID, localKey: configuration.localKey, points: points),
                reported: points.dps(device.status.allValues)))
    }

    func decode(_ buffer: inout ByteBuffer) throws(TetherError) -> TuyaMessage? {
        let codec = state.withLock { $0.codec }
        return try codec.decode(&buffer)
    }

    func encode(_ message: TuyaMessage) throws(TetherError) -> ByteBuffer {
        let codec = state.withLock { $0.codec }
        return try codec.encode(message)
    }

    func receive(_ message: TuyaMessage, device: VirtualDevice, client: String) -> [TuyaDeviceSession.Action] {
        state.withLock { state in
            let actions = state.session.receive(message, device: device, client: client)
            for case .send(let reply) in actions where !reply.payload.isEmpty {
                guard let answered = try? TuyaStatus(parsing: reply.payload) else { continue }
                for id in answered.dps.keys { state.reported[id] = answered.dps[id] }
            }
            return actions
        }
    }

    func useKey(_ key: [UInt8]) { state.withLock { $0.codec.key = key } }

    /// A `STATUS` frame with the points that differ from what the client last heard; nil when
    /// none do, or before the session is ready.
    func push(changesIn values: [String: DataValue], time: Int64) -> ByteBuffer? {
        let now = points.dps(values)
        return state.withLock { state -> ByteBuffer? in
            var changed = JSONObject()
            for id in now.keys where now[id] != state.reported[id] { changed[id] = now[id] }
            guard state.session.isReady, !changed.isEmpty else { return nil }
            for id in changed.keys { state.reported[id] = changed[id] }
            let payload = TuyaStatus(dps: changed, time: time).payload(deviceID: state.session.deviceID, version: state.codec.version)
            let message = TuyaMessage(sequence: state.session.nextPushSequence(), command: .status, returnCode: 0, payload: payload)
            return try? state.codec.encode(message)
        }
    }
}
