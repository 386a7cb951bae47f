/// A value bound to, or read from, a SQL statement.
///
/// The cloud's schema uses only these four column kinds so that the same statements run on
/// SQLite and PostgreSQL: `BIGINT` (integers, booleans as 0/1, Unix times), `TEXT`,
/// `DOUBLE PRECISION`/`REAL` and `BYTEA`/`BLOB`.
public enum SQLValue: Sendable, Hashable {
    case int(Int64)
    case double(Double)
    case text(String)
    case blob([UInt8])
    case null

    public static func optional(_ text: String?) -> SQLValue {
        text.map(SQLValue.text) ?? .null
    }

    public static func bool(_ value: Bool) -> SQLValue { .int(value ? 1 : 0) }
}

extension SQLValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral {
    public init(stringLiteral value: String) { self = .text(value) }
    public init(integerLiteral value: Int64) { self = .int(value) }
}

/// The column names of a statement's result, shared by its rows.
final class SQLColumns: Sendable {
    let names: [String]
    /// Where each name is; a name given twice means its last column.
    private let positions: [String: Int]

    init(names: [String]) {
        self.names = names
        var positions: [String: Int] = [:]
        for (position, name) in names.enumerated() { positions[name] = position }
        self.positions = positions
    }

    var count: Int { names.count }

    func position(of name: String) -> Int? { positions[name] }
}

/// One result row, by column name.
public struct SQLRow: Sendable {
    private let columns: SQLColumns
    private let cells: [SQLValue]

    init(columns: SQLColumns, cells: [SQLValue]) {
        self.columns = columns
        self.cells = cells
    }

    public init(values: [String: SQLValue]) {
        let names = Array(values.keys)
        self.init(columns: SQLColumns(names: names), cells: names.map { values[$0]! })
    }

    /// The row as a dictionary, by column name.
    public var values: [String: SQLValue] {
        var values: [String: SQLValue] = [:]
        for (name, cell) in zip(columns.names, cells) { values[name] = cell }
        return values
    }

    public subscript(column: String) -> SQLValue {
        guard let position = columns.position(of: column) else { return .null }
        return cells[position]
    }

    public func text(_ column: String) throws(StorageError) -> String {
        guard let value = optionalText(column) else { throw .unexpectedValue(column: column) }
        return value
    }

    public func optionalText(_ column: String) -> String? {
        if case .text(let value) = self[column] { return value }
        return nil
    }

    public func int(_ column: String) throws(StorageError) -> Int64 {
        switch self[column] {
        case .int(let value): return value
        case .double(let value) where value.rounded() == value: return Int64(value)
        default: throw .unexpectedValue(column: column)
        }
    }

    public func optionalInt(_ column: String) -> Int64? { try? int(column) }

    /// A number column (`REAL`/`DOUBLE PRECISION`); nil when NULL.
    public func optionalDouble(_ column: String) -> Double? {
        switch self[column] {
        case .double(let value): value
        case .int(let value): Double(value)
        default: nil
        }
    }

    public func bool(_ column: String) throws(StorageError) -> Bool { try int(column) != 0 }

    public func blob(_ column: String) throws(StorageError) -> [UInt8] {
        guard case .blob(let bytes) = self[column] else { throw .unexpectedValue(column: column) }
        return bytes
    }
}
