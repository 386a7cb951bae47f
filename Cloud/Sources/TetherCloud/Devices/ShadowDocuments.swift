import TetherAlink
import TetherCore

/// Reads and writes device shadows by Aliyun's rules (``DeviceShadow``), for devices (the
/// gateway) and apps (``ShadowService``) alike. A write reads the shadow, applies the update
/// and stores it only if nobody stored another document meanwhile (any node, any writer);
/// otherwise it starts again from what is stored now, so the version rule holds across nodes.
struct ShadowDocuments: Sendable {
    let database: any SQLDatabase

    /// Lost races before a write gives up (each loss means another write succeeded).
    static let attempts = 8

    /// The shadow; an empty one at version 0 when the device never had one.
    func read(did: String) async throws(StorageError) -> DeviceShadow {
        try await ShadowStore(database).load(did: did)?.shadow ?? DeviceShadow()
    }

    /// Applies `update` and returns the stored shadow. Throws ``ShadowRefusal`` for a write the
    /// rules refuse (the stored shadow is unchanged), `StorageError` when storage fails.
    func write(did: String, _ update: ShadowUpdate, by writer: DeviceShadow.Writer) async throws -> DeviceShadow {
        let store = ShadowStore(database)
        for _ in 0..<Self.attempts {
            let stored = try await store.load(did: did)
            let nowMs = Clock.unixMilliseconds()
            let next = try (stored?.shadow ?? DeviceShadow()).applying(update, by: writer, atSeconds: nowMs / 1000)
            if try await store.replace(did: did, with: next, previous: stored, nowMs: nowMs) { return next }
        }
        throw ShadowRefusal(.versionConflict, "the shadow kept changing while this write was applied")
    }
}
