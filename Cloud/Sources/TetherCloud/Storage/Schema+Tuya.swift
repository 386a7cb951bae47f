extension Schema {
    /// Tuya local keys (Tether extension): for a device registered here that speaks the Tuya local
    /// protocol on the LAN, its Tuya id, protocol version and 16-byte local key, which the device's
    /// owner's app fetches to control it on the LAN.
    static func version14(_ dialect: SQLDialect) -> [String] {
        [
            """
            CREATE TABLE tuya_local_keys (
                did TEXT PRIMARY KEY REFERENCES devices(did) ON DELETE CASCADE, tuya_id TEXT NOT NULL, local_key TEXT NOT NULL,
                version TEXT NOT NULL, updated_at BIGINT NOT NULL)
            """
        ]
    }
}
