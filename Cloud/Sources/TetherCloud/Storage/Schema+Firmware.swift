extension Schema {
    /// OTA firmware packages: each stored in chunks in the database, so that every node sharing
    /// it can serve any range of any package; and the deployment's settings (the key that
    /// signs download URLs, made once and shared by every node).
    static func version8(_ dialect: SQLDialect) -> [String] {
        let serial = dialect == .postgres ? "BIGSERIAL PRIMARY KEY" : "INTEGER PRIMARY KEY AUTOINCREMENT"
        let blob = dialect == .postgres ? "BYTEA" : "BLOB"
        return [
            """
            CREATE TABLE firmware (
                id \(serial), product_key TEXT NOT NULL REFERENCES products(product_key) ON DELETE CASCADE,
                module TEXT NOT NULL, version TEXT NOT NULL, size BIGINT NOT NULL, chunk_size BIGINT NOT NULL,
                sha256 TEXT NOT NULL, md5 TEXT NOT NULL, created_at BIGINT NOT NULL, UNIQUE (product_key, module, version))
            """,
            """
            CREATE TABLE firmware_chunks (
                firmware_id BIGINT NOT NULL REFERENCES firmware(id) ON DELETE CASCADE, chunk_index BIGINT NOT NULL,
                data \(blob) NOT NULL, PRIMARY KEY (firmware_id, chunk_index))
            """,
            "CREATE TABLE settings (name TEXT PRIMARY KEY, value TEXT NOT NULL)",
        ]
    }
}
