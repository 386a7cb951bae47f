public import TetherCore

extension Device {
    /// The device's shadow in the cloud (Alink devices): what it last reported, what apps
    /// desire, when each attribute changed, and the version the next write must exceed.
    ///
    /// - Throws: `TetherError.Code.cloudRefused` (9017: not bound to the user);
    ///   `TetherError.Code.invalidArgument` without a cloud or a did.
    public func shadow() async throws(TetherError) -> DeviceShadow {
        try await withCloudCall { api, session, did throws(TetherError) in try await api.shadow(session, did: did) }
    }

    /// Writes what the device should be into its shadow and returns the shadow after it. The
    /// cloud pushes it to the device when connected; otherwise the device reads it when it asks.
    ///
    /// ```swift
    /// let shadow = try await device.shadow()
    /// try await device.updateShadow(desired: ["brightness": 80], version: shadow.version + 1)
    /// ```
    ///
    /// - Parameters:
    ///   - desired: values to set (`.null` removes a key).
    ///   - version: greater than the shadow's, or the cloud refuses with 9501.
    @discardableResult
    public func updateShadow(desired: JSONObject, version: Int64) async throws(TetherError) -> DeviceShadow {
        try await writeShadow(.merged(desired), version: version)
    }

    /// Empties what apps desire of the device.
    @discardableResult
    public func clearDesiredShadow(version: Int64) async throws(TetherError) -> DeviceShadow {
        try await writeShadow(.cleared, version: version)
    }

    private func writeShadow(_ change: ShadowUpdate.Change, version: Int64) async throws(TetherError) -> DeviceShadow {
        try await withCloudCall { api, session, did throws(TetherError) in
            try await api.updateShadow(session, did: did, desired: change, version: version)
        }
    }
}
