import TetherCloudProtocol
import TetherCore

/// An invitation as stored.
struct SharingRecord: Sendable {
    var id: Int64
    var did: String
    var ownerUID: String
    var guestUID: String?
    var kind: SharingCreateBody.Kind
    var status: SharingEntryBody.Status
    var durationMinutes: Int64?
    var ownerAlias: String
    var guestAlias: String
    var createdAt: Int64
    var updatedAt: Int64
    var expiredAt: Int64

    init(row: SQLRow) throws(StorageError) {
        id = try row.int("id")
        did = try row.text("did")
        ownerUID = try row.text("owner_uid")
        guestUID = row.optionalText("guest_uid")
        kind = SharingCreateBody.Kind(rawValue: try row.int("kind")) ?? .user
        status = SharingEntryBody.Status(rawValue: try row.int("status")) ?? .cancelled
        durationMinutes = row.optionalInt("duration_minutes")
        ownerAlias = try row.text("owner_alias")
        guestAlias = try row.text("guest_alias")
        createdAt = try row.int("created_at")
        updatedAt = try row.int("updated_at")
        expiredAt = try row.int("expired_at")
    }

    static let columns = "id, did, owner_uid, guest_uid, kind, status, duration_minutes, owner_alias, guest_alias, created_at, updated_at, expired_at"
}

/// The `sharing_invitations` table, and the bindings' ends that limited invitations set.
struct SharingStore: Sendable {
    let executor: any SQLExecutor

    init(_ executor: any SQLExecutor) { self.executor = executor }

    struct NewInvitation: Sendable {
        var did: String
        var ownerUID: String
        var guestUID: String?
        var kind: SharingCreateBody.Kind
        var codeHash: String?
        var durationMinutes: Int64?
        var expiredAt: Int64
    }

    func insert(_ invitation: NewInvitation, now: Int64) async throws(StorageError) -> SharingRecord {
        guard
            let row = try await executor.first(
                """
                INSERT INTO sharing_invitations (did, owner_uid, guest_uid, kind, code_hash, status, duration_minutes, created_at, updated_at, expired_at)
                VALUES ($1, $2, $3, $4, $5, 0, $6, $7, $7, $8) RETURNING \(SharingRecord.columns)
                """,
                .text(invitation.did), .text(invitation.ownerUID), invitation.guestUID.map(SQLValue.text) ?? .null, .int(invitation.kind.rawValue),
                invitation.codeHash.map(SQLValue.text) ?? .null, invitation.durationMinutes.map(SQLValue.int) ?? .null, .int(now), .int(invitation.expiredAt))
        else { throw StorageError(.unexpectedValue, "the new invitation was not returned") }
        return try SharingRecord(row: row)
    }

    func find(_ id: Int64, lockingForUpdate: Bool = false) async throws(StorageError) -> SharingRecord? {
        let lock = lockingForUpdate && executor.dialect == .postgres ? " FOR UPDATE" : ""
        return try await executor.first("SELECT \(SharingRecord.columns) FROM sharing_invitations WHERE id = $1\(lock)", .int(id)).map {
            row throws(StorageError) in try SharingRecord(row: row)
        }
    }

    func find(codeHash: String) async throws(StorageError) -> SharingRecord? {
        try await executor.first("SELECT \(SharingRecord.columns) FROM sharing_invitations WHERE code_hash = $1", .text(codeHash)).map {
            row throws(StorageError) in try SharingRecord(row: row)
        }
    }

    /// A pending invitation of `did` to `guest` that has not expired.
    func pending(did: String, guestUID: String, now: Int64) async throws(StorageError) -> SharingRecord? {
        try await executor.first(
            "SELECT \(SharingRecord.columns) FROM sharing_invitations WHERE did = $1 AND guest_uid = $2 AND status = 0 AND expired_at > $3",
            .text(did), .text(guestUID), .int(now)
        ).map { row throws(StorageError) in try SharingRecord(row: row) }
    }

    /// Moves an invitation from `from` to `status` (and names its guest, for a QR code); nil when it
    /// was not in `from` any more (another request moved it first).
    func move(
        _ id: Int64, from: SharingEntryBody.Status, to status: SharingEntryBody.Status, guestUID: String? = nil, now: Int64
    ) async throws(StorageError)
        -> SharingRecord?
    {
        try await executor.first(
            """
            UPDATE sharing_invitations SET status = $3, updated_at = $4, guest_uid = COALESCE($5, guest_uid)
            WHERE id = $1 AND status = $2 RETURNING \(SharingRecord.columns)
            """,
            .int(id), .int(from.rawValue), .int(status.rawValue), .int(now), guestUID.map(SQLValue.text) ?? .null
        ).map { row throws(StorageError) in try SharingRecord(row: row) }
    }

    /// Invitations `uid` sent (`sent`) or received, newest first.
    func list(
        uid: String, sent: Bool, status: SharingEntryBody.Status?, did: String?, limit: Int64, skip: Int64
    ) async throws(StorageError)
        -> (records: [SharingRecord], total: Int64)
    {
        var conditions = [sent ? "owner_uid = $1" : "guest_uid = $1"]
        var binds: [SQLValue] = [.text(uid)]
        if let status {
            binds.append(.int(status.rawValue))
            conditions.append("status = $\(binds.count)")
        }
        if let did {
            binds.append(.text(did))
            conditions.append("did = $\(binds.count)")
        }
        let filter = conditions.joined(separator: " AND ")
        let total = try await executor.query("SELECT COUNT(*) AS total FROM sharing_invitations WHERE \(filter)", binds).first?.int("total") ?? 0
        binds += [.int(limit), .int(skip)]
        let records = try await executor.query(
            """
            SELECT \(SharingRecord.columns) FROM sharing_invitations WHERE \(filter)
            ORDER BY id DESC LIMIT $\(binds.count - 1) OFFSET $\(binds.count)
            """, binds
        ).map { row throws(StorageError) in try SharingRecord(row: row) }
        return (records, total)
    }

    /// The alias one party gives the other: the owner names the guest (`guest_alias`), the guest the owner.
    /// The accepted invitations of `guest` to `did` end as revoked (the guest was removed).
    func revokeAccepted(did: String, guest: String, now: Int64) async throws(StorageError) {
        try await executor.query(
            "UPDATE sharing_invitations SET status = 3, updated_at = $3 WHERE did = $1 AND guest_uid = $2 AND status = 1", .text(did), .text(guest), .int(now))
    }

    func setAlias(_ id: Int64, ofGuest: Bool, _ alias: String, now: Int64) async throws(StorageError) {
        try await executor.query(
            "UPDATE sharing_invitations SET \(ofGuest ? "guest_alias" : "owner_alias") = $2, updated_at = $3 WHERE id = $1", .int(id), .text(alias), .int(now))
    }

    /// Limits a binding to `expiresAt` (Unix seconds).
    func limitBinding(uid: String, did: String, expiresAt: Int64) async throws(StorageError) {
        try await executor.query("UPDATE bindings SET expires_at = $3 WHERE uid = $1 AND did = $2", .text(uid), .text(did), .int(expiresAt))
    }

    /// Ends the bindings whose time is up; the `(uid, did)` pairs ended.
    func endExpiredBindings(now: Int64) async throws(StorageError) -> [(uid: String, did: String)] {
        try await executor.query("DELETE FROM bindings WHERE expires_at IS NOT NULL AND expires_at <= $1 RETURNING uid, did", .int(now)).map {
            row throws(StorageError) in (try row.text("uid"), try row.text("did"))
        }
    }
}
