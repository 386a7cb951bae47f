import NIOHTTP1
public import TetherCloudProtocol
public import TetherCore

/// A group of your devices: mixed, or of one product (then controllable as one).
public typealias DeviceGroup = GroupBody
/// A device of a group.
public typealias DeviceGroupMember = GroupDeviceBody
/// Which devices a change to a group's members took, and why the others failed.
public typealias DeviceGroupChange = GroupDevicesResultBody
/// One device's outcome of a group's control.
public typealias DeviceGroupControlResult = GroupControlResultBody

extension TetherCloudAPI {
    // MARK: Groups (reference §2.6)

    public func groups(_ session: CloudSession) async throws(TetherError) -> [DeviceGroup] {
        let answer = try await call(.GET, "/app/group", session: session)
        return try (answer.arrayValue ?? []).map { entry throws(TetherError) in try decodeBody("a group", entry, as: GroupBody.init(json:)) }
    }

    /// Makes a group; with `productKey`, only that product's devices join it, and it can be
    /// controlled as one.
    public func createGroup(_ session: CloudSession, name: String, productKey: String? = nil) async throws(TetherError) -> DeviceGroup {
        let body = GroupFieldsBody(name: name, productKey: productKey)
        return try decodeBody("the group", try await call(.POST, "/app/group", body: body.json, session: session), as: GroupBody.init(json:))
    }

    public func renameGroup(_ session: CloudSession, id: String, name: String) async throws(TetherError) {
        _ = try await call(.PUT, "/app/group/\(id.tetherPercentEncoded)", body: GroupFieldsBody(name: name).json, session: session)
    }

    public func deleteGroup(_ session: CloudSession, id: String) async throws(TetherError) {
        _ = try await call(.DELETE, "/app/group/\(id.tetherPercentEncoded)", session: session)
    }

    public func groupDevices(_ session: CloudSession, id: String) async throws(TetherError) -> [DeviceGroupMember] {
        let answer = try await call(.GET, "/app/group/\(id.tetherPercentEncoded)/devices", session: session)
        return try (answer.arrayValue ?? []).map { entry throws(TetherError) in try decodeBody("a group's device", entry, as: GroupDeviceBody.init(json:)) }
    }

    /// Adds devices; each failure with the cloud's code (9017 not bound to you, 9015 another product).
    public func addToGroup(_ session: CloudSession, id: String, dids: [String]) async throws(TetherError) -> DeviceGroupChange {
        let answer = try await call(
            .POST, "/app/group/\(id.tetherPercentEncoded)/devices?show_detail=1", body: GroupDidsBody(dids: dids).json, session: session)
        return try decodeBody("the group's change", answer, as: GroupDevicesResultBody.init(json:))
    }

    public func removeFromGroup(_ session: CloudSession, id: String, dids: [String]) async throws(TetherError) -> DeviceGroupChange {
        let answer = try await call(.DELETE, "/app/group/\(id.tetherPercentEncoded)/devices", body: GroupDidsBody(dids: dids).json, session: session)
        return try decodeBody("the group's change", answer, as: GroupDevicesResultBody.init(json:))
    }

    /// Writes data points to every device of a single-product group: a result per device.
    public func controlGroup(_ session: CloudSession, id: String, attrs: JSONObject) async throws(TetherError) -> [DeviceGroupControlResult] {
        let answer = try await call(.POST, "/app/group/\(id.tetherPercentEncoded)/control", body: ControlBody(.attrs(attrs)).json, session: session)
        return try (answer.arrayValue ?? []).map { entry throws(TetherError) in
            try decodeBody("a device's result", entry, as: GroupControlResultBody.init(json:))
        }
    }
}
