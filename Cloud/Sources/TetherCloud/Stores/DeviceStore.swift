import TetherAlink
import TetherCore

/// The `devices` table: every statement that reads or writes a device, on a database or inside
/// one of its transactions. Presence (who holds a device's connection) is in
/// `DeviceStore+Presence.swift`.
struct DeviceStore: Sendable {
    let executor: any SQLExecutor

    init(_ executor: any SQLExecutor) { self.executor = executor }

    /// On PostgreSQL, `lockingForUpdate` holds the row until the transaction ends. (SQLite
    /// transactions already run one at a time.)
    func find(_ did: String, lockingForUpdate: Bool = false) async throws(StorageError) -> DeviceRecord? {
        let lock = lockingForUpdate && executor.dialect == .postgres ? " FOR UPDATE" : ""
        return try await executor.first("SELECT \(DeviceRecord.columns) FROM devices d WHERE d.did = $1\(lock)", .text(did))
            .map { row throws(StorageError) in try DeviceRecord(row: row) }
    }

    func did(productKey: String, mac: String) async throws(StorageError) -> String? {
        try await executor.first("SELECT did FROM devices WHERE product_key = $1 AND mac = $2", .text(productKey), .text(mac))?.text("did")
    }

    func credentials(productKey: String, mac: String) async throws(StorageError) -> DeviceCredentials? {
        try await credentials(where: "product_key = $1 AND mac = $2", .text(productKey), .text(mac))
    }

    /// An Alink device's names.
    func credentials(productKey: String, deviceName: String) async throws(StorageError) -> DeviceCredentials? {
        try await credentials(where: "product_key = $1 AND device_name = $2", .text(productKey), .text(deviceName))
    }

    func credentials(did: String) async throws(StorageError) -> DeviceCredentials? {
        try await credentials(where: "did = $1", .text(did))
    }

    /// Devices of one product by name, in one statement (the connect storm's lookups,
    /// coalesced by `DeviceCredentialLookups`); keyed by device name.
    func credentials(productKey: String, deviceNames: [String]) async throws(StorageError) -> [String: DeviceCredentials] {
        guard !deviceNames.isEmpty else { return [:] }
        let placeholders = (0..<deviceNames.count).map { "$\($0 + 2)" }.joined(separator: ", ")
        let found = try await credentials(where: "product_key = $1 AND device_name IN (\(placeholders))", [.text(productKey)] + deviceNames.map(SQLValue.text))
        return Dictionary(found.map { ($0.deviceName, $0) }, uniquingKeysWith: { first, _ in first })
    }

    private func credentials(where condition: String, _ binds: SQLValue...) async throws(StorageError) -> DeviceCredentials? {
        try await credentials(where: condition, binds).first
    }

    private func credentials(where condition: String, _ binds: [SQLValue]) async throws(StorageError) -> [DeviceCredentials] {
        try await executor.query(
            """
            SELECT did, product_key, device_name, passcode, device_secret, registered_ts, activated_ms, is_disabled, token_hash,
                (SELECT user_topics FROM products p WHERE p.product_key = devices.product_key) AS user_topics
            FROM devices WHERE \(condition)
            """,
            binds
        ).map { row throws(StorageError) in
            DeviceCredentials(
                did: try row.text("did"), productKey: try row.text("product_key"), deviceName: try row.text("device_name"),
                passcode: try row.text("passcode"), deviceSecret: try row.text("device_secret"), registeredAt: try row.int("registered_ts"),
                isActivated: try row.int("activated_ms") != 0, isDisabled: try row.bool("is_disabled"), tokenHash: try row.text("token_hash"),
                userTopics: try row.text("user_topics"))
        }
    }

    /// Throws a `uniqueViolation` when the product already has a device with this MAC or name.
    func insert(_ device: DeviceCredentials, mac: String?, at seconds: Int64) async throws(StorageError) {
        try await executor.query(
            """
            INSERT INTO devices (did, product_key, mac, passcode, device_name, device_secret, registered_ts, created_at, updated_at)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8)
            """,
            .text(device.did), .text(device.productKey), .optional(mac), .text(device.passcode), .text(device.deviceName),
            .text(device.deviceSecret), .int(device.registeredAt), .int(seconds)
        )
    }

    /// Rows per INSERT of a bulk registration: 8 values each, far below either engine's limit on
    /// parameters.
    static let batchRows = 500

    /// Many devices, in statements of ``batchRows`` rows (on a transaction: all or none).
    func insert(_ devices: [(credentials: DeviceCredentials, mac: String?)], at seconds: Int64) async throws(StorageError) {
        var start = 0
        while start < devices.count {
            let chunk = devices[start..<min(start + Self.batchRows, devices.count)]
            var values: [String] = []
            var binds: [SQLValue] = []
            values.reserveCapacity(chunk.count)
            binds.reserveCapacity(chunk.count * 8)
            for (credentials, mac) in chunk {
                let base = binds.count
                values.append("(" + (1...8).map { "$\(base + $0)" }.joined(separator: ", ") + ", $\(base + 8))")
                binds += [
                    .text(credentials.did), .text(credentials.productKey), .optional(mac), .text(credentials.passcode), .text(credentials.deviceName),
                    .text(credentials.deviceSecret), .int(credentials.registeredAt), .int(seconds),
                ]
            }
            _ = try await executor.query(
                "INSERT INTO devices (did, product_key, mac, passcode, device_name, device_secret, registered_ts, created_at, updated_at) VALUES "
                    + values.joined(separator: ", "), binds)
            start += Self.batchRows
        }
    }

    /// Which of `names` and `macs` the product already has.
    func existing(productKey: String, names: [String], macs: [String]) async throws(StorageError) -> [String] {
        var taken: [String] = []
        for (column, values) in [("device_name", names), ("mac", macs)] where !values.isEmpty {
            var start = 0
            while start < values.count {
                let chunk = Array(values[start..<min(start + Self.batchRows, values.count)])
                let placeholders = (0..<chunk.count).map { "$\($0 + 2)" }.joined(separator: ", ")
                let rows = try await executor.query(
                    "SELECT \(column) AS value FROM devices WHERE product_key = $1 AND \(column) IN (\(placeholders))",
                    [.text(productKey)] + chunk.map(SQLValue.text))
                for row in rows { taken.append(try row.text("value")) }
                start += Self.batchRows
            }
        }
        return taken
    }

    /// The token a whitelist-free device reconnects with (its SHA-256), replacing any before.
    func setToken(did: String, tokenHash: String, at seconds: Int64) async throws(StorageError) {
        try await executor.query("UPDATE devices SET token_hash = $2, updated_at = $3 WHERE did = $1", .text(did), .text(tokenHash), .int(seconds))
    }

    /// A signed registration's new passcode, only if it is newer than the last one: of two
    /// racing, the newer wins, and one sent again changes nothing. False when it was not newer.
    func updatePasscode(did: String, passcode: String, registeredAt: Int64, at seconds: Int64) async throws(StorageError) -> Bool {
        try await executor.first(
            "UPDATE devices SET passcode = $2, registered_ts = $3, updated_at = $4 WHERE did = $1 AND registered_ts < $3 RETURNING did",
            .text(did), .text(passcode), .int(registeredAt), .int(seconds)
        ) != nil
    }
}

/// What proves a device is itself: its names and secrets. Never logged (its description hides
/// the secret and the passcode).
struct DeviceCredentials: Sendable, CustomStringConvertible {
    var did: String
    var productKey: String
    var deviceName: String
    var passcode: String
    var deviceSecret: String
    /// The signed registration's timestamp (Unix seconds; 0: never signed).
    var registeredAt: Int64
    /// Connected to the gateway at least once.
    var isActivated: Bool
    var isDisabled: Bool
    /// The SHA-256 of the token a whitelist-free device reconnects with; empty for others.
    var tokenHash = ""
    /// The product's topic classes (``AlinkTopicClasses/encoded``), read with the device.
    var userTopics = AlinkTopicClasses.standard.encoded

    /// A new device of `productKey` named `deviceName`, with fresh identifiers and secrets.
    static func new(productKey: String, deviceName: String) -> DeviceCredentials {
        DeviceCredentials(
            did: Secrets.did(), productKey: productKey, deviceName: deviceName, passcode: Secrets.passcode(), deviceSecret: Secrets.hex(bytes: 16),
            registeredAt: 0, isActivated: false, isDisabled: false)
    }

    var description: String { "device \(did) (\(productKey)/\(deviceName))" }
}
