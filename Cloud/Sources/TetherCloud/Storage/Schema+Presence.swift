extension Schema {
    /// A device's row names the connection it describes by that connection's start, so that a
    /// connection's end changes the row only while it still describes that connection (a later
    /// connection on another node wins whatever order the two nodes write in).
    static func version20(_ dialect: SQLDialect) -> [String] {
        ["ALTER TABLE devices RENAME COLUMN online_changed_ms TO connection_started_ms"]
    }
}
