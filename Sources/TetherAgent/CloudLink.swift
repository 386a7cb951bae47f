public import Logging
import NIOCore
public import TetherAlink
import TetherCore
import TetherGizwitsLAN
import TetherMQTT

/// A virtual device's connection to a Tether cloud's gateway (Alink over MQTT): it reports its
/// whole status when it connects and every change after that (whoever made it: the simulation,
/// a LAN app, the cloud), applies property sets and answers service calls. The device's LAN side
/// keeps working at the same time: one device, two paths.
public struct CloudLink: Sendable {
    /// The device whose status is reported to the cloud and which the cloud's requests change.
    public let device: VirtualDevice
    /// The gateway to connect to and the Alink identity and secret the device signs in with.
    public let configuration: AlinkDeviceConfiguration
    /// What goes wrong in the device's firmware upgrades, on purpose.
    public let firmwareFaults: FirmwareFaults
    let logger: Logger

    /// A link for `device`; nothing connects until ``run()``. Its log lines carry the Alink device as
    /// `alink.device` metadata.
    public init(device: VirtualDevice, configuration: AlinkDeviceConfiguration, firmwareFaults: FirmwareFaults = FirmwareFaults(), logger: Logger) {
        self.device = device
        self.configuration = configuration
        self.firmwareFaults = firmwareFaults
        var logger = logger
        logger[metadataKey: "alink.device"] = "\(configuration.device)"
        self.logger = logger
    }

    /// Connects and serves until cancelled. A first connection that fails is retried with
    /// backoff; later drops are repaired by the MQTT client itself.
    public func run() async {
        // A device being onboarded has no network yet: it reaches the cloud once it has joined one.
        do {
            // Subscribed before looking, so that credentials arriving in between are not missed.
            let events = device.events.subscribe()
            if device.isOnboarding {
                for await event in events {
                    if case .configured = event { break }
                }
            }
        }
        var attempt = 0
        while !Task.isCancelled {
            do {
                try await AlinkDeviceClient.withClient(configuration: configuration, logger: logger) { client in
                    attempt = 0
                    device.events.yield(.cloudConnected)
                    try await serve(client)
                }
            } catch _ where Task.isCancelled {
                return
            } catch {
                logger.warning("cannot reach the cloud", metadata: ["error": "\(error)"])
                device.events.yield(.cloudUnreachable("\(error)"))
            }
            // The MQTT client's own policy spaces first connections too (one policy for every link).
            try? await Task.sleep(for: (configuration.reconnect ?? ReconnectPolicy()).delay(attempt: attempt))
            attempt += 1
        }
    }

    private func serve(_ client: AlinkDeviceClient) async throws {
        let downlinks = client.downlinks()
        let changes = device.changes.subscribe()
        let connections = client.mqtt.events()
        // The snapshot is taken before the first report waits for its reply: a change made
        // meanwhile differs from it and is reported.
        let initial = device.status.allValues
        try await post(initial, client)
        try await client.reportFirmwareVersion(device.firmwareVersion)
        // One upgrade at a time, beside the device's other work: a download takes a while.
        let (notices, offered) = AsyncStream.makeStream(of: FirmwareUpgradeNotice.self, bufferingPolicy: .bufferingNewest(1))
        let updater = FirmwareUpdater(device: device, faults: firmwareFaults, downloader: FirmwareDownloader(logger: logger), logger: logger)
        // Each task below runs for the connection's life; the first to end ends the link.
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                var reported = initial
                for await status in changes {
                    let now = status.allValues
                    let changed = now.filter { reported[$0.key] != $0.value }
                    reported = now
                    if !changed.isEmpty { try? await post(changed, client) }
                }
            }
            group.addTask {
                // The keys and the token go beside the device's other work, which must not wait
                // for their answers.
                async let keys: Void = fetchGrantKeys(client)
                await presentPairingToken(client)
                await keys
                // After a reconnect the cloud may have missed changes: report everything again.
                for await event in connections {
                    guard case .connected(_) = event else { continue }
                    try? await post(device.status.allValues, client)
                    try? await client.reportFirmwareVersion(device.firmwareVersion)
                    async let keys: Void = fetchGrantKeys(client)
                    await presentPairingToken(client)
                    await keys
                }
            }
            group.addTask {
                for await downlink in downlinks {
                    guard case .firmwareUpgrade = downlink.topic.topic else {
                        await handle(downlink, client)
                        continue
                    }
                    do {
                        if let notice = try FirmwareUpgradeNotice(parsing: downlink.payload.readableBytesView) { offered.yield(notice) }
                    } catch {
                        logger.warning("unreadable upgrade notice", metadata: ["error": "\(error)"])
                    }
                }
            }
            group.addTask {
                for await notice in notices where notice.version != device.firmwareVersion {
                    await updater.upgrade(notice, client: client)
                }
            }
            try await group.next()
            group.cancelAll()
        }
    }

    /// The cloud's grant keys, kept by the device from then on (its activation: README, "LAN
    /// grants"). A query that goes unanswered (a busy cloud, a lost reply) is asked again, 1 s
    /// then doubling, six times in all; a cloud that refuses it (no such extension) leaves the
    /// device on passcodes, until the next connection asks again.
    private func fetchGrantKeys(_ client: AlinkDeviceClient) async {
        for attempt in 0..<6 {
            do throws(TetherError) {
                var trusted: [LANGrantKey] = []
                // The cloud lists its keys newest first; the device keeps them oldest first.
                for key in try await client.lanGrantKeys().keys.reversed() {
                    guard let usable = LANGrantKey(base64: key.publicKey), usable.keyID == key.keyID else {
                        logger.warning("the cloud sent an unusable grant key", metadata: ["kid": "\(key.keyID)"])
                        continue
                    }
                    trusted.append(usable)
                }
                device.lanGrants.replace(with: trusted)
                return
            } catch  where error.code == .cloudRefused {
                logger.info("no LAN grant keys from the cloud; passcodes keep logging in", metadata: ["error": "\(error)"])
                return
            } catch {
                logger.info("the LAN grant-key query went unanswered; asking again", metadata: ["error": "\(error)"])
            }
            do { try await Task.sleep(for: .seconds(1 << attempt)) } catch { return }
        }
    }

    /// The pairing token from onboarding, presented until the cloud answers it (a lost answer is
    /// asked again on the next connection; the cloud tells the same device the same outcome).
    private func presentPairingToken(_ client: AlinkDeviceClient) async {
        // Until the cloud answers it for good: a busy or failing cloud (9041, 5xx) and an
        // unanswered request (a lost publish, a reply timeout) are tried again, 1 s then longer.
        var attempt = 0
        while let token = device.pendingPairingToken, !Task.isCancelled {
            do throws(TetherError) {
                let reply = try await client.activate(PairingActivation(token: token))
                logger.info("the cloud answered the pairing token", metadata: ["code": "\(reply.code)", "message": "\(reply.message)"])
                if !(500..<600).contains(reply.code), reply.code != 9041 {
                    device.pairingTokenAnswered(code: reply.code, message: reply.message)
                    return
                }
            } catch {
                logger.warning("the pairing token went unanswered; presenting it again", metadata: ["error": "\(error)"])
            }
            do { try await Task.sleep(for: .seconds(1 << min(attempt, 5))) } catch { return }
            attempt += 1
        }
    }

    private func post(_ values: [String: DataValue], _ client: AlinkDeviceClient) async throws {
        let reply = try await client.postProperties(device.model.alinkParams(values))
        if !reply.isSuccess {
            logger.warning("the cloud refused a report", metadata: ["code": "\(reply.code)", "message": "\(reply.message)"])
        }
    }

    private func handle(_ downlink: AlinkDownlink, _ client: AlinkDeviceClient) async {
        guard let request = downlink.request else { return }
        let reply: AlinkReply
        /// Values set to what they already were: no change gets reported, so they are confirmed
        /// after the reply (the app waits for the report that shows its write applied).
        var unchanged: [String: DataValue] = [:]
        switch downlink.topic.topic {
        case .propertySet:
            let check = device.model.checkAlinkProperties(request.params)
            if !check.accepted.isEmpty {
                let before = device.status.allValues
                device.applyControl(check.accepted, from: "cloud")
                if device.status.allValues == before { unchanged = before.filter { check.accepted[$0.key] != nil } }
            }
            if check.rejected.isEmpty {
                reply = request.reply()
            } else {
                var refused = JSONObject()
                for (name, error) in check.rejected { refused[name] = .string(error.message) }
                reply = request.reply(code: 460, data: .object(refused), message: "refused: " + check.rejected.map(\.name).joined(separator: ", "))
            }
        case .propertyGet:
            reply = request.reply(data: device.model.alinkParams(device.status.allValues))
        case .service(let identifier):
            if device.model.services.contains(where: { $0.identifier == identifier }) {
                device.events.yield(.serviceCalled(identifier, request.params))
                reply = request.reply()
            } else {
                reply = request.reply(code: 460, message: "no service \(identifier)")
            }
        default:
            return
        }
        do {
            try await client.reply(reply, to: downlink)
        } catch {
            logger.warning("cannot answer the cloud", metadata: ["error": "\(error)"])
        }
        if !unchanged.isEmpty { try? await post(unchanged, client) }
    }
}
