import Logging
import NIOCore
import TetherAlink
import TetherCore
import TetherMQTT

/// Sends the command ledger's commands to the devices connected to this node, and resumes the
/// ones accepted and never sent.
final class CommandDelivery: Sendable {
    let broker: MQTTBroker
    let connections: DeviceConnections
    let ledger: CommandLedger
    let history: DeviceHistory
    let catalogue: DeviceCatalogue
    let bus: any ClusterBus
    let answerTimeoutMs: Int64
    let firmware: DeviceFirmwareLink
    let logger: Logger
    /// Devices this node sent attrs commands to whose reports may show them applied.
    let awaitingApplication = ApplicationWatch()

    init(
        broker: MQTTBroker, connections: DeviceConnections, ledger: CommandLedger, history: DeviceHistory, catalogue: DeviceCatalogue, bus: any ClusterBus,
        answerTimeoutMs: Int64,
        firmware: DeviceFirmwareLink, logger: Logger
    ) {
        self.firmware = firmware
        self.broker = broker
        self.connections = connections
        self.ledger = ledger
        self.history = history
        self.catalogue = catalogue
        self.bus = bus
        self.answerTimeoutMs = answerTimeoutMs
        self.logger = logger
    }

    /// Sends a command to its device if this node holds the device's connection.
    func send(_ command: CommandRecord) async throws {
        guard let (device, clientID) = try await connections.route(command.did) else { return }
        let identity = try AlinkDeviceIdentity(productKey: device.productKey, deviceName: device.deviceName)
        let message: MQTTMessage
        switch command.kind {
        case .ota:
            try await firmware.offer(command, to: identity, clientID: clientID)
            return
        case .attrs:
            let model = try await catalogue.model(device.productKey)
            let params = model.alinkParams(try model.appWrite(command.attrs))
            let request = AlinkRequest(id: command.alinkID, method: "thing.service.property.set", params: params)
            message = MQTTMessage(
                topic: AlinkDeviceTopic(device: identity, topic: .propertySet).name, payload: ByteBuffer(bytes: request.bytes), qos: .atLeastOnce)
        case .service:
            let identifier = command.body["identifier"]?.stringValue ?? ""
            let request = AlinkRequest(id: command.alinkID, method: "thing.service.\(identifier)", params: command.body["params"] ?? .object([:]))
            message = MQTTMessage(
                topic: AlinkDeviceTopic(device: identity, topic: .service(identifier)).name, payload: ByteBuffer(bytes: request.bytes), qos: .atLeastOnce)
        case .raw:
            let bytes = [UInt8](tetherHex: command.body["raw"]?.stringValue ?? "") ?? []
            message = MQTTMessage(topic: AlinkDeviceTopic(device: identity, topic: .downRaw).name, payload: ByteBuffer(bytes: bytes), qos: .atLeastOnce)
        }
        let from: Set<CommandState> = command.kind == .attrs ? [.accepted, .queued, .sent] : [.accepted, .queued]
        let (ledger, history) = (self.ledger, self.history)
        // The move to sent and its traffic-log row are one commit: an app's write waits for
        // every commit on its way, and each costs an fsync.
        let moved = try await ledger.database.transaction { transaction -> (record: CommandRecord, logID: Int64)? in
            guard let sent = try await ledger.move(command.id, from: from, to: .sent, on: transaction) else { return nil }
            let logID = try await history.log(
                did: command.did, kind: .appToDevice, atMs: sent.sentMs ?? Clock.unixMilliseconds(), body: command.json, uid: command.uid,
                appID: command.appID, source: "client", on: transaction)
            return (sent, logID)
        }
        guard let moved else { return }
        if command.kind == .attrs { awaitingApplication.sent(to: command.did) }
        guard broker.send(message, toClientID: clientID) else {
            // The traffic row goes whatever the ledger says now: this sending did not happen.
            let failed = try await ledger.database.transaction { transaction -> CommandRecord? in
                try await history.removeLog(id: moved.logID, on: transaction)
                return try await ledger.move(
                    command.id, from: [.sent], to: .failed, message: "the device disconnected before the command was sent", on: transaction)
            }
            if let failed { await bus.publish(.command(failed.update)) }
            return
        }
        await bus.publish(.command(moved.record.update))
    }

    /// Devices connected: what waits for them goes now, oldest first. A command that cannot be
    /// sent does not hold up the others (it stays in the ledger, to go when its device comes back).
    func resume(dids: [String]) async throws {
        guard !dids.isEmpty else { return }
        for command in try await ledger.resumable(dids: dids, now: Clock.unixMilliseconds(), answerTimeoutMs: answerTimeoutMs) {
            do {
                try await send(command)
            } catch {
                logger.error("a waiting command could not be sent", metadata: ["did": "\(command.did)", "command": "\(command.id)", "error": "\(error)"])
            }
        }
    }

    /// Commands another node (or this one, before a crash) accepted and never sent: whichever
    /// node holds their device sends them now. A device that connects later gets them then.
    func resumeUnsent() async throws {
        let unsent = try await ledger.unsent(now: Clock.unixMilliseconds(), answerTimeoutMs: answerTimeoutMs)
        guard !unsent.isEmpty else { return }
        logger.notice("resuming commands accepted and not sent", metadata: ["count": "\(unsent.count)"])
        await bus.publish(unsent.map { .deliver(commandID: $0.id, did: $0.did) })
    }
}
