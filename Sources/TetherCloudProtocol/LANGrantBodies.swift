public import TetherCore

/// `POST /app/devices/{did}/lan_grant`'s answer (Tether extension): a grant the device checks
/// offline when the app logs in on the LAN (`TetherGizwitsLAN.LANGrant`), for the user who asked.
public struct LANGrantBody: Sendable, Hashable {
    /// The grant's text, presented in the GAgent login. A secret: whoever holds it may log in
    /// until it expires.
    public var grant: String
    /// Which of the cloud's keys signed it.
    public var keyID: String
    /// Unix seconds.
    public var expiresAt: Int64

    public init(grant: String, keyID: String, expiresAt: Int64) {
        self.grant = grant
        self.keyID = keyID
        self.expiresAt = expiresAt
    }

    public init(json: JSONValue) throws(CloudBodyError) {
        let reader = try BodyReader(json)
        self.init(grant: try reader.string("grant"), keyID: try reader.string("key_id"), expiresAt: try reader.int("expires_at"))
    }

    public var json: JSONValue { ["grant": .string(grant), "key_id": .string(keyID), "expires_at": .int(expiresAt)] }
}
