extension Schema {
    /// Whitelist-free registration (Alink `authType=regnwl`): products that let any unit holding
    /// the product secret create its device on first connection, and the token such a device
    /// reconnects with (`securemode=-2`), stored as its SHA-256.
    static func version5(_ dialect: SQLDialect) -> [String] {
        [
            "ALTER TABLE products ADD COLUMN whitelist_free_registration BIGINT NOT NULL DEFAULT 0",
            "ALTER TABLE devices ADD COLUMN token_hash TEXT NOT NULL DEFAULT ''",
        ]
    }
}
