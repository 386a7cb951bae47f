extension Device {
    /// Sends bytes to one of the device's custom topics (`/{pk}/{dn}/user/…`) through the
    /// cloud, for Alink devices; the device gets them if it is connected and subscribed. What
    /// the device publishes on its own custom topics arrives as ``DeviceEvent/topicMessage(_:)``.
    ///
    /// ```swift
    /// try await device.publish(topic: "/\(productKey)/\(deviceName)/user/get", payload: Array("hello".utf8))
    /// ```
    ///
    /// - Parameter qos: 0 or 1.
    /// - Throws: `TetherError.Code.cloudRefused` with the cloud's code (9015: not a topic the
    ///   product's devices subscribe to; 9042: not connected; 9017: not bound to the user);
    ///   `TetherError.Code.invalidArgument` without a cloud or a did.
    public func publish(topic: String, payload: [UInt8], qos: Int = 0) async throws(TetherError) {
        try await withCloudCall { api, session, did throws(TetherError) in
            try await api.publish(session, did: did, topic: topic, payload: payload, qos: qos)
        }
    }
}
