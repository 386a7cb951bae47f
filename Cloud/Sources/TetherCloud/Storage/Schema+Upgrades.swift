extension Schema {
    /// OTA upgrades: the firmware version each module of a device reports, jobs that offer a
    /// package to many devices, and the command ledger's entries tied to their job (an upgrade
    /// is a command of kind `ota`, so that its progress and result live where every command's do).
    static func version9(_ dialect: SQLDialect) -> [String] {
        let serial = dialect == .postgres ? "BIGSERIAL PRIMARY KEY" : "INTEGER PRIMARY KEY AUTOINCREMENT"
        return [
            """
            CREATE TABLE device_firmware (
                did TEXT NOT NULL REFERENCES devices(did) ON DELETE CASCADE, module TEXT NOT NULL,
                version TEXT NOT NULL, updated_ms BIGINT NOT NULL, PRIMARY KEY (did, module))
            """,
            """
            CREATE TABLE upgrade_jobs (
                id \(serial), firmware_id BIGINT NOT NULL REFERENCES firmware(id) ON DELETE CASCADE,
                product_key TEXT NOT NULL, created_ms BIGINT NOT NULL, deadline_ms BIGINT NOT NULL)
            """,
            "ALTER TABLE commands ADD COLUMN job_id BIGINT",
            "CREATE INDEX commands_job ON commands (job_id, state)",
        ]
    }
}
