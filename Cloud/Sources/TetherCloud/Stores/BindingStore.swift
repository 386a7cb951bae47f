import TetherCore

/// The `bindings` table: which users are bound to which devices, with their roles and names
/// for them. On a database or inside one of its transactions.
struct BindingStore: Sendable {
    let executor: any SQLExecutor

    init(_ executor: any SQLExecutor) { self.executor = executor }

    /// The devices `uid` is bound to, by did.
    func dids(boundBy uid: String) async throws(StorageError) -> [String] {
        try await executor.query("SELECT did FROM bindings WHERE uid = $1 ORDER BY did", .text(uid))
            .map { row throws(StorageError) in try row.text("did") }
    }

    func isBound(_ uid: String, did: String) async throws(StorageError) -> Bool {
        try await executor.first("SELECT 1 AS bound FROM bindings WHERE uid = $1 AND did = $2", .text(uid), .text(did)) != nil
    }

    /// The users bound to `did` who asked for messages about `what` (`alert`, `error`, `offline`).
    func notified(of did: String, about what: String) async throws(StorageError) -> [String] {
        var users: [String] = []
        for row in try await executor.query("SELECT uid, notify FROM bindings WHERE did = $1 AND notify <> ''", .text(did)) {
            if try row.text("notify").split(separator: ",").contains(Substring(what)) { users.append(try row.text("uid")) }
        }
        return users
    }

    /// What `uid` wants in the message centre about `did`.
    func setNotify(_ uid: String, did: String, _ kinds: [String]) async throws(StorageError) -> Bool {
        try await executor.first(
            "UPDATE bindings SET notify = $3 WHERE uid = $1 AND did = $2 RETURNING uid", .text(uid), .text(did), .text(kinds.sorted().joined(separator: ",")))
            != nil
    }

    /// The guests of `did` and when each was bound (Unix seconds), oldest first.
    /// The guests `did` was shared with (a home's members reach it through the home instead).
    func guests(of did: String) async throws(StorageError) -> [(uid: String, boundAt: Int64)] {
        try await executor.query("SELECT uid, created_at FROM bindings WHERE did = $1 AND role = 'guest' AND home_id IS NULL ORDER BY id", .text(did)).map {
            row throws(StorageError) in (try row.text("uid"), try row.int("created_at"))
        }
    }

    /// Everyone bound to `did`, oldest binding first.
    func roles(of did: String) async throws(StorageError) -> [(uid: String, role: BindingRole)] {
        try await executor.query("SELECT uid, role FROM bindings WHERE did = $1 ORDER BY id", .text(did)).map { row throws(StorageError) in
            (try row.text("uid"), BindingRole(rawValue: try row.text("role")) ?? .normal)
        }
    }

    func insert(_ uid: String, did: String, role: BindingRole, remark: String?, alias: String?, at seconds: Int64) async throws(StorageError) {
        try await executor.query(
            "INSERT INTO bindings (uid, did, role, remark, dev_alias, created_at) VALUES ($1, $2, $3, $4, $5, $6)",
            .text(uid), .text(did), .text(role.rawValue), .text(remark ?? ""), .text(alias ?? ""), .int(seconds)
        )
    }

    /// The first share of a product with sharing: `uid` becomes the owner, the other special and
    /// normal users its guests.
    func makeOwnerOnFirstShare(_ uid: String, did: String) async throws(StorageError) {
        try await executor.query(
            "UPDATE bindings SET role = CASE WHEN uid = $2 THEN 'owner' ELSE 'guest' END WHERE did = $1 AND role IN ('special', 'normal')",
            .text(did), .text(uid))
    }

    /// A guest becomes the owner (a transfer): a binding of its own, for good.
    func makeOwner(_ uid: String, did: String) async throws(StorageError) {
        try await executor.query(
            "UPDATE bindings SET role = 'owner', expires_at = NULL, home_id = NULL WHERE did = $1 AND uid = $2", .text(did), .text(uid))
    }

    /// Ends `uid`'s guest binding to `did` by a share (not one a home gave); whether there was one.
    @discardableResult
    func deleteShared(_ uid: String, did: String) async throws(StorageError) -> Bool {
        try await executor.first(
            "DELETE FROM bindings WHERE uid = $1 AND did = $2 AND role = 'guest' AND home_id IS NULL RETURNING uid", .text(uid), .text(did)) != nil
    }

    /// Whether `uid` owns `did` by a binding of its own (owner, or special user of a product
    /// without sharing).
    func ownsDirectly(_ uid: String, did: String) async throws(StorageError) -> Bool {
        try await executor.first(
            "SELECT role FROM bindings WHERE uid = $1 AND did = $2 AND home_id IS NULL AND role IN ('owner', 'special')", .text(uid), .text(did)) != nil
    }

    /// Ends one binding; the role it had, nil when there was none.
    func delete(_ uid: String, did: String) async throws(StorageError) -> BindingRole? {
        try await executor.first("DELETE FROM bindings WHERE uid = $1 AND did = $2 RETURNING role", .text(uid), .text(did))
            .map { row throws(StorageError) in BindingRole(rawValue: try row.text("role")) ?? .normal }
    }

    /// Ends every binding of `did`; the users whose binding ended.
    func deleteAll(did: String) async throws(StorageError) -> [String] {
        try await executor.query("DELETE FROM bindings WHERE did = $1 RETURNING uid", .text(did))
            .map { row throws(StorageError) in try row.text("uid") }
    }

    /// The longest-bound normal user of `did` becomes special.
    func promoteOldestNormal(did: String) async throws(StorageError) {
        try await executor.query(
            """
            UPDATE bindings SET role = 'special' WHERE did = $1 AND uid = (
                SELECT uid FROM bindings WHERE did = $1 AND role = 'normal' ORDER BY id LIMIT 1)
            """,
            .text(did)
        )
    }

    /// The user's remark, alias and labels; nil leaves one as it is.
    func rename(_ uid: String, did: String, remark: String?, alias: String?, labels: [String]?) async throws(StorageError) {
        if let remark {
            try await executor.query("UPDATE bindings SET remark = $3 WHERE uid = $1 AND did = $2", .text(uid), .text(did), .text(remark))
        }
        if let alias {
            try await executor.query("UPDATE bindings SET dev_alias = $3 WHERE uid = $1 AND did = $2", .text(uid), .text(did), .text(alias))
        }
        if let labels {
            let json = JSONValue.array(labels.map(JSONValue.string)).serialized()
            try await executor.query("UPDATE bindings SET dev_label = $3 WHERE uid = $1 AND did = $2", .text(uid), .text(did), .text(json))
        }
    }

    func binding(_ uid: String, did: String) async throws(StorageError) -> BindingRecord? {
        try await executor.first("SELECT \(BindingRecord.columns) FROM bindings b WHERE b.uid = $1 AND b.did = $2", .text(uid), .text(did))
            .map { row throws(StorageError) in try BindingRecord(row: row) }
    }

    /// The devices of `pairs` their user is bound to, keyed `uid` U+001F `did`.
    func devices(boundBy pairs: Set<UserDevice>) async throws(StorageError) -> [UserDevice: DeviceRecord] {
        guard !pairs.isEmpty else { return [:] }
        let dids = Set(pairs.map(\.did)).sorted()
        let placeholders = dids.indices.map { "$\($0 + 1)" }.joined(separator: ", ")
        var devices: [UserDevice: DeviceRecord] = [:]
        for row in try await executor.query(
            "SELECT b.uid, \(DeviceRecord.columns) FROM bindings b JOIN devices d ON d.did = b.did WHERE b.did IN (\(placeholders))", dids.map(SQLValue.text))
        {
            let pair = UserDevice(uid: try row.text("uid"), did: try row.text("did"))
            if pairs.contains(pair) { devices[pair] = try DeviceRecord(row: row) }
        }
        return devices
    }

    /// A device `uid` is bound to; nil when it is not.
    func device(boundBy uid: String, did: String) async throws(StorageError) -> DeviceRecord? {
        try await executor.first(
            "SELECT \(DeviceRecord.columns) FROM bindings b JOIN devices d ON d.did = b.did WHERE b.uid = $1 AND b.did = $2",
            .text(uid), .text(did)
        ).map { row throws(StorageError) in try DeviceRecord(row: row) }
    }

    /// The devices `uid` is bound to with the binding and the product's name, oldest binding first.
    func boundDevices(_ uid: String, includingDisabled: Bool, limit: Int64, skip: Int64) async throws(StorageError) -> [BoundDevice] {
        try await executor.query(
            """
            SELECT \(DeviceRecord.columns), \(BindingRecord.columns), p.name AS product_name, \(BoundDevice.homeColumns)
            FROM bindings b JOIN devices d ON d.did = b.did JOIN products p ON p.product_key = d.product_key \(BoundDevice.homeJoin)
            WHERE b.uid = $1 AND (d.is_disabled = 0 OR $2 = 1)
            ORDER BY b.id LIMIT $3 OFFSET $4
            """,
            .text(uid), .bool(includingDisabled), .int(limit), .int(skip)
        ).map { row throws(StorageError) in try BoundDevice(row: row) }
    }

    /// When `uid`'s binding to `did` ends (a share for a limited time); nil when it does not,
    /// or when there is no binding.
    func bindingExpiry(_ uid: String, did: String) async throws(StorageError) -> Int64? {
        try await executor.first("SELECT expires_at FROM bindings WHERE uid = $1 AND did = $2", .text(uid), .text(did))?.optionalInt("expires_at")
    }

    func boundDevice(_ uid: String, did: String) async throws(StorageError) -> BoundDevice? {
        try await executor.first(
            """
            SELECT \(DeviceRecord.columns), \(BindingRecord.columns), p.name AS product_name, \(BoundDevice.homeColumns)
            FROM bindings b JOIN devices d ON d.did = b.did JOIN products p ON p.product_key = d.product_key \(BoundDevice.homeJoin)
            WHERE b.uid = $1 AND b.did = $2
            """,
            .text(uid), .text(did)
        ).map { row throws(StorageError) in try BoundDevice(row: row) }
    }
}

/// A device as one user has it: the device, the user's binding, the product's name.
struct BoundDevice: Sendable {
    var device: DeviceRecord
    var binding: BindingRecord
    var productName: String
    /// The device's home and room, when the user is a member of that home.
    var homeID: Int64?
    var roomID: Int64?

    init(row: SQLRow) throws(StorageError) {
        device = try DeviceRecord(row: row)
        binding = try BindingRecord(row: row)
        productName = try row.text("product_name")
        homeID = row.optionalInt("home_id")
        roomID = homeID == nil ? nil : row.optionalInt("room_id")
    }

    static let homeColumns = "CASE WHEN hm.uid IS NULL THEN NULL ELSE hd.home_id END AS home_id, hd.room_id AS room_id"
    static let homeJoin = "LEFT JOIN home_devices hd ON hd.did = d.did LEFT JOIN home_members hm ON hm.home_id = hd.home_id AND hm.uid = b.uid"
}

/// A user and a device: a binding's key.
struct UserDevice: Hashable, Sendable {
    var uid: String
    var did: String
}
