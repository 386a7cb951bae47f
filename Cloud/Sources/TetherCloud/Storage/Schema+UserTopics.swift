extension Schema {
    /// Products' custom topic classes (Alink `/{pk}/{dn}/user/…`), as `PATH:OPERATION` joined by
    /// commas; existing products get Aliyun's defaults.
    static func version7(_ dialect: SQLDialect) -> [String] {
        ["ALTER TABLE products ADD COLUMN user_topics TEXT NOT NULL DEFAULT 'update:pub,update/error:pub,get:sub'"]
    }
}
