import TetherAlink

/// Who may act on a device, the one rule every control-like request shares (a write, a service
/// call, RRPC, a shadow, a custom topic): a user bound to it, as owner or guest (`9017`
/// otherwise), and for acting on it a device that is not disabled (`9023`).
struct DeviceAccess: Sendable {
    let database: any SQLDatabase

    /// The device, if `user` is bound to it.
    func readable(by user: AuthenticatedUser, did: String) async throws -> DeviceRecord {
        guard let device = try await BindingStore(database).device(boundBy: user.uid, did: did) else { throw CloudAPIError.deviceNotBound() }
        return device
    }

    /// The device, if `user` is bound to it and it is not disabled.
    func controllable(by user: AuthenticatedUser, did: String) async throws -> DeviceRecord {
        let device = try await readable(by: user, did: did)
        guard !device.isDisabled else { throw CloudAPIError.deviceDisabled() }
        return device
    }
}

extension DeviceRecord {
    /// `name` read as one of this device's own concrete Alink topics (no wildcard, not behind
    /// `/ext/rrpc/`); nil for anything else.
    func ownTopic(_ name: String) -> AlinkDeviceTopic? {
        guard !name.contains("+"), !name.contains("#"), let topic = AlinkDeviceTopic(parsing: name), topic.rrpcMessageID == nil,
            topic.device.productKey == productKey, topic.device.deviceName == deviceName
        else { return nil }
        return topic
    }
}
