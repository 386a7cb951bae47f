extension Device {
    /// What the device runs (per module), its product's firmware packages and its upgrades,
    /// newest first (Alink devices, through the cloud).
    ///
    /// - Throws: `TetherError.Code.cloudRefused` (9017: not bound to the user);
    ///   `TetherError.Code.invalidArgument` without a cloud or a did.
    public func firmware() async throws(TetherError) -> DeviceFirmware {
        try await withCloudCall { api, session, did throws(TetherError) in try await api.firmware(session, did: did) }
    }

    /// Offers firmware package `firmwareID` to the device: now if it is connected, else when it
    /// connects within `ttl` (default one day). Its progress arrives in ``events()`` as
    /// ``DeviceEvent/firmwareUpgrade(_:)`` while the device is subscribed; the returned
    /// command's id is the upgrade's ``FirmwareUpgrade/commandID``.
    ///
    /// ```swift
    /// let firmware = try await device.firmware()
    /// if let newest = firmware.packages.last, firmware.versions[newest.module] != newest.version {
    ///     try await device.upgradeFirmware(to: newest.id)
    /// }
    /// ```
    ///
    /// - Throws: `TetherError.Code.cloudRefused` with 9503 for a guest of the device, 9504
    ///   while an upgrade of the same module is under way, 9015 when it already runs that version.
    @discardableResult
    public func upgradeFirmware(to firmwareID: Int64, ttl: Duration? = nil) async throws(TetherError) -> CloudCommand {
        try await withCloudCall { api, session, did throws(TetherError) in try await api.upgradeFirmware(session, did: did, firmwareID: firmwareID, ttl: ttl) }
    }
}
