import Logging
import TetherCloudProtocol
import TetherCore
import TetherTuyaLAN

extension TetherClient {
    /// A Tuya device at a known address, in the same list as every other device and controlled
    /// the same way: `subscribe`, `write(["switch": true])`, `getStatus`, `events()`. The same
    /// device id gives the same object (one heard announcing itself included).
    ///
    /// - Parameters:
    ///   - id: the device id (`gwId`, 20 or 22 characters): the device's ``Device/id`` and ``Device/did``.
    ///   - localKey: its 16-byte local key (kept in memory only; never logged).
    ///   - model: the product model whose data-point ids are the device's DP ids; when nil, the
    ///     only model in the configuration if there is exactly one.
    public func tuyaDevice(
        host: String, port: Int = 6668, id: String, localKey: TuyaLocalKey, version: TuyaVersion, model: ThingModel? = nil
    ) throws(TetherError) -> Device {
        _ = try TuyaDeviceAddress(host: host, port: port, deviceID: id, localKey: localKey.bytes, version: version)
        let model = model ?? (configuration.products.count == 1 ? configuration.products[0] : nil)
        let endpoint = LANEndpoint(host: host, port: port)
        let link = TuyaLink(deviceID: id, version: version, localKey: localKey)
        let device = register(id: id) {
            makeDevice(
                id: id, did: id, productKey: model?.productKey ?? "", mac: nil, endpoint: endpoint, onLAN: true, model: model, tuya: link)
        }
        // Known already (heard announcing itself): what the app says wins.
        try device.configureTuya(link, endpoint: endpoint, model: model)
        return device
    }

    /// A Tuya device registered in the Tether cloud, for its owner: its Tuya id, version and local
    /// key come from the cloud (`GET /app/devices/{did}/tuya_local_key`), its address from `host`
    /// or, when nil, from its announcements (``TuyaConfiguration/listensForAnnouncements``). The
    /// device is the one the bindings list shows for `did`, controlled on the LAN.
    ///
    /// - Throws: `TetherError.Code.cloudRefused` with 9511 when the user is not the device's
    ///   owner (a local key cannot be revoked, so guests never receive it), 9512 when the cloud
    ///   has no key for it, 9017 when the user is not bound to it.
    public func tuyaDevice(did: String, host: String? = nil, port: Int = 6668, model: ThingModel? = nil) async throws(TetherError) -> Device {
        guard let account else { throw TetherError(.invalidArgument, "the client has no cloud configured") }
        let body = try await account.withSession { session throws(TetherError) in try await account.api.tuyaLocalKey(session, did: did) }
        guard let version = TuyaVersion(rawValue: body.version) else {
            throw TetherError(.unexpectedCloudResponse, "the cloud gave Tuya version \(body.version) for \(did)")
        }
        let key = try TuyaLocalKey(body.localKey)
        let endpoint = host.map { LANEndpoint(host: $0, port: port) }
        let model = model ?? self.model(forProductKey: self.device(did: did)?.productKey ?? "")
        let link = TuyaLink(deviceID: body.tuyaID, version: version, localKey: key, addressFromAnnouncements: host == nil)
        let device = register(id: body.tuyaID, aliases: [did]) {
            makeDevice(
                id: body.tuyaID, did: did, productKey: model?.productKey ?? "", mac: nil, endpoint: endpoint, onLAN: endpoint != nil, model: model, tuya: link)
        }
        // The bindings list may have made the device first, as a cloud device.
        try device.configureTuya(link, endpoint: endpoint, model: model)
        return device
    }

    /// Listens for announcements until cancelled and lists the devices heard; expires those
    /// not heard for the presence timeout.
    func runTuyaDiscovery() async {
        let tuya = configuration.tuya
        do {
            try await TuyaScanner.withAnnouncements(host: tuya.announcementHost, ports: tuya.announcementPorts) { announcements in
                await withTaskGroup(of: Void.self) { group in
                    group.addTask {
                        for await found in announcements { self.record(found) }
                    }
                    group.addTask {
                        while !Task.isCancelled {
                            do { try await Task.sleep(for: .seconds(1)) } catch { return }
                            let now = ContinuousClock.now
                            for device in self.devices where device.lanProtocol == .tuya {
                                device.expirePresence(after: tuya.presenceTimeout, now: now)
                            }
                        }
                    }
                    await group.next()
                    group.cancelAll()
                }
            }
        } catch {
            logger.error("Tuya announcements are not heard", metadata: ["tether.error": "\(error)"])
            eventBroadcast.yield(.error(error))
        }
    }

    func record(_ found: TuyaFoundDevice) {
        let announcement = found.announcement
        let id = announcement.deviceID
        guard !id.isEmpty else { return }
        let version = TuyaVersion(rawValue: announcement.version)
        let endpoint = LANEndpoint(host: found.sourceHost, port: configuration.tuya.tcpPort)
        let productKey = announcement.productKey
        let device = register(id: id) {
            makeDevice(
                id: id, did: id, productKey: productKey, mac: nil, endpoint: endpoint, onLAN: true, model: model(forProductKey: productKey),
                tuya: TuyaLink(
                    deviceID: id, version: version ?? .v33, localKey: configuration.tuya.localKeys[id], addressFromAnnouncements: true,
                    versionFromAnnouncements: true))
        }
        guard device.lanProtocol == .tuya else { return }
        device.heardAnnouncement(productKey: productKey, endpoint: endpoint, version: version)
        fetchModelIfMissing(device)
    }
}
