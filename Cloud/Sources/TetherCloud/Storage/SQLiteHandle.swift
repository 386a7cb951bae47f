import CSQLite3

/// One SQLite connection (`sqlite3 *`) and its prepared statements, called synchronously on
/// whatever thread runs the caller.
///
/// Not safe for concurrent use: its owner lets one caller at a time in (``SQLiteEngine``'s lock,
/// or the checkpointer's one loop). The statements of the async drivers each went to a thread
/// pool and back, two thread switches per statement, and were prepared anew each time; here a
/// statement is prepared once, kept, and run where it is asked for.
final class SQLiteHandle: @unchecked Sendable {
    private var database: OpaquePointer?
    private var statements: [String: CachedStatement] = [:]

    /// How long a statement waits for another connection's lock before it fails as busy
    /// (0: it fails at once).
    var busyTimeoutMilliseconds: Int {
        didSet {
            guard let database, busyTimeoutMilliseconds != oldValue else { return }
            sqlite3_busy_timeout(database, Int32(busyTimeoutMilliseconds))
        }
    }

    /// A failed call: SQLite's extended result code and the storage error it means.
    struct Failure: Error {
        var status: Int32
        var error: StorageError

        /// Another connection held the lock for longer than the busy timeout.
        var isBusy: Bool { status & 0xFF == SQLITE_BUSY }
    }

    /// Statements kept prepared at most; past it the cache starts over.
    static let cachedStatementLimit = 256
    /// Statements with more binds than this are many-row batches whose text changes with their
    /// size: prepared each time, not kept.
    static let cachedBindLimit = 64

    private final class CachedStatement {
        let statement: OpaquePointer
        /// The column names, read again when SQLite has prepared the statement anew (a schema
        /// change can change them).
        var columns: SQLColumns?
        var preparedCount: Int32 = -1

        init(_ statement: OpaquePointer) { self.statement = statement }
    }

    /// Opens (creating it) the database at `path`: a file, `:memory:`, or a `file:` URI.
    init(path: String, busyTimeoutMilliseconds: Int) throws(StorageError) {
        self.busyTimeoutMilliseconds = busyTimeoutMilliseconds
        var handle: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX | SQLITE_OPEN_URI
        let status = sqlite3_open_v2(path, &handle, flags, nil)
        guard status == SQLITE_OK, let handle else {
            let message = handle.flatMap { sqlite3_errmsg($0) }.map { String(cString: $0) } ?? "SQLite error \(status)"
            sqlite3_close_v2(handle)
            throw StorageError(.connectionFailed, "cannot open SQLite database \(path): \(message)")
        }
        database = handle
        sqlite3_extended_result_codes(handle, 1)
        sqlite3_busy_timeout(handle, Int32(busyTimeoutMilliseconds))
    }

    deinit { close() }

    /// The largest number of binds one statement may have.
    var bindLimit: Int {
        guard let database else { return 0 }
        return Int(sqlite3_limit(database, SQLITE_LIMIT_VARIABLE_NUMBER, -1))
    }

    /// Whether a transaction is open on this connection.
    var inTransaction: Bool {
        guard let database else { return false }
        return sqlite3_get_autocommit(database) == 0
    }

    /// Whether `sql` only reads (SQLite's judgement of the prepared statement; transaction
    /// control counts as reading).
    func isReadOnly(_ sql: String) throws(Failure) -> Bool {
        let (statement, cached) = try prepare(sql, cacheable: true)
        defer { finish(statement, cached: cached) }
        return sqlite3_stmt_readonly(statement) != 0
    }

    /// Runs one statement with `$N` or `?N` placeholders and returns its rows.
    @discardableResult
    func execute(_ sql: String, _ binds: [SQLValue] = []) throws(Failure) -> [SQLRow] {
        guard let database else { throw Self.closed }
        if binds.count > bindLimit {
            throw Failure(
                status: SQLITE_TOOBIG, error: StorageError(.queryFailed, "\(binds.count) values for one statement, SQLite takes at most \(bindLimit)"))
        }
        let (statement, cached) = try prepare(sql, cacheable: binds.count <= Self.cachedBindLimit)
        defer { finish(statement, cached: cached) }
        for (offset, value) in binds.enumerated() {
            let status = Self.bind(value, at: Int32(offset + 1), to: statement)
            guard status == SQLITE_OK else { throw Self.error(status, database, sql) }
        }
        var rows: [SQLRow] = []
        var columns: SQLColumns?
        while true {
            let status = sqlite3_step(statement)
            if status == SQLITE_DONE { return rows }
            guard status == SQLITE_ROW else { throw Self.error(status, database, sql) }
            let names = columns ?? self.columns(of: statement, cached: cached)
            columns = names
            var cells: [SQLValue] = []
            cells.reserveCapacity(names.count)
            for index in 0..<Int32(names.count) {
                cells.append(Self.value(statement, index))
            }
            rows.append(SQLRow(columns: names, cells: cells))
        }
    }

    /// Finalizes every statement and closes the connection; later statements fail.
    func close() {
        for entry in statements.values { sqlite3_finalize(entry.statement) }
        statements = [:]
        if let database { sqlite3_close_v2(database) }
        database = nil
    }

    private func prepare(_ sql: String, cacheable: Bool) throws(Failure) -> (OpaquePointer, CachedStatement?) {
        guard let database else { throw Self.closed }
        if cacheable, let entry = statements[sql] { return (entry.statement, entry) }
        var statement: OpaquePointer?
        let text = SQLiteEngine.sqliteSQL(sql)
        let status = sqlite3_prepare_v3(database, text, -1, cacheable ? UInt32(SQLITE_PREPARE_PERSISTENT) : 0, &statement, nil)
        guard status == SQLITE_OK else { throw Self.error(status, database, sql) }
        guard let statement else {
            // Only a comment or white space: SQLite has nothing to run.
            throw Failure(status: SQLITE_MISUSE, error: StorageError(.queryFailed, "no statement in \(sql)"))
        }
        guard cacheable else { return (statement, nil) }
        if statements.count >= Self.cachedStatementLimit {
            for entry in statements.values { sqlite3_finalize(entry.statement) }
            statements = [:]
        }
        let entry = CachedStatement(statement)
        statements[sql] = entry
        return (statement, entry)
    }

    /// A kept statement is reset (which also ends its read of the database) and its values
    /// cleared; any other is finalized.
    private func finish(_ statement: OpaquePointer, cached: CachedStatement?) {
        if cached != nil {
            sqlite3_reset(statement)
            sqlite3_clear_bindings(statement)
        } else {
            sqlite3_finalize(statement)
        }
    }

    private func columns(of statement: OpaquePointer, cached: CachedStatement?) -> SQLColumns {
        let prepared = sqlite3_stmt_status(statement, SQLITE_STMTSTATUS_REPREPARE, 0)
        if let cached, let columns = cached.columns, cached.preparedCount == prepared { return columns }
        let count = sqlite3_column_count(statement)
        let columns = SQLColumns(names: (0..<count).map { String(cString: sqlite3_column_name(statement, $0)) })
        cached?.columns = columns
        cached?.preparedCount = prepared
        return columns
    }

    private static func bind(_ value: SQLValue, at index: Int32, to statement: OpaquePointer) -> Int32 {
        switch value {
        case .int(let value):
            return sqlite3_bind_int64(statement, index, value)
        case .double(let value):
            return sqlite3_bind_double(statement, index, value)
        case .text(var value):
            // An empty buffer may have no address, which SQLite would take for NULL.
            if value.isEmpty { return sqlite3_bind_text(statement, index, "", 0, transient) }
            return value.withUTF8 { bytes in
                bytes.withMemoryRebound(to: CChar.self) { characters in
                    sqlite3_bind_text(statement, index, characters.baseAddress, Int32(characters.count), transient)
                }
            }
        case .blob(let bytes):
            if bytes.isEmpty { return sqlite3_bind_zeroblob(statement, index, 0) }
            return bytes.withUnsafeBytes { raw in
                sqlite3_bind_blob(statement, index, raw.baseAddress, Int32(raw.count), transient)
            }
        case .null:
            return sqlite3_bind_null(statement, index)
        }
    }

    private static func value(_ statement: OpaquePointer, _ index: Int32) -> SQLValue {
        switch sqlite3_column_type(statement, index) {
        case SQLITE_INTEGER:
            return .int(sqlite3_column_int64(statement, index))
        case SQLITE_FLOAT:
            return .double(sqlite3_column_double(statement, index))
        case SQLITE_TEXT:
            guard let text = sqlite3_column_text(statement, index) else { return .text("") }
            let count = Int(sqlite3_column_bytes(statement, index))
            return .text(String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self))
        case SQLITE_BLOB:
            let count = Int(sqlite3_column_bytes(statement, index))
            guard count > 0, let bytes = sqlite3_column_blob(statement, index) else { return .blob([]) }
            return .blob(Array(UnsafeRawBufferPointer(start: bytes, count: count)))
        default:
            return .null
        }
    }

    private static func error(_ status: Int32, _ database: OpaquePointer, _ sql: String) -> Failure {
        let message = String(cString: sqlite3_errmsg(database))
        switch status {
        case uniqueViolation, primaryKeyViolation:
            return Failure(status: status, error: StorageError(.uniqueViolation, message))
        default:
            return Failure(status: status, error: StorageError(.queryFailed, "\(message) (SQLite \(status)) in \(sql.prefix(200))"))
        }
    }

    private static var closed: Failure {
        Failure(status: SQLITE_MISUSE, error: StorageError(.queryFailed, "the SQLite connection is closed"))
    }

    // Extended result codes, which C defines as expressions Swift does not import.
    private static let uniqueViolation = SQLITE_CONSTRAINT | (8 << 8)
    private static let primaryKeyViolation = SQLITE_CONSTRAINT | (6 << 8)

    /// SQLite copies the value before the bind returns.
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
}
