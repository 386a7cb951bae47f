import Logging
import NIOCore
import TetherAlink
import TetherCore
import TetherMQTT

/// What devices send up: property posts, events, answers to commands, transparent bytes.
extension DeviceGateway {
    typealias Attribute = DeviceAuthenticator.Attribute

    func processUplinks() async {
        for await uplink in uplinkStream {
            await process(uplink)
        }
    }

    private func process(_ uplink: Uplink) async {
        let principal = uplink.publisher
        guard let topic = AlinkDeviceTopic(parsing: uplink.message.topic),
              let did = principal.attributes[Attribute.did],
              let productKey = principal.attributes[Attribute.productKey]
        else { return }
        let bytes = uplink.message.payload.readableBytesView
        do {
            switch topic.topic {
            case .propertyPost:
                try await propertyPost(AlinkRequest(parsing: bytes), did: did, productKey: productKey, topic: topic, to: principal)
            case .eventPost(let identifier):
                try await eventPost(AlinkRequest(parsing: bytes), identifier: identifier, did: did, productKey: productKey, topic: topic, to: principal)
            case .propertySetReply, .serviceReply:
                try await commandAnswered(AlinkReply(parsing: bytes), did: did, topic: topic.topic)
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

    /// Checks each property against the model, keeps the good ones (latest status, log, apps),
    /// and answers with 200, or 460 naming the refused ones.
    private func propertyPost(_ request: AlinkRequest, did: String, productKey: String, topic: AlinkDeviceTopic, to principal: MQTTPrincipal) async throws {
        let model = try await catalogue.model(productKey)
        let check = model.checkAlinkProperties(request.params)
        let now = Clock.unixMilliseconds()
        var reply = request.reply()
        do {
            if !check.accepted.isEmpty {
                let attrs = model.appJSON(check.accepted)
                let status = try await history.mergeStatus(did: did, attrs: attrs, atMs: now)
                try await history.log(did: did, kind: .deviceToApp, atMs: now, body: .object(attrs))
                await bus.publish(.status(did: did, attrs: .object(attrs), atMs: now))
                try await markApplied(did: did, status: status, reportedMs: now)
            }
            if !check.rejected.isEmpty {
                var refused = JSONObject()
                for (name, error) in check.rejected { refused[name] = .string(error.message) }
                reply = request.reply(
                    code: AlinkCodes.invalidParameter, data: .object(refused),
                    message: "\(check.rejected.count) of \(check.rejected.count + check.accepted.count) properties refused: " + check.rejected.map(\.name).joined(separator: ", ")
                )
            }
        } catch {
            reply = request.reply(code: AlinkCodes.serverError, message: "the report could not be stored")
            answer(reply, topic: topic, to: principal)
            throw error
        }
        answer(reply, topic: topic, to: principal)
    }

    private func eventPost(_ request: AlinkRequest, identifier: String, did: String, productKey: String, topic: AlinkDeviceTopic, to principal: MQTTPrincipal) async throws {
        let model = try await catalogue.model(productKey)
        guard let event = model.events.first(where: { $0.identifier == identifier }) else {
            answer(request.reply(code: AlinkCodes.invalidParameter, message: "product \(productKey) has no event \(identifier)"), topic: topic, to: principal)
            return
        }
        let values = request.params["value"] ?? request.params
        let now = Clock.unixMilliseconds()
        do {
            try await history.log(did: did, kind: .deviceToApp, atMs: now, body: ["event": .string(identifier), "type": .string(event.type.rawValue), "values": values])
        } catch {
            answer(request.reply(code: AlinkCodes.serverError, message: "the event could not be stored"), topic: topic, to: principal)
            throw error
        }
        await bus.publish(.event(did: did, identifier: identifier, kind: event.type.rawValue, values: values, atMs: now))
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
        guard let record = try await ledger.move(id, did: did, from: [.accepted, .sent], to: state, code: reply.code, message: reply.message, body: body) else { return }
        await bus.publish(.command(record.update))
        // A device may report the new values before it acknowledges them.
        if state == .acknowledged, record.kind == .attrs, let status = try await history.status(did: did), status.updatedMs >= (record.sentMs ?? .max) {
            try await markApplied(did: did, status: status.attrs, reportedMs: status.updatedMs)
        }
    }

    /// Commands whose every written value the device now reports are applied.
    private func markApplied(did: String, status: JSONObject, reportedMs: Int64) async throws {
        for command in try await ledger.awaitingApplication(did: did) where (command.sentMs ?? .max) <= reportedMs {
            let written = command.attrs
            guard written.keys.allSatisfy({ status[$0] == written[$0] }) else { continue }
            if let applied = try await ledger.move(command.id, from: [.sent, .acknowledged], to: .applied) {
                await bus.publish(.command(applied.update))
            }
        }
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
    static let serverError = 500
}
