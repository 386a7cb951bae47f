extension Schema {
    /// Groups of devices (reference §2.6), each a user's own. A member device needs its group's
    /// user bound to it: it leaves the group with the binding (revoked, expired, unbound).
    static func version17(_ dialect: SQLDialect) -> [String] {
        [
            """
            CREATE TABLE device_groups (
                id TEXT PRIMARY KEY, uid TEXT NOT NULL REFERENCES users(uid) ON DELETE CASCADE, name TEXT NOT NULL,
                product_key TEXT NOT NULL DEFAULT '', created_at BIGINT NOT NULL, updated_at BIGINT NOT NULL)
            """,
            "CREATE INDEX device_groups_owner ON device_groups (uid)",
            """
            CREATE TABLE device_group_members (
                group_id TEXT NOT NULL REFERENCES device_groups(id) ON DELETE CASCADE, uid TEXT NOT NULL, did TEXT NOT NULL,
                added_at BIGINT NOT NULL, PRIMARY KEY (group_id, did),
                FOREIGN KEY (uid, did) REFERENCES bindings (uid, did) ON DELETE CASCADE)
            """,
            "CREATE INDEX device_group_members_binding ON device_group_members (uid, did)",
        ]
    }
}
