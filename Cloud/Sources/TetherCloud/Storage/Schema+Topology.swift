extension Schema {
    /// Gateways and their sub-devices (Alink `thing/topo/…`): each sub-device belongs to at most
    /// one gateway, the last that proved it holds the sub-device's secret.
    static func version10(_ dialect: SQLDialect) -> [String] {
        [
            """
            CREATE TABLE device_topology (
                sub_did TEXT PRIMARY KEY REFERENCES devices(did) ON DELETE CASCADE,
                gateway_did TEXT NOT NULL REFERENCES devices(did) ON DELETE CASCADE, created_ms BIGINT NOT NULL)
            """,
            "CREATE INDEX device_topology_gateway ON device_topology (gateway_did)",
        ]
    }
}
