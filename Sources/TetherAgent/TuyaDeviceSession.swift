import TetherCore
import TetherTuyaLAN

/// The device side of one Tuya TCP client, as a value (§4–§6 of the reference): the 3.4/3.5
/// negotiation before anything else, then reads, writes, heartbeats and refreshes. Feed it
/// messages, run the actions it returns; status pushes come from the device's changes.
struct TuyaDeviceSession {
    enum Action: Equatable {
        case send(TuyaMessage)
        /// From now on, frames in both directions use this key (after `SESS_KEY_NEG_FINISH`).
        case useKey([UInt8])
        case close(reason: String)
        /// The frame was not acted on (a replay): nothing is answered.
        case refuse(TetherError)
    }

    let version: TuyaVersion
    let deviceID: String
    let points: TuyaDataPointMap
    private var handshake: TuyaHandshake.Device?
    private(set) var isReady: Bool
    private var ownSequence: UInt32 = 0
    /// The highest sequence number the client has used on this connection. Clients count up per
    /// frame (tinytuya from 1); a frame at or below it is a replay and is not acted on. 0 is
    /// exempt: some clients send every frame with 0. This catches replays within a connection
    /// only: on 3.1–3.3 a frame replayed on a new connection, or rewritten with sequence 0 (the
    /// header is covered by a CRC, not a MAC), is not caught; 3.4/3.5 session keys are.
    private var lastClientSequence: UInt32 = 0

    init(version: TuyaVersion, deviceID: String, localKey: [UInt8], points: TuyaDataPointMap) throws(TetherError) {
        self.version = version
        self.deviceID = deviceID
        self.points = points
        self.handshake = version.negotiatesSessionKey ? try TuyaHandshake.Device(version: version, localKey: localKey) : nil
        self.isReady = !version.negotiatesSessionKey
    }

    /// 3.1–3.4 devices answer with the request's sequence number, 3.5 devices with their own.
    private mutating func answerSequence(_ request: TuyaMessage) -> UInt32 {
        guard version == .v35 else { return request.sequence }
        ownSequence &+= 1
        return ownSequence
    }

    mutating func nextPushSequence() -> UInt32 {
        ownSequence &+= 1
        return ownSequence
    }

    mutating func receive(_ message: TuyaMessage, device: VirtualDevice, client: String) -> [Action] {
        if !isReady {
            lastClientSequence = max(lastClientSequence, message.sequence)
            guard var handshake else { return [.close(reason: "no negotiation")] }
            do throws(TetherError) {
                switch message.command {
                case .sessionKeyStart:
                    let response = try handshake.respond(to: message, sequence: answerSequence(message))
                    self.handshake = handshake
                    return [.send(response)]
                case .sessionKeyFinish:
                    let key = try handshake.complete(with: message)
                    isReady = true
                    return [.useKey(key)]
                default:
                    return [.close(reason: "\(message.command) before the session key was negotiated")]
                }
            } catch {
                return [.close(reason: error.message)]
            }
        }
        if message.sequence != 0 {
            guard message.sequence > lastClientSequence else {
                return [.refuse(TetherError(.replayedFrame, "\(message.command) with sequence \(message.sequence), not above \(lastClientSequence): a replay"))]
            }
            lastClientSequence = message.sequence
        }
        let sequence = answerSequence(message)
        switch message.command {
        case .heartbeat:
            return [.send(TuyaMessage(sequence: sequence, command: .heartbeat, returnCode: 0))]
        case .query, .queryNew:
            let status = TuyaStatus(dps: points.dps(device.status.allValues), time: device.lanGrants.now())
            return [
                .send(TuyaMessage(sequence: sequence, command: message.command, returnCode: 0, payload: status.payload(deviceID: deviceID, version: version)))
            ]
        case .control, .controlNew:
            guard let document = try? JSONValue.parse(message.payload), let dps = (document["dps"] ?? document["data"]?["dps"])?.objectValue else {
                return [.send(TuyaMessage(sequence: sequence, command: message.command, returnCode: 1, payload: Array("json obj data unvalid".utf8)))]
            }
            let values = points.values(dps)
            if !values.isEmpty { device.applyControl(values, from: client) }
            // Answered with the points as they now are (what was set, normalised), as devices
            // and tuyamock do; the push of the change leaves out what this answer carried.
            let all = points.dps(device.status.allValues)
            var answered = JSONObject()
            for id in dps.keys { if let value = all[id] { answered[id] = value } }
            let status = TuyaStatus(dps: answered.isEmpty ? all : answered, time: device.lanGrants.now())
            return [
                .send(TuyaMessage(sequence: sequence, command: message.command, returnCode: 0, payload: status.payload(deviceID: deviceID, version: version)))
            ]
        case .updateDPS:
            let all = points.dps(device.status.allValues)
            var asked = JSONObject()
            let ids = (try? JSONValue.parse(message.payload))?["dpId"]?.arrayValue ?? []
            for case .int(let id) in ids { if let value = all[String(id)] { asked[String(id)] = value } }
            let status = TuyaStatus(dps: asked.isEmpty ? all : asked, time: device.lanGrants.now())
            return [
                .send(TuyaMessage(sequence: nextPushSequence(), command: .status, returnCode: 0, payload: status.payload(deviceID: deviceID, version: version)))
            ]
        default:
            return []
        }
    }
}
