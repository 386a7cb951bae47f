import TetherCloudProtocol
import TetherCore

/// A home as stored.
struct HomeRecord: Sendable {
    var id: Int64
    var name: String
    var geoName: String
    var latitude: Double?
    var longitude: Double?
    var createdAt: Int64

    init(row: SQLRow) throws(StorageError) {
        id = try row.int("id")
        name = try row.text("name")
        geoName = try row.text("geo_name")
        latitude = row.optionalDouble("latitude")
        longitude = row.optionalDouble("longitude")
        createdAt = try row.int("created_at")
    }

    static let columns = "h.id, h.name, h.geo_name, h.latitude, h.longitude, h.created_at"
    static let returning = "id, name, geo_name, latitude, longitude, created_at"
}

/// An invitation to join a home as stored.
struct HomeInvitationRecord: Sendable {
    var id: Int64
    var homeID: Int64
    var inviterUID: String
    var inviteeUID: String
    var role: HomeRole
    var status: SharingEntryBody.Status
    var createdAt: Int64
    var expiredAt: Int64

    init(row: SQLRow) throws(StorageError) {
        id = try row.int("id")
        homeID = try row.int("home_id")
        inviterUID = try row.text("inviter_uid")
        inviteeUID = try row.text("invitee_uid")
        role = HomeRole(rawValue: try row.text("role")) ?? .member
        status = SharingEntryBody.Status(rawValue: try row.int("status")) ?? .cancelled
        createdAt = try row.int("created_at")
        expiredAt = try row.int("expired_at")
    }

    static let columns = "id, home_id, inviter_uid, invitee_uid, role, status, created_at, expired_at"
}

/// Homes, their members, rooms, devices and invitations, and the bindings membership gives.
struct HomeStore: Sendable {
    let executor: any SQLExecutor

    init(_ executor: any SQLExecutor) { self.executor = executor }

    // MARK: Homes

    func create(_ fields: HomeFieldsBody, name: String, owner uid: String, now: Int64) async throws(StorageError) -> HomeRecord {
        guard
            let row = try await executor.first(
                """
                INSERT INTO homes (name, geo_name, latitude, longitude, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $5)
                RETURNING \(HomeRecord.returning)
                """,
                .text(name), .text(fields.geoName ?? ""), fields.latitude.map(SQLValue.double) ?? .null, fields.longitude.map(SQLValue.double) ?? .null,
                .int(now))
        else { throw StorageError(.unexpectedValue, "the home was not stored") }
        let home = try HomeRecord(row: row)
        try await addMember(home.id, uid: uid, role: .owner, now: now)
        return home
    }

    /// The home and the role `uid` has in it; nil when either does not exist.
    func membership(_ id: Int64, uid: String) async throws(StorageError) -> (home: HomeRecord, role: HomeRole)? {
        try await executor.first(
            "SELECT \(HomeRecord.columns), m.role FROM homes h JOIN home_members m ON m.home_id = h.id WHERE h.id = $1 AND m.uid = $2",
            .int(id), .text(uid)
        ).map { row throws(StorageError) in (try HomeRecord(row: row), HomeRole(rawValue: try row.text("role")) ?? .member) }
    }

    /// The homes `uid` belongs to, oldest first, with their role.
    func homes(of uid: String) async throws(StorageError) -> [(home: HomeRecord, role: HomeRole)] {
        try await executor.query(
            "SELECT \(HomeRecord.columns), m.role FROM homes h JOIN home_members m ON m.home_id = h.id WHERE m.uid = $1 ORDER BY h.id", .text(uid)
        ).map { row throws(StorageError) in (try HomeRecord(row: row), HomeRole(rawValue: try row.text("role")) ?? .member) }
    }

    /// Holds the home's row until the transaction ends (PostgreSQL), so that joining, placing,
    /// taking out, leaving and deleting one home happen one after another. SQLite's transactions
    /// already do.
    func lock(_ id: Int64) async throws(StorageError) {
        guard executor.dialect == .postgres else { return }
        try await executor.query("SELECT id FROM homes WHERE id = $1 FOR UPDATE", .int(id))
    }

    /// The devices in `home` that `uid` owns (its own binding as owner or special user).
    func devices(_ home: Int64, ownedBy uid: String) async throws(StorageError) -> [String] {
        try await executor.query(
            """
            SELECT hd.did FROM home_devices hd JOIN bindings b ON b.did = hd.did
            WHERE hd.home_id = $1 AND b.uid = $2 AND b.home_id IS NULL AND b.role IN ('owner', 'special')
            """,
            .int(home), .text(uid)
        ).map { row throws(StorageError) in try row.text("did") }
    }

    func update(_ id: Int64, _ fields: HomeFieldsBody, now: Int64) async throws(StorageError) {
        try await executor.query(
            """
            UPDATE homes SET name = COALESCE($2, name), geo_name = COALESCE($3, geo_name), latitude = COALESCE($4, latitude),
            longitude = COALESCE($5, longitude), updated_at = $6 WHERE id = $1
            """,
            .int(id), .optional(fields.name), .optional(fields.geoName), fields.latitude.map(SQLValue.double) ?? .null,
            fields.longitude.map(SQLValue.double) ?? .null, .int(now))
    }

    func delete(_ id: Int64) async throws(StorageError) {
        try await executor.query("DELETE FROM homes WHERE id = $1", .int(id))
    }

    // MARK: Members

    func members(_ home: Int64) async throws(StorageError) -> [(uid: String, role: HomeRole, joinedAt: Int64)] {
        try await executor.query(
            """
            SELECT uid, role, joined_at FROM home_members WHERE home_id = $1
            ORDER BY CASE role WHEN 'owner' THEN 0 WHEN 'admin' THEN 1 ELSE 2 END, joined_at, uid
            """,
            .int(home)
        ).map { row throws(StorageError) in (try row.text("uid"), HomeRole(rawValue: try row.text("role")) ?? .member, try row.int("joined_at"))
        }
    }

    func addMember(_ home: Int64, uid: String, role: HomeRole, now: Int64) async throws(StorageError) {
        try await executor.query(
            "INSERT INTO home_members (home_id, uid, role, joined_at) VALUES ($1, $2, $3, $4)", .int(home), .text(uid), .text(role.rawValue), .int(now))
    }

    func setRole(_ home: Int64, uid: String, role: HomeRole) async throws(StorageError) -> Bool {
        try await executor.first(
            "UPDATE home_members SET role = $3 WHERE home_id = $1 AND uid = $2 RETURNING uid", .int(home), .text(uid), .text(role.rawValue)) != nil
    }

    func removeMember(_ home: Int64, uid: String) async throws(StorageError) -> Bool {
        try await executor.first("DELETE FROM home_members WHERE home_id = $1 AND uid = $2 RETURNING uid", .int(home), .text(uid)) != nil
    }

    // MARK: Rooms

    func rooms(_ home: Int64) async throws(StorageError) -> [RoomBody] {
        try await executor.query("SELECT id, name FROM rooms WHERE home_id = $1 ORDER BY id", .int(home)).map { row throws(StorageError) in
            RoomBody(id: try row.int("id"), name: try row.text("name"))
        }
    }

    func addRoom(_ home: Int64, name: String, now: Int64) async throws(StorageError) -> RoomBody {
        guard
            let row = try await executor.first(
                "INSERT INTO rooms (home_id, name, created_at) VALUES ($1, $2, $3) RETURNING id", .int(home), .text(name), .int(now))
        else { throw StorageError(.unexpectedValue, "the room was not stored") }
        return RoomBody(id: try row.int("id"), name: name)
    }

    func renameRoom(_ home: Int64, id: Int64, name: String) async throws(StorageError) -> Bool {
        try await executor.first("UPDATE rooms SET name = $3 WHERE home_id = $1 AND id = $2 RETURNING id", .int(home), .int(id), .text(name)) != nil
    }

    func deleteRoom(_ home: Int64, id: Int64) async throws(StorageError) -> Bool {
        // The room's devices stay in the home, in no room.
        try await executor.query("UPDATE home_devices SET room_id = NULL WHERE home_id = $1 AND room_id = $2", .int(home), .int(id))
        return try await executor.first("DELETE FROM rooms WHERE home_id = $1 AND id = $2 RETURNING id", .int(home), .int(id)) != nil
    }

    func roomExists(_ home: Int64, id: Int64) async throws(StorageError) -> Bool {
        try await executor.first("SELECT id FROM rooms WHERE home_id = $1 AND id = $2", .int(home), .int(id)) != nil
    }

    // MARK: Devices

    func devices(_ home: Int64) async throws(StorageError) -> [HomeDeviceBody] {
        try await executor.query("SELECT did, room_id FROM home_devices WHERE home_id = $1 ORDER BY placed_at, did", .int(home)).map {
            row throws(StorageError) in HomeDeviceBody(did: try row.text("did"), roomID: row.optionalInt("room_id"))
        }
    }

    /// The home a device is placed in, nil when none.
    func home(of did: String) async throws(StorageError) -> Int64? {
        try await executor.first("SELECT home_id FROM home_devices WHERE did = $1", .text(did))?.optionalInt("home_id")
    }

    /// Places `did` in `home` (in `room`), or moves it to another room of the same home.
    func place(_ did: String, home: Int64, room: Int64?, by uid: String, now: Int64) async throws(StorageError) {
        try await executor.query(
            """
            INSERT INTO home_devices (did, home_id, room_id, placed_by, placed_at) VALUES ($1, $2, $3, $4, $5)
            ON CONFLICT (did) DO UPDATE SET room_id = excluded.room_id
            """,
            .text(did), .int(home), room.map(SQLValue.int) ?? .null, .text(uid), .int(now))
    }

    func unplace(_ did: String, home: Int64) async throws(StorageError) -> Bool {
        try await executor.first("DELETE FROM home_devices WHERE did = $1 AND home_id = $2 RETURNING did", .text(did), .int(home)) != nil
    }

    // MARK: The bindings membership gives

    /// Binds `uid` to `did` as a guest through `home`, unless it is bound already (its own
    /// binding, or a share, stays as it is). True when a binding was made.
    func grant(_ uid: String, did: String, home: Int64, now: Int64) async throws(StorageError) -> Bool {
        try await executor.first(
            """
            INSERT INTO bindings (uid, did, role, created_at, home_id) VALUES ($1, $2, 'guest', $3, $4)
            ON CONFLICT (uid, did) DO NOTHING RETURNING uid
            """,
            .text(uid), .text(did), .int(now), .int(home)) != nil
    }

    /// Ends the bindings `home` gave: to `uid` (leaving), for `did` (the device taken out), or all.
    func revoke(home: Int64, uid: String? = nil, did: String? = nil) async throws(StorageError) -> [(uid: String, did: String)] {
        var sql = "DELETE FROM bindings WHERE home_id = $1"
        var binds: [SQLValue] = [.int(home)]
        if let uid {
            binds.append(.text(uid))
            sql += " AND uid = $\(binds.count)"
        }
        if let did {
            binds.append(.text(did))
            sql += " AND did = $\(binds.count)"
        }
        return try await executor.query(sql + " RETURNING uid, did", binds).map { row throws(StorageError) in (try row.text("uid"), try row.text("did")) }
    }

    // MARK: Invitations

    func invite(home: Int64, inviter: String, invitee: String, role: HomeRole, now: Int64, expiredAt: Int64) async throws(StorageError) -> HomeInvitationRecord
    {
        guard
            let row = try await executor.first(
                """
                INSERT INTO home_invitations (home_id, inviter_uid, invitee_uid, role, status, created_at, updated_at, expired_at)
                VALUES ($1, $2, $3, $4, 0, $5, $5, $6) RETURNING \(HomeInvitationRecord.columns)
                """,
                .int(home), .text(inviter), .text(invitee), .text(role.rawValue), .int(now), .int(expiredAt))
        else { throw StorageError(.unexpectedValue, "the invitation was not stored") }
        return try HomeInvitationRecord(row: row)
    }

    func invitation(_ id: Int64) async throws(StorageError) -> HomeInvitationRecord? {
        try await executor.first("SELECT \(HomeInvitationRecord.columns) FROM home_invitations WHERE id = $1", .int(id)).map {
            row throws(StorageError) in try HomeInvitationRecord(row: row)
        }
    }

    func pendingInvitation(home: Int64, invitee: String, now: Int64) async throws(StorageError) -> HomeInvitationRecord? {
        try await executor.first(
            "SELECT \(HomeInvitationRecord.columns) FROM home_invitations WHERE home_id = $1 AND invitee_uid = $2 AND status = 0 AND expired_at > $3",
            .int(home), .text(invitee), .int(now)
        ).map { row throws(StorageError) in try HomeInvitationRecord(row: row) }
    }

    /// Moves an invitation from one status to another; nil when it was not in `from` any more.
    func move(_ id: Int64, from: SharingEntryBody.Status, to: SharingEntryBody.Status, now: Int64) async throws(StorageError) -> HomeInvitationRecord? {
        try await executor.first(
            "UPDATE home_invitations SET status = $3, updated_at = $4 WHERE id = $1 AND status = $2 RETURNING \(HomeInvitationRecord.columns)",
            .int(id), .int(from.rawValue), .int(to.rawValue), .int(now)
        ).map { row throws(StorageError) in try HomeInvitationRecord(row: row) }
    }

    /// What `uid` sent (`sent`) or received, newest first, with the home's name.
    func invitations(of uid: String, sent: Bool, limit: Int64) async throws(StorageError) -> [(HomeInvitationRecord, homeName: String)] {
        try await executor.query(
            """
            SELECT i.id, i.home_id, i.inviter_uid, i.invitee_uid, i.role, i.status, i.created_at, i.expired_at, h.name AS home_name
            FROM home_invitations i JOIN homes h ON h.id = i.home_id WHERE \(sent ? "i.inviter_uid" : "i.invitee_uid") = $1 ORDER BY i.id DESC LIMIT $2
            """,
            .text(uid), .int(limit)
        ).map { row throws(StorageError) in (try HomeInvitationRecord(row: row), try row.text("home_name")) }
    }
}
