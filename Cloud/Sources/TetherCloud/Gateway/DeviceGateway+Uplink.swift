import Logging
import NIOCore
import TetherAlink
import TetherCore
import TetherMQTT

/// What devices send up: property posts, events, answers to commands and RRPC calls,
/// transparent bytes.
extension DeviceGateway {
    /// Takes what devices sent in batches; runs of property posts are stored in one transaction
    /// (one commit for many posts), everything else one by one, all in arrival order.
    func processUplinks() async {
        while let batch = await uplinks.next(maximum: 512) {
            var index = 0
            while index < batch.count {
                guard Self.isPropertyPost(batch[index]) else {
                    await process(batch[index])
                    index += 1
                    continue
                }
                var end = index + 1
                while end < batch.count, Self.isPropertyPost(batch[end]) { end += 1 }
                await propertyPosts(batch[index..<end])
                index = end
            }
        }
    }

    private static func isPropertyPost(_ uplink: Uplink) -> Bool {
        uplink.message.topic.hasSuffix("/thing/event/property/post") && uplink.message.topic.hasPrefix("/sys/")
    }

    /// A run of property posts: each checked against its model, the good points of all stored
    /// in one transaction, then each pushed to apps and answered (200, or 460 naming the
    /// refused points).
    private func propertyPosts(_ run: ArraySlice<Uplink>) async {
        struct Post {
            var request: AlinkRequest
            var did: String
            var topic: AlinkDeviceTopic
            var principal: MQTTPrincipal
            var accepted: JSONObject
            var rejected: [(name: String, error: TetherError)]
        }
        var posts: [Post] = []
        for uplink in run {
            guard let topic = AlinkDeviceTopic(parsing: uplink.message.topic), let (did, productKey) = owner(of: topic, publisher: uplink.publisher) else {
                continue
            }
            let request: AlinkRequest
            do {
                request = try AlinkRequest(parsing: uplink.message.payload.readableBytesView)
            } catch {
                // Nothing to answer without a request id; the device and its connection carry on.
                metrics.uplink(processed: false)
                logger.info("malformed device message", metadata: ["did": "\(did)", "mqtt.topic": "\(uplink.message.topic)", "error": "\(error.message)"])
                continue
            }
            do {
                let model = try await catalogue.model(productKey)
                let check = model.checkAlinkProperties(request.params)
                posts.append(
                    Post(
                        request: request, did: did, topic: topic, principal: uplink.publisher, accepted: model.appJSON(check.accepted), rejected: check.rejected
                    ))
            } catch {
                logger.error("device message could not be processed", metadata: ["did": "\(did)", "error": "\(error)"])
                answer(request.reply(code: AlinkCodes.serverError, message: "the report could not be processed"), topic: topic, to: uplink.publisher)
            }
        }
        guard !posts.isEmpty else { return }
        let now = Clock.unixMilliseconds()
        var ruleEvents: [(did: String, kind: RuleStore.Event.Kind, body: JSONValue)] = []
        if let rules {
            for post in posts where !post.accepted.isEmpty {
                if await rules.watches(post.did) { ruleEvents.append((post.did, .data, .object(post.accepted))) }
            }
        }
        let reports = posts.filter { !$0.accepted.isEmpty }.map { (did: $0.did, attrs: $0.accepted) }
        var ruleEventIDs: [Int64] = []
        var applied: [CommandRecord] = []
        let (ledger, delivery, logger) = (self.ledger, self.delivery, self.logger)
        do {
            // The events rules watch, and the commands the reports show applied, go in with
            // the reports: all in one commit. Devices in order, so that concurrent
            // transactions lock ledger rows in one order.
            (_, (ruleEventIDs, applied)) = try await history.storeReports(reports, atMs: now) { [ruleEvents] transaction, statuses in
                let ids = try await RuleStore(transaction).enqueue(ruleEvents, atMs: now)
                var applied: [CommandRecord] = []
                for did in delivery.awaitingApplication.watched(among: statuses.keys.sorted()) {
                    applied += try await Self.markApplied(
                        did: did, status: statuses[did] ?? [:], reportedMs: now, ledger: ledger, delivery: delivery, on: transaction)
                }
                return (ids, applied)
            }
        } catch {
            // Recording what the reports show applied must not cost the reports (one device's
            // ledger cannot fail a batch of hundreds): they are stored without it, and the
            // commands move after, each device on its own.
            logger.warning("reports and what they show applied could not be stored together; storing the reports alone", metadata: ["error": "\(error)"])
            do {
                let statuses: [String: JSONObject]
                (statuses, ruleEventIDs) = try await history.storeReports(reports, atMs: now) { [ruleEvents] transaction, _ in
                    try await RuleStore(transaction).enqueue(ruleEvents, atMs: now)
                }
                for did in delivery.awaitingApplication.watched(among: statuses.keys.sorted()) {
                    do {
                        applied += try await Self.markApplied(
                            did: did, status: statuses[did] ?? [:], reportedMs: now, ledger: ledger, delivery: delivery, on: ledger.database)
                    } catch {
                        logger.error("applied commands could not be recorded", metadata: ["did": "\(did)", "error": "\(error)"])
                    }
                }
            } catch {
                logger.error("device reports could not be stored", metadata: ["count": "\(posts.count)", "error": "\(error)"])
                for post in posts {
                    answer(post.request.reply(code: AlinkCodes.serverError, message: "the report could not be stored"), topic: post.topic, to: post.principal)
                }
                return
            }
        }
        let stored = posts.filter { !$0.accepted.isEmpty }
        await bus.publish(stored.map { .status(did: $0.did, attrs: .object($0.accepted), atMs: now) })
        await forwarding.forward(
            stored.map {
                ForwardedMessage(
                    kind: .property, productKey: $0.topic.device.productKey, deviceName: $0.topic.device.deviceName, did: $0.did, topic: $0.topic.name,
                    payload: .object($0.accepted), atMs: now)
            })
        for post in posts {
            var reply = post.request.reply()
            if !post.rejected.isEmpty {
                var refused = JSONObject()
                for (name, error) in post.rejected { refused[name] = .string(error.message) }
                reply = post.request.reply(
                    code: AlinkCodes.invalidParameter, data: .object(refused),
                    message: "\(post.rejected.count) of \(post.rejected.count + post.accepted.count) properties refused: "
                        + post.rejected.map(\.name).joined(separator: ", ")
                )
            }
            answer(reply, topic: post.topic, to: post.principal)
            metrics.uplink(processed: true)
        }
        await bus.publish(applied.map { .command($0.update) })
        if let rules, !ruleEventIDs.isEmpty { await rules.process(ids: ruleEventIDs) }
    }

    private func process(_ uplink: Uplink) async {
        let principal = uplink.publisher
        guard let topic = AlinkDeviceTopic(parsing: uplink.message.topic), let (did, productKey) = owner(of: topic, publisher: principal) else { return }
        let bytes = uplink.message.payload.readableBytesView
        do {
            // A custom RRPC answer comes back on the request's own topic.
            if let messageID = topic.rrpcMessageID {
                try await rrpc.answered(messageID: messageID, did: did, payload: Array(bytes))
                metrics.uplink(processed: true)
                return
            }
            switch topic.topic {
            case .rrpcResponse(let messageID):
                try await rrpc.answered(messageID: messageID, did: did, payload: Array(bytes))
            case .eventPost(let identifier):
                try await eventPost(AlinkRequest(parsing: bytes), identifier: identifier, did: did, productKey: productKey, topic: topic, to: principal)
            case .propertySetReply, .serviceReply:
                try await commandAnswered(AlinkReply(parsing: bytes), did: did, topic: topic.topic)
            case .system(let path) where path.hasPrefix("thing/topo/") && !path.hasSuffix("_reply"):
                try await gatewayRequest(bytes, topic: topic, did: did, principal: principal)
            case .session(let path) where !path.hasSuffix("_reply"):
                try await gatewayRequest(bytes, topic: topic, did: did, principal: principal)
            case .pairingActivate:
                answer(await pairing.handle(try AlinkRequest(parsing: bytes), did: did), topic: topic, to: principal)
            case .lanGrantKeyGet:
                answer(try await lanGrants.answer(AlinkRequest(parsing: bytes)), topic: topic, to: principal)
            case .system(let path) where path == DeviceAccountLink.bindPath || path == DeviceAccountLink.unbindPath:
                answer(await accountLink.handle(try AlinkRequest(parsing: bytes), path: path, did: did), topic: topic, to: principal)
            case .user(let path) where topic.rrpcMessageID == nil:
                // Allowed by its class (the broker checked), and routed by the broker to the
                // device's own subscriptions; the apps subscribed to the device get it too.
                let now = Clock.unixMilliseconds()
                let hex = Array(bytes).tetherHex
                try await history.log(did: did, kind: .deviceToApp, atMs: now, body: ["topic": .string(path)], payloadHex: hex, source: "user_topic")
                await bus.publish(.userMessage(did: did, topic: uplink.message.topic, payloadHex: hex, atMs: now))
                await forwarding.forward([
                    ForwardedMessage(
                        kind: .user, productKey: productKey, deviceName: topic.device.deviceName, did: did, topic: uplink.message.topic, bytes: Array(bytes),
                        atMs: now)
                ])
            case .firmwareInform:
                try await firmware.inform(bytes, did: did)
            case .firmwareProgress:
                try await firmware.progress(bytes, did: did)
            case .firmwareGet:
                answer(try await firmware.query(bytes, did: did), topic: topic, to: principal)
            case .shadowUpdate:
                await shadows.handle(bytes, did: did, device: topic.device, clientID: principal.clientID)
            case .upRaw:
                let now = Clock.unixMilliseconds()
                let hex = Array(bytes).tetherHex
                try await history.log(did: did, kind: .deviceToApp, atMs: now, body: ["raw": .string(hex)], payloadHex: hex)
                await bus.publish(.raw(did: did, hex: hex, atMs: now))
            default:
                logger.debug("device topic not handled", metadata: ["did": "\(did)", "mqtt.topic": "\(uplink.message.topic)"])
                return
            }
            metrics.uplink(processed: true)
        } catch let error as TetherError where error.code == .malformedPayload {
            // Nothing to answer without a request id; the device and its connection carry on.
            metrics.uplink(processed: false)
            logger.info("malformed device message", metadata: ["did": "\(did)", "mqtt.topic": "\(uplink.message.topic)", "error": "\(error.message)"])
        } catch {
            logger.error("device message could not be processed", metadata: ["did": "\(did)", "mqtt.topic": "\(uplink.message.topic)", "error": "\(error)"])
        }
    }

    /// The device a message is about: the publisher itself, or a sub-device it carries.
    func owner(of topic: AlinkDeviceTopic, publisher: MQTTPrincipal) -> (did: String, productKey: String)? {
        guard let connection = DevicePrincipal(publisher) else { return nil }
        if topic.device == connection.device { return (connection.did, connection.device.productKey) }
        return subDevices.did(of: topic.device, via: publisher.clientID).map { ($0, topic.device.productKey) }
    }

    /// A gateway's own topology and session requests; a sub-device cannot make them.
    private func gatewayRequest(_ bytes: some Collection<UInt8>, topic: AlinkDeviceTopic, did: String, principal: MQTTPrincipal) async throws {
        guard topic.device == DevicePrincipal(principal)?.device else { return }
        let request = try AlinkRequest(parsing: bytes)
        let gateway = DeviceTopologyLink.Gateway(did: did, device: topic.device, clientID: principal.clientID)
        answer(await topology.handle(request, topic: topic.topic, from: gateway), topic: topic, to: principal)
    }

    private func eventPost(
        _ request: AlinkRequest, identifier: String, did: String, productKey: String, topic: AlinkDeviceTopic, to principal: MQTTPrincipal
    ) async throws {
        let model: ThingModel
        do {
            model = try await catalogue.model(productKey)
        } catch {
            answer(request.reply(code: AlinkCodes.serverError, message: "the event could not be processed"), topic: topic, to: principal)
            throw error
        }
        guard let event = model.events.first(where: { $0.identifier == identifier }) else {
            answer(request.reply(code: AlinkCodes.invalidParameter, message: "product \(productKey) has no event \(identifier)"), topic: topic, to: principal)
            return
        }
        let values = request.params["value"] ?? request.params
        let now = Clock.unixMilliseconds()
        do {
            try await history.log(
                did: did, kind: .deviceToApp, atMs: now, body: ["event": .string(identifier), "type": .string(event.type.rawValue), "values": values])
        } catch {
            answer(request.reply(code: AlinkCodes.serverError, message: "the event could not be stored"), topic: topic, to: principal)
            throw error
        }
        await bus.publish(.event(did: did, identifier: identifier, kind: event.type.rawValue, values: values, atMs: now))
        await notices.event(did: did, identifier: identifier, type: event.type.rawValue, values: values)
        await rules?.record(did: did, .event, body: ["identifier": .string(identifier), "type": .string(event.type.rawValue)])
        await forwarding.forward([
            ForwardedMessage(
                kind: .event, productKey: productKey, deviceName: topic.device.deviceName, did: did, topic: topic.name,
                payload: ["identifier": .string(identifier), "type": .string(event.type.rawValue), "values": values], atMs: now)
        ])
        answer(request.reply(), topic: topic, to: principal)
    }

    /// `set_reply` and service replies: the ledger entry whose id the reply carries moves to
    /// acknowledged or rejected. Only the device the command was for can answer it.
    private func commandAnswered(_ reply: AlinkReply, did: String, topic: AlinkTopic) async throws {
        guard let id = Int64(reply.id) else { return }
        let state: CommandState = reply.isSuccess ? .acknowledged : .rejected
        var body: JSONValue?
        if case .serviceReply = topic, reply.data != .object([:]), let command = try await ledger.find(id), command.kind == .service {
            var object = command.body.objectValue ?? [:]
            object["output"] = reply.data
            body = .object(object)
        }
        // A statement of its own, not a transaction: a transaction's BEGIN and COMMIT cost more
        // than they would save here (measured), and what follows happens rarely.
        guard let record = try await ledger.move(id, did: did, from: [.accepted, .sent], to: state, code: reply.code, message: reply.message, body: body) else {
            return
        }
        await bus.publish(.command(record.update))
        // A device may report the new values before it acknowledges them, also to another node
        // or before this node restarted (which knew nothing of the write): its stored status says.
        if state == .acknowledged, record.kind == .attrs, let status = try await history.status(did: did), status.updatedMs >= (record.sentMs ?? .max) {
            let applied = try await Self.markApplied(
                did: did, status: status.attrs, reportedMs: status.updatedMs, ledger: ledger, delivery: delivery, on: ledger.database)
            await bus.publish(applied.map { .command($0.update) })
        }
    }

    /// Moves to applied, on `executor`, the commands whose every written value the device now
    /// reports; what moved. A device with nothing left to apply leaves `delivery`'s watch.
    private static func markApplied(
        did: String, status: JSONObject, reportedMs: Int64, ledger: CommandLedger, delivery: CommandDelivery, on executor: any SQLExecutor
    ) async throws(StorageError) -> [CommandRecord] {
        let stamp = delivery.awaitingApplication.stamp(of: did)
        let awaiting = try await ledger.awaitingApplication(did: did, on: executor)
        if awaiting.isEmpty { delivery.awaitingApplication.leave(did, since: stamp) }
        var applied: [CommandRecord] = []
        for command in awaiting where (command.sentMs ?? .max) <= reportedMs {
            let written = command.attrs
            guard written.keys.allSatisfy({ status[$0] == written[$0] }) else { continue }
            if let record = try await ledger.move(command.id, from: [.sent, .acknowledged], to: .applied, on: executor) { applied.append(record) }
        }
        return applied
    }

    private func answer(_ reply: AlinkReply, topic: AlinkDeviceTopic, to principal: MQTTPrincipal) {
        guard let replyTopic = topic.topic.reply else { return }
        var destination = topic
        destination.topic = replyTopic
        broker.send(MQTTMessage(topic: destination.name, payload: ByteBuffer(bytes: reply.bytes), qos: .atLeastOnce), toClientID: principal.clientID)
    }
}

/// The Alink platform's reply codes Tether uses.
enum AlinkCodes {
    static let invalidParameter = 460
    static let busy = 429
    static let serverError = 500
}
