import TetherCloudClient

extension TetherClient {
    /// Reads the user's bound devices from the cloud and merges them into the device list: a
    /// device also found on the LAN is the same object (matched by did or MAC). Called when the
    /// user logs in and every `bindingsRefreshInterval`; call it after binding or unbinding
    /// elsewhere for an immediate update.
    @discardableResult
    public func refreshBindings() async throws(TetherError) -> [Device] {
        let account = try requireAccount()
        let bound = try await account.withSession { session throws(TetherError) in try await account.api.bindings(session) }
        var boundDevices: [Device] = []
        for entry in bound { boundDevices.append(adopt(entry)) }
        let boundIDs = Set(boundDevices.map(\.id))
        for device in allDevices where device.isBound && !boundIDs.contains(device.id) { device.updateCloud(nil) }
        publishList()
        for device in boundDevices where device.isSubscribed {
            tasks.start { await device.attachCloudIfSubscribed() }
        }
        return boundDevices
    }

    /// The device object for a binding, created when the client did not know the device.
    private func adopt(_ entry: CloudDevice) -> Device {
        let device = register(id: entry.did, aliases: [Device.normalizedMAC(entry.mac)]) {
            makeDevice(
                id: entry.did, did: entry.did, productKey: entry.productKey, mac: entry.mac.isEmpty ? nil : Device.displayMAC(entry.mac),
                endpoint: nil, onLAN: false, model: model(forProductKey: entry.productKey)
            )
        }
        device.updateCloud(entry)
        fetchModelIfMissing(device)
        return device
    }

    // MARK: Binding

    /// Binds a device to the user with its did and passcode (a device found on the LAN binds
    /// itself when subscribed; this is for one that is not).
    ///
    /// - Throws: `TetherError.Code.loginFailed` when the passcode is wrong.
    @discardableResult
    public func bind(did: String, passcode: String, remark: String? = nil, alias: String? = nil) async throws(TetherError) -> Device {
        let account = try requireAccount()
        let bound = try await account.withSession { session throws(TetherError) in
            try await account.api.bind(session, did: did, passcode: passcode, remark: remark, alias: alias)
        }
        guard bound else { throw TetherError(.loginFailed, "the cloud did not bind \(did): wrong passcode, or a device that cannot be bound") }
        return try await boundDevice(did: did)
    }

    /// Binds a device the app cannot discover (GPRS, Bluetooth, another network) by its MAC,
    /// product key and product secret: the Gizwits SDK's `bindRemoteDevice`.
    @discardableResult
    public func bind(productKey: String, mac: String, productSecret: String, remark: String? = nil, alias: String? = nil) async throws(TetherError) -> Device {
        let code = try BindingQRCode(productKey: productKey, mac: mac, productSecret: productSecret)
        return try await bind(code, remark: remark, alias: alias)
    }

    /// Binds the device a scanned QR code stands for (see `BindingQRCode`).
    @discardableResult
    public func bind(_ code: BindingQRCode, remark: String? = nil, alias: String? = nil) async throws(TetherError) -> Device {
        let account = try requireAccount()
        let entry = try await account.withSession { session throws(TetherError) in
            try await account.api.bind(session, productKey: code.productKey, mac: code.mac, productSecret: code.productSecret, remark: remark, alias: alias)
        }
        return try await boundDevice(did: entry.did)
    }

    /// The list read again after a binding, and the device it now holds.
    private func boundDevice(did: String) async throws(TetherError) -> Device {
        try await refreshBindings()
        guard let device = device(did: did) else {
            throw TetherError(.unexpectedCloudResponse, "the cloud bound \(did) but does not list it")
        }
        return device
    }

    private func requireAccount() throws(TetherError) -> TetherAccount {
        guard let account else { throw TetherError(.invalidArgument, "the client has no cloud configured") }
        return account
    }

    // MARK: Background work

    /// Keeps the bound devices current: at start when a session is stored, on every login,
    /// and every `interval`.
    func runCloudRefresh(interval: Duration) async {
        guard let account else { return }
        let events = account.events()
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for await event in events {
                    switch event {
                    case .loggedIn, .sessionRenewed: _ = try? await self.refreshBindings()
                    case .loggedOut, .sessionExpired: self.forgetBindings()
                    }
                }
            }
            group.addTask {
                while !Task.isCancelled {
                    if account.isLoggedIn { _ = try? await self.refreshBindings() }
                    do { try await Task.sleep(for: interval) } catch { return }
                }
            }
        }
    }

    /// Nobody is logged in any more: no device is bound.
    func forgetBindings() {
        for device in allDevices where device.isBound { device.updateCloud(nil) }
        publishList()
    }

    /// Keeps a real-time connection up while a user is logged in: a new one at every login
    /// (another user, another session), none after logout.
    func runRealtime(configuration: CloudRealtimeConfiguration) async {
        guard let account, let link else { return }
        let events = account.events()
        let connections = TaskScope()
        await withDiscardingTaskGroup { group in
            group.addTask { await connections.run() }
            var current: TaskScope.Handle?
            let replace = { (connect: Bool) async in
                current?.cancel()
                await current?.wait()
                current = connect ? connections.start { await self.keepRealtime(configuration, account: account, link: link) } : nil
            }
            if account.isLoggedIn { await replace(true) }
            for await event in events {
                eventBroadcast.yield(.account(event))
                switch event {
                case .loggedIn: await replace(true)
                case .loggedOut, .sessionExpired: await replace(false)
                case .sessionRenewed: break
                }
            }
            group.cancelAll()
        }
    }

    /// One real-time connection, for one login, until cancelled.
    private func keepRealtime(_ configuration: CloudRealtimeConfiguration, account: TetherAccount, link: RealtimeLink) async {
        let realtime = CloudRealtime(configuration: configuration, session: { try await account.validSession() }, logger: logger)
        let events = realtime.events()
        link.set(realtime)
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await realtime.run() }
            group.addTask {
                for await event in events { await self.handle(event) }
            }
        }
        link.clear(realtime)
        for device in allDevices { device.detachCloud() }
        // Its event loop has ended with it: say here that the connection is gone.
        eventBroadcast.yield(.cloudDisconnected(nil))
    }

    private func handle(_ event: CloudRealtimeEvent) async {
        switch event {
        case .connected:
            let up = link?.connected != nil
            for device in allDevices { device.apply(.cloudLink(up: up)) }
            // Subscriptions made before this login, or while the connection was down, move onto
            // it; every device the LAN does not carry reads its status again.
            await withTaskGroup(of: Void.self) { group in
                for device in allDevices where device.isSubscribed {
                    group.addTask {
                        await device.attachCloud()
                        await device.resyncThroughCloud()
                    }
                }
            }
            eventBroadcast.yield(.cloudConnected)
        case .disconnected(let error):
            for device in allDevices { device.apply(.cloudLink(up: false)) }
            eventBroadcast.yield(.cloudDisconnected(error))
        case .status(let did, let attrs, let sn):
            device(did: did)?.cloudReported(attrs, sn: sn)
        case .online(let did, let online):
            device(did: did)?.cloudPresenceChanged(online: online)
        case .bindingChanged:
            _ = try? await refreshBindings()
        case .raw(let did, let bytes):
            device(did: did)?.cloudSentBinary(bytes)
        case .event(let did, let identifier, let type, let values):
            device(did: did)?.emit(.modelEvent(DeviceModelEvent(identifier: identifier, type: type, values: values)))
        case .userTopic(let did, let topic, let payload):
            device(did: did)?.emit(.topicMessage(DeviceTopicMessage(topic: topic, payload: payload)))
        case .message(let message):
            eventBroadcast.yield(.message(message))
            // An accepted invitation or a transfer may have changed the user's devices.
            if let event = message.data["event"]?.stringValue, ["accepted", "revoked", "transferred"].contains(event) { _ = try? await refreshBindings() }
        case .pairing(let status):
            // A bound device joins the list before the app hears of it.
            if status.state == .bound { _ = try? await refreshBindings() }
            eventBroadcast.yield(.pairing(status))
        case .schedules(let change):
            eventBroadcast.yield(.schedules(change))
        case .upgrade(let upgrade):
            device(did: upgrade.did)?.emit(.firmwareUpgrade(upgrade))
        case .writeFailed(let did, let sn, let error):
            device(did: did)?.cloudWriteFailed(sn: sn, error: error)
        }
    }
}
