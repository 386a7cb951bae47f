public import TetherCloudClient
public import TetherCore

extension TetherClient {
    /// The logged-in user's groups of devices (the Open API's §2.6).
    public var groups: DeviceGroups { DeviceGroups(client: self) }
}

/// Groups of devices, each the user's own: mixed, or of one product and then controlled as one
/// (each device through the cloud's control path, each with its own result). A device leaves
/// the user's groups when the user's binding to it ends. Errors carry the cloud's code
/// (`TetherError.cloudCode`): 9517 a group that is not yours, 9017 a device you are not bound to,
/// 9015 a device of another product or a mixed group's control, 9025 a value the model refuses.
public struct DeviceGroups: Sendable {
    let client: TetherClient

    public func list() async throws(TetherError) -> [DeviceGroup] {
        try await client.withCloudSession { api, session throws(TetherError) in try await api.groups(session) }
    }

    public func create(name: String, productKey: String? = nil) async throws(TetherError) -> DeviceGroup {
        try await client.withCloudSession { api, session throws(TetherError) in try await api.createGroup(session, name: name, productKey: productKey) }
    }

    public func rename(_ id: String, to name: String) async throws(TetherError) {
        try await client.withCloudSession { api, session throws(TetherError) in try await api.renameGroup(session, id: id, name: name) }
    }

    public func delete(_ id: String) async throws(TetherError) {
        try await client.withCloudSession { api, session throws(TetherError) in try await api.deleteGroup(session, id: id) }
    }

    public func devices(of id: String) async throws(TetherError) -> [DeviceGroupMember] {
        try await client.withCloudSession { api, session throws(TetherError) in try await api.groupDevices(session, id: id) }
    }

    public func add(_ dids: [String], to id: String) async throws(TetherError) -> DeviceGroupChange {
        try await client.withCloudSession { api, session throws(TetherError) in try await api.addToGroup(session, id: id, dids: dids) }
    }

    public func remove(_ dids: [String], from id: String) async throws(TetherError) -> DeviceGroupChange {
        try await client.withCloudSession { api, session throws(TetherError) in try await api.removeFromGroup(session, id: id, dids: dids) }
    }

    /// Writes data points to every device of a single-product group.
    public func write(_ attrs: JSONObject, to id: String) async throws(TetherError) -> [DeviceGroupControlResult] {
        try await client.withCloudSession { api, session throws(TetherError) in try await api.controlGroup(session, id: id, attrs: attrs) }
    }
}
