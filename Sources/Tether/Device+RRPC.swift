import TetherCloudProtocol

extension Device {
    /// Calls the device synchronously through the cloud (Alink RRPC): `payload` goes to the
    /// device on the cloud's gateway, and what the device answers comes back. For devices that
    /// connect to the cloud over MQTT (Alink), not for GAgent LAN devices.
    ///
    /// ```swift
    /// let answer = try await device.rrpc(Array("status?".utf8), timeout: .seconds(3))
    /// ```
    ///
    /// - Parameters:
    ///   - topic: nil for a system RRPC (`/sys/{pk}/{dn}/rrpc/request/{id}`); one of the device's
    ///     own topics (`/{pk}/{dn}/user/…`, `/sys/{pk}/{dn}/thing/service/{identifier}`) for a
    ///     custom RRPC on `/ext/rrpc/{id}{topic}`.
    ///   - timeout: how long the cloud waits for the device: 100 ms to 30 s.
    /// - Throws: `TetherError.Code.cloudRefused` with the cloud's code (9500: no answer in time;
    ///   9042: not connected; 9017: not bound to the user); `TetherError.Code.invalidArgument`
    ///   without a cloud or a did.
    public func rrpc(_ payload: [UInt8], topic: String? = nil, timeout: Duration = .seconds(5)) async throws(TetherError) -> [UInt8] {
        try await withCloudCall { api, session, did throws(TetherError) in
            try await api.rrpc(session, did: did, payload: payload, topic: topic, timeout: timeout).payload
        }
    }
}
