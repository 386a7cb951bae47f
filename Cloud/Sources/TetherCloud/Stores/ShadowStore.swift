import TetherAlink
import TetherCore

/// The `device_shadows` table: each device's shadow as one JSON document with its version.
struct ShadowStore: Sendable {
    let executor: any SQLExecutor

    init(_ executor: any SQLExecutor) { self.executor = executor }

    /// A shadow as stored: the value, and the document text a replacement is conditional on.
    struct Stored: Sendable {
        var shadow: DeviceShadow
        var document: String
    }

    /// The stored shadow; nil when the device never had one.
    func load(did: String) async throws(StorageError) -> Stored? {
        guard let row = try await executor.first("SELECT document FROM device_shadows WHERE did = $1", .text(did)) else { return nil }
        let text = try row.text("document")
        guard let json = try? JSONValue.parse(text), let shadow = DeviceShadow(json: json) else {
            throw StorageError(.unexpectedValue, "the shadow of \(did) is not readable")
        }
        return Stored(shadow: shadow, document: text)
    }

    /// Stores `shadow` in place of the one read (nil: there was none), only if the stored
    /// document is still exactly that one: comparing the whole document, not the version, so
    /// that a reset to version 0 between the read and the write is noticed too. False when
    /// another writer stored first; nothing is written then.
    func replace(did: String, with shadow: DeviceShadow, previous: Stored?, nowMs: Int64) async throws(StorageError) -> Bool {
        let document = SQLValue.text(shadow.json.serialized())
        let rows: [SQLRow]
        if let previous {
            rows = try await executor.query(
                "UPDATE device_shadows SET version = $2, document = $3, updated_ms = $4 WHERE did = $1 AND document = $5 RETURNING did",
                .text(did), .int(shadow.version), document, .int(nowMs), .text(previous.document))
        } else {
            rows = try await executor.query(
                "INSERT INTO device_shadows (did, version, document, updated_ms) VALUES ($1, $2, $3, $4) ON CONFLICT (did) DO NOTHING RETURNING did",
                .text(did), .int(shadow.version), document, .int(nowMs))
        }
        return !rows.isEmpty
    }
}
