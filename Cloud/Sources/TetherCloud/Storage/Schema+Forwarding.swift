extension Schema {
    /// Data forwarding (server-side subscribers of a product): the HTTP endpoints a product's
    /// device messages are pushed to, and the outbox that holds each message until its endpoint
    /// took it (leased by one node at a time, retried with backoff, given up on after a while).
    static func version11(_ dialect: SQLDialect) -> [String] {
        let serial = dialect == .postgres ? "BIGSERIAL PRIMARY KEY" : "INTEGER PRIMARY KEY AUTOINCREMENT"
        return [
            """
            CREATE TABLE forwarders (
                id \(serial), product_key TEXT NOT NULL REFERENCES products(product_key) ON DELETE CASCADE,
                url TEXT NOT NULL, secret TEXT NOT NULL, kinds TEXT NOT NULL, created_ms BIGINT NOT NULL)
            """,
            """
            CREATE TABLE forward_outbox (
                id \(serial), forwarder_id BIGINT NOT NULL REFERENCES forwarders(id) ON DELETE CASCADE,
                body TEXT NOT NULL, attempts BIGINT NOT NULL DEFAULT 0, next_attempt_ms BIGINT NOT NULL,
                lease_until_ms BIGINT NOT NULL DEFAULT 0, delivered_ms BIGINT, failed_ms BIGINT,
                last_error TEXT NOT NULL DEFAULT '', created_ms BIGINT NOT NULL)
            """,
            "CREATE INDEX forward_outbox_due ON forward_outbox (next_attempt_ms) WHERE delivered_ms IS NULL AND failed_ms IS NULL",
        ]
    }
}
