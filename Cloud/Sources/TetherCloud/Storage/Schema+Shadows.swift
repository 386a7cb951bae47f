extension Schema {
    /// Device shadows (Alink `/shadow/…`): one JSON document per device, with the version every
    /// write raises; a write is conditional on the document it read, so two nodes cannot both win.
    static func version6(_ dialect: SQLDialect) -> [String] {
        [
            """
            CREATE TABLE device_shadows (
                did TEXT PRIMARY KEY REFERENCES devices(did) ON DELETE CASCADE,
                version BIGINT NOT NULL, document TEXT NOT NULL, updated_ms BIGINT NOT NULL)
            """
        ]
    }
}
