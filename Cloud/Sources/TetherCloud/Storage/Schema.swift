/// The tables. Types are the four that both engines share (see ``SQLValue``); times are Unix
/// seconds in `BIGINT`.
enum Schema {
    static func version1(_ dialect: SQLDialect) -> [String] {
        let serial = dialect == .postgres ? "BIGSERIAL PRIMARY KEY" : "INTEGER PRIMARY KEY AUTOINCREMENT"
        return [
            """
            CREATE TABLE apps (
                app_id TEXT PRIMARY KEY, name TEXT NOT NULL, secret TEXT NOT NULL,
                jwks_url TEXT, jwt_issuer TEXT, jwt_audience TEXT,
                created_at BIGINT NOT NULL)
            """,
            """
            CREATE TABLE products (
                product_key TEXT PRIMARY KEY, name TEXT NOT NULL, secret TEXT NOT NULL,
                model_format TEXT NOT NULL, model_json TEXT NOT NULL, sharing_enabled BIGINT NOT NULL DEFAULT 0,
                created_at BIGINT NOT NULL)
            """,
            """
            CREATE TABLE users (
                uid TEXT PRIMARY KEY, app_id TEXT NOT NULL REFERENCES apps(app_id),
                username TEXT, phone TEXT, email TEXT, phone_id TEXT,
                third_party_src TEXT, third_party_uid TEXT,
                password_hash TEXT, is_anonymous BIGINT NOT NULL DEFAULT 0,
                email_confirmed BIGINT NOT NULL DEFAULT 0,
                name TEXT NOT NULL DEFAULT '', gender TEXT NOT NULL DEFAULT 'N',
                birthday TEXT NOT NULL DEFAULT '', address TEXT NOT NULL DEFAULT '',
                lang TEXT NOT NULL DEFAULT 'en', remark TEXT NOT NULL DEFAULT '',
                failed_logins BIGINT NOT NULL DEFAULT 0, locked_until BIGINT NOT NULL DEFAULT 0,
                created_at BIGINT NOT NULL, updated_at BIGINT NOT NULL)
            """,
            "CREATE UNIQUE INDEX users_username ON users (app_id, username)",
            "CREATE UNIQUE INDEX users_phone ON users (app_id, phone)",
            "CREATE UNIQUE INDEX users_email ON users (app_id, email)",
            "CREATE UNIQUE INDEX users_phone_id ON users (app_id, phone_id)",
            "CREATE UNIQUE INDEX users_third_party ON users (app_id, third_party_src, third_party_uid)",
            """
            CREATE TABLE user_tokens (
                token_hash TEXT PRIMARY KEY, uid TEXT NOT NULL REFERENCES users(uid) ON DELETE CASCADE,
                app_id TEXT NOT NULL, expires_at BIGINT NOT NULL, created_at BIGINT NOT NULL)
            """,
            "CREATE INDEX user_tokens_uid ON user_tokens (uid)",
            """
            CREATE TABLE app_tokens (
                token_hash TEXT PRIMARY KEY, app_id TEXT NOT NULL REFERENCES apps(app_id),
                expires_at BIGINT NOT NULL)
            """,
            """
            CREATE TABLE verification_codes (
                id \(serial), app_id TEXT NOT NULL, phone TEXT NOT NULL, code_hash TEXT NOT NULL,
                expires_at BIGINT NOT NULL, used BIGINT NOT NULL DEFAULT 0, attempts BIGINT NOT NULL DEFAULT 0,
                created_at BIGINT NOT NULL)
            """,
            "CREATE INDEX verification_codes_phone ON verification_codes (app_id, phone, created_at)",
            """
            CREATE TABLE email_links (
                token_hash TEXT PRIMARY KEY, uid TEXT NOT NULL REFERENCES users(uid) ON DELETE CASCADE,
                purpose TEXT NOT NULL, expires_at BIGINT NOT NULL, used BIGINT NOT NULL DEFAULT 0)
            """,
            """
            CREATE TABLE outbox (
                id \(serial), channel TEXT NOT NULL, recipient TEXT NOT NULL,
                subject TEXT NOT NULL, body TEXT NOT NULL, created_at BIGINT NOT NULL)
            """,
            """
            CREATE TABLE devices (
                did TEXT PRIMARY KEY, product_key TEXT NOT NULL REFERENCES products(product_key),
                mac TEXT, passcode TEXT NOT NULL, device_name TEXT NOT NULL, device_secret TEXT NOT NULL,
                type TEXT NOT NULL DEFAULT 'normal', is_disabled BIGINT NOT NULL DEFAULT 0,
                is_online BIGINT NOT NULL DEFAULT 0,
                wifi_soft_version TEXT NOT NULL DEFAULT '', mcu_soft_version TEXT NOT NULL DEFAULT '',
                mcu_hard_version TEXT NOT NULL DEFAULT '', protocol_version TEXT NOT NULL DEFAULT '04',
                created_at BIGINT NOT NULL, updated_at BIGINT NOT NULL)
            """,
            "CREATE UNIQUE INDEX devices_mac ON devices (product_key, mac)",
            "CREATE UNIQUE INDEX devices_name ON devices (product_key, device_name)",
            """
            CREATE TABLE bindings (
                id \(serial),
                uid TEXT NOT NULL REFERENCES users(uid) ON DELETE CASCADE,
                did TEXT NOT NULL REFERENCES devices(did) ON DELETE CASCADE,
                role TEXT NOT NULL, remark TEXT NOT NULL DEFAULT '', dev_alias TEXT NOT NULL DEFAULT '',
                dev_label TEXT NOT NULL DEFAULT '[]', created_at BIGINT NOT NULL,
                UNIQUE (uid, did))
            """,
            "CREATE INDEX bindings_did ON bindings (did)",
        ]
    }
}
