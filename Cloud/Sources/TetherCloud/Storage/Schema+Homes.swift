extension Schema {
    /// Homes (Tether extension): a name and an optional location, rooms, members with roles
    /// (owner, admin, member), invitations to join, and the devices placed in each. A member's
    /// access to a home's devices is a binding marked with the home (`bindings.home_id`), so that
    /// every path that checks bindings checks membership too, and ending it is a revocation.
    static func version13(_ dialect: SQLDialect) -> [String] {
        let serial = dialect == .postgres ? "BIGSERIAL PRIMARY KEY" : "INTEGER PRIMARY KEY AUTOINCREMENT"
        let real = dialect == .postgres ? "DOUBLE PRECISION" : "REAL"
        return [
            """
            CREATE TABLE homes (
                id \(serial), name TEXT NOT NULL, geo_name TEXT NOT NULL DEFAULT '', latitude \(real), longitude \(real),
                created_at BIGINT NOT NULL, updated_at BIGINT NOT NULL)
            """,
            """
            CREATE TABLE home_members (
                home_id BIGINT NOT NULL REFERENCES homes(id) ON DELETE CASCADE, uid TEXT NOT NULL REFERENCES users(uid) ON DELETE CASCADE,
                role TEXT NOT NULL, joined_at BIGINT NOT NULL, PRIMARY KEY (home_id, uid))
            """,
            "CREATE INDEX home_members_uid ON home_members (uid)",
            """
            CREATE TABLE rooms (
                id \(serial), home_id BIGINT NOT NULL REFERENCES homes(id) ON DELETE CASCADE, name TEXT NOT NULL, created_at BIGINT NOT NULL)
            """,
            "CREATE INDEX rooms_home ON rooms (home_id)",
            """
            CREATE TABLE home_devices (
                did TEXT PRIMARY KEY REFERENCES devices(did) ON DELETE CASCADE, home_id BIGINT NOT NULL REFERENCES homes(id) ON DELETE CASCADE,
                room_id BIGINT REFERENCES rooms(id) ON DELETE SET NULL, placed_by TEXT NOT NULL, placed_at BIGINT NOT NULL)
            """,
            "CREATE INDEX home_devices_home ON home_devices (home_id)",
            """
            CREATE TABLE home_invitations (
                id \(serial), home_id BIGINT NOT NULL REFERENCES homes(id) ON DELETE CASCADE, inviter_uid TEXT NOT NULL, invitee_uid TEXT NOT NULL,
                role TEXT NOT NULL, status BIGINT NOT NULL, created_at BIGINT NOT NULL, updated_at BIGINT NOT NULL, expired_at BIGINT NOT NULL)
            """,
            "CREATE INDEX home_invitations_invitee ON home_invitations (invitee_uid, id)",
            "CREATE INDEX home_invitations_home ON home_invitations (home_id, id)",
            // The home whose membership gave this binding; NULL for the user's own bindings. The
            // service ends these bindings itself (telling sessions); the cascade is the backstop.
            "ALTER TABLE bindings ADD COLUMN home_id BIGINT REFERENCES homes(id) ON DELETE CASCADE",
            "CREATE INDEX bindings_home ON bindings (home_id)",
        ]
    }
}
