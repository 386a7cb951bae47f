public import TetherCore

/// `GET /app/devices/{did}/tuya_local_key`'s answer (Tether extension): what the device's owner
/// needs to control it on the LAN with the Tuya local protocol. The key is a secret that cannot
/// be revoked (it changes only when the device is paired again): its description leaves it out.
public struct TuyaLocalKeyBody: Sendable, Hashable, CustomStringConvertible {
    /// The device's Tuya id (`gwId`).
    public var tuyaID: String
    /// The 16-character local key.
    public var localKey: String
    /// `3.1` … `3.5`.
    public var version: String

    public init(tuyaID: String, localKey: String, version: String) {
        self.tuyaID = tuyaID
        self.localKey = localKey
        self.version = version
    }

    public init(json: JSONValue) throws(CloudBodyError) {
        let reader = try BodyReader(json)
        self.init(tuyaID: try reader.string("tuya_id"), localKey: try reader.string("local_key"), version: try reader.string("version"))
    }

    public var json: JSONValue { ["tuya_id": .string(tuyaID), "local_key": .string(localKey), "version": .string(version)] }

    public var description: String { "TuyaLocalKeyBody(tuyaID: \(tuyaID), localKey: <redacted>, version: \(version))" }
}
