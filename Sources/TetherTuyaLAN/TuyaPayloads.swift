public import TetherCore

/// What apps send (§6), as the command and the JSON payload for a version. Keys are written in
/// the order tinytuya writes them, so frames match the reference's vectors byte for byte.
public enum TuyaRequest {
    /// Sets data points: `CONTROL` with `{devId, uid, t, dps}` up to 3.3; `CONTROL_NEW` with
    /// `{protocol: 5, t, data: {dps}}` on 3.4/3.5. `dps` keys are decimal DP ids.
    public static func control(_ dps: JSONObject, deviceID: String, version: TuyaVersion, time: Int64) -> (TuyaCommand, [UInt8]) {
        if version.usesNewCommands {
            return (.controlNew, JSONValue.object(["protocol": .int(5), "t": .int(time), "data": .object(["dps": .object(dps)])]).serializedBytes())
        }
        let object: JSONObject = ["devId": .string(deviceID), "uid": .string(deviceID), "t": .string(String(time)), "dps": .object(dps)]
        return (.control, JSONValue.object(object).serializedBytes())
    }

    /// Reads every data point: `DP_QUERY` up to 3.3, `DP_QUERY_NEW` with `{}` on 3.4/3.5.
    public static func query(deviceID: String, version: TuyaVersion, time: Int64) -> (TuyaCommand, [UInt8]) {
        if version.usesNewCommands { return (.queryNew, Array("{}".utf8)) }
        let object: JSONObject = ["gwId": .string(deviceID), "devId": .string(deviceID), "uid": .string(deviceID), "t": .string(String(time))]
        return (.query, JSONValue.object(object).serializedBytes())
    }

    /// device22's status read: `CONTROL_NEW` naming each data point with a null value.
    public static func device22Query(_ ids: [String], deviceID: String, time: Int64) -> (TuyaCommand, [UInt8]) {
        var dps = JSONObject()
        for id in ids { dps[id] = .null }
        let object: JSONObject = ["devId": .string(deviceID), "uid": .string(deviceID), "t": .string(String(time)), "dps": .object(dps)]
        return (.controlNew, JSONValue.object(object).serializedBytes())
    }

    public static func heartbeat(deviceID: String) -> (TuyaCommand, [UInt8]) {
        (.heartbeat, JSONValue.object(["gwId": .string(deviceID), "devId": .string(deviceID)]).serializedBytes())
    }

    /// Asks the device to report `ids` again.
    public static func updateDPS(_ ids: [Int]) -> (TuyaCommand, [UInt8]) {
        (.updateDPS, JSONValue.object(["dpId": .array(ids.map { .int(Int64($0)) })]).serializedBytes())
    }
}

/// Data points a device reported (an answer or a push), in either shape (§6):
/// `{"devId", "dps", "t"}` or `{"protocol", "t", "data": {"dps"}}`.
public struct TuyaStatus: Hashable, Sendable {
    public static let device22Refusal = "json obj data unvalid"

    public var dps: JSONObject
    public var time: Int64?

    public init(dps: JSONObject, time: Int64? = nil) {
        self.dps = dps
        self.time = time
    }

    public init(parsing payload: [UInt8]) throws(TetherError) {
        if String(decoding: payload, as: UTF8.self).contains(Self.device22Refusal) {
            throw TetherError(.unexpectedResponse, "the device refused the status query (\(Self.device22Refusal)): a device22")
        }
        let document = try JSONValue.parse(payload)
        guard let dps = (document["dps"] ?? document["data"]?["dps"])?.objectValue else {
            throw TetherError(.malformedPayload, "a Tuya status without dps")
        }
        let time: Int64? =
            switch document["t"] {
            case .int(let value)?: value
            case .string(let text)?: Int64(text)
            default: nil
            }
        self.init(dps: dps, time: time)
    }

    /// What a device sends: the 3.1–3.3 shape, or the 3.4+ shape.
    public func payload(deviceID: String, version: TuyaVersion) -> [UInt8] {
        if version.usesNewCommands {
            return JSONValue.object(["protocol": .int(4), "t": .int(time ?? 0), "data": .object(["dps": .object(dps)])]).serializedBytes()
        }
        return JSONValue.object(["devId": .string(deviceID), "dps": .object(dps), "t": .int(time ?? 0)]).serializedBytes()
    }
}
