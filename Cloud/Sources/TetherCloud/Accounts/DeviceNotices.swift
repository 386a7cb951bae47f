import Logging
import TetherCore

/// Messages about a device for the users bound to it who asked for them (Tether extension of the
/// message centre): its alert and error events, and its going offline. Made once, by the node
/// that saw it happen.
struct DeviceNotices: Sendable {
    let database: any SQLDatabase
    let bus: any ClusterBus
    let logger: Logger

    /// Message types beyond Gizwits' 1 (sharing).
    static let alertType: Int64 = 2
    static let errorType: Int64 = 3
    static let offlineType: Int64 = 4
    /// What a user may ask for.
    static let kinds = ["alert", "error", "offline"]

    /// An event of type `alert` or `error` (others say nothing).
    func event(did: String, identifier: String, type: String, values: JSONValue) async {
        guard type == "alert" || type == "error" else { return }
        await post(
            did: did, about: type, type: type == "alert" ? Self.alertType : Self.errorType, content: "\(identifier) (\(type))",
            data: ["event": .string(type), "did": .string(did), "identifier": .string(identifier), "values": values])
    }

    func offline(did: String) async {
        await post(did: did, about: "offline", type: Self.offlineType, content: "went offline", data: ["event": "offline", "did": .string(did)])
    }

    private func post(did: String, about what: String, type: Int64, content: String, data: JSONValue) async {
        do {
            let users = try await BindingStore(database).notified(of: did, about: what)
            guard !users.isEmpty else { return }
            let name = try await DeviceStore(database).find(did).flatMap { device in device.deviceName.isEmpty ? nil : device.deviceName } ?? did
            let centre = MessageCentre(database: database, bus: bus)
            for uid in users { try await centre.post(to: uid, type: type, content: "\(name): \(content)", data: data) }
        } catch {
            logger.warning("device messages could not be left", metadata: ["did": "\(did)", "error": "\(error)"])
        }
    }
}
