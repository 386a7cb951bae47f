import NIOCore
import Testing
import TetherCore
@testable import TetherMQTT

/// The broker connection's protocol rules, event by event, without a socket, a session or a
/// broker (as postgres-nio tests its `ConnectionStateMachine`).
@Suite("Broker connection state machine")
struct BrokerConnectionStateMachineTests {
    typealias Machine = BrokerConnectionStateMachine

    private let configuration = MQTTBrokerConfiguration()

    private func connect(_ version: MQTTVersion = .v5, clientID: String = "c1", cleanStart: Bool = true, keepAlive: UInt16 = 60, will: MQTTWill? = nil, properties: MQTTProperties = []) -> MQTTConnect {
        MQTTConnect(version: version, clientID: clientID, cleanStart: cleanStart, keepAlive: keepAlive, will: will, properties: properties)
    }

    private func publish(_ topic: String, qos: MQTTQoS = .atMostOnce, retain: Bool = false, properties: MQTTProperties = []) -> MQTTPacket {
        .publish(MQTTPublish(topic: topic, payload: ByteBuffer(string: "x"), qos: qos, retain: retain, packetID: qos == .atMostOnce ? nil : 7, properties: properties))
    }

    private func admit(_ machine: inout Machine, _ connect: MQTTConnect, configuration: MQTTBrokerConfiguration? = nil, willAllowed: Bool = true) -> Machine.AdmissionAction {
        machine.authenticationCompleted(
            .accepted(MQTTPrincipal(clientID: "")), configuration: configuration ?? self.configuration,
            authorizeWill: { _, _ in willAllowed }, newClientID: { "auto-1" }
        )
    }

    /// A machine whose client is connected with `connect`.
    private func connected(_ connect: MQTTConnect) throws -> Machine {
        var machine = Machine()
        #expect(machine.packetReceived(.connect(connect), configuration: configuration) == .authenticate(connect))
        guard case .admit = admit(&machine, connect) else { throw Failure("not admitted") }
        let pending = machine.sessionOpened()
        #expect(pending.isEmpty)
        #expect(machine.isConnected)
        return machine
    }

    private struct Failure: Error { let what: String; init(_ what: String) { self.what = what } }

    // MARK: CONNECT

    @Test func firstPacketMustBeConnect() {
        var machine = Machine()
        let action = machine.packetReceived(.pingreq, configuration: configuration)
        guard case .close(let close) = action else { Issue.record("\(action)"); return }
        #expect(close.connack == nil && close.disconnect == nil)
        #expect(close.finish.wasConnected == false)
        #expect(!machine.isOpen)
        // Nothing after the end is acted on, and the end is reported once.
        #expect(machine.packetReceived(.connect(connect()), configuration: configuration) == .none)
        #expect(machine.channelInactive() == nil)
    }

    @Test func enhancedAuthenticationIsRefusedWithItsReasonCode() {
        var machine = Machine()
        let action = machine.packetReceived(.connect(connect(properties: [.authenticationMethod("SCRAM-SHA-1")])), configuration: configuration)
        guard case .close(let close) = action else { Issue.record("\(action)"); return }
        #expect(close.connack == .badAuthenticationMethod)
        #expect(close.finish.reason == .closedByBroker)
    }

    @Test func packetsBeforeConnackAreHeldInOrderAndBounded() throws {
        var machine = Machine()
        _ = machine.packetReceived(.connect(connect()), configuration: configuration)
        let held: [MQTTPacket] = [publish("a"), .subscribe(MQTTSubscribe(packetID: 1, subscriptions: [MQTTTopicSubscription(filter: "a")])), publish("b")]
        for packet in held { #expect(machine.packetReceived(packet, configuration: configuration) == .none) }
        guard case .admit = admit(&machine, connect()) else { Issue.record("not admitted"); return }
        #expect(machine.sessionOpened() == held)
        #expect(machine.sessionOpened().isEmpty)

        var flooded = Machine()
        _ = flooded.packetReceived(.connect(connect()), configuration: configuration)
        for _ in 0..<Machine.maximumPendingBeforeConnack {
            #expect(flooded.packetReceived(.pingreq, configuration: configuration) == .none)
        }
        let action = flooded.packetReceived(.pingreq, configuration: configuration)
        guard case .close(let close) = action else { Issue.record("\(action)"); return }
        #expect(close.finish.reason == .protocolError)
        // Not connected yet: no DISCONNECT, and no end reported for a client never admitted.
        #expect(close.disconnect == nil)
        #expect(close.finish.wasConnected == false)
    }

    @Test func secondConnectIsAProtocolError() throws {
        var authenticating = Machine()
        _ = authenticating.packetReceived(.connect(connect()), configuration: configuration)
        guard case .close(let early) = authenticating.packetReceived(.connect(connect()), configuration: configuration) else { Issue.record("kept"); return }
        #expect(early.finish.reason == .protocolError)

        var machine = try connected(connect())
        guard case .close(let close) = machine.packetReceived(.connect(connect()), configuration: configuration) else { Issue.record("kept"); return }
        #expect(close.disconnect == .protocolError)
        #expect(close.finish == Machine.Finish(wasConnected: true, will: nil, reason: .protocolError))
    }

    @Test func serverPacketsAndAuthFromAClientAreProtocolErrors() throws {
        let packets: [MQTTPacket] = [.connack(MQTTConnAck()), .suback(MQTTSubAck(packetID: 1, reasonCodes: [])), .pingresp, .auth(MQTTReasonPacket())]
        for packet in packets {
            var machine = try connected(connect())
            guard case .close(let close) = machine.packetReceived(packet, configuration: configuration) else { Issue.record("\(packet.name) kept"); continue }
            #expect(close.finish.reason == .protocolError)
        }
    }

    @Test func unsupportedVersionBeforeConnectIsAnsweredThenClosed() throws {
        var machine = Machine()
        let closeAnswer = machine.decodingFailed(MQTTError(.unsupportedProtocolVersion, "level 9"))
        let close = try #require(closeAnswer)
        #expect(close.connack == .unsupportedProtocolVersion)
        #expect(close.disconnect == nil)

        var connectedMachine = try connected(connect())
        let malformedAnswer = connectedMachine.decodingFailed(.malformed("bad length"))
        let malformed = try #require(malformedAnswer)
        #expect(malformed.connack == nil)
        #expect(malformed.disconnect == .malformedPacket)
        #expect(malformed.finish.reason == .protocolError)
        #expect(connectedMachine.decodingFailed(.malformed("again")) == nil)
    }

    // MARK: Admission

    @Test func refusedAuthenticationClosesWithTheHooksCode() {
        var machine = Machine()
        _ = machine.packetReceived(.connect(connect()), configuration: configuration)
        let action = machine.authenticationCompleted(.refused(.badUserNameOrPassword), configuration: configuration, authorizeWill: { _, _ in true }, newClientID: { "x" })
        guard case .close(let close) = action else { Issue.record("\(action)"); return }
        #expect(close.connack == .badUserNameOrPassword)
        #expect(close.finish.wasConnected == false)
    }

    @Test func authenticationAnsweredAfterTheConnectionEndedIsIgnored() {
        var machine = Machine()
        _ = machine.packetReceived(.connect(connect()), configuration: configuration)
        #expect(machine.connectTimeoutFired() != nil)
        #expect(admit(&machine, connect()) == .none)
        #expect(machine.sessionOpened().isEmpty)
        #expect(!machine.isConnected)
    }

    @Test func theHookMayRekeyTheSession() {
        var machine = Machine()
        _ = machine.packetReceived(.connect(connect(clientID: "sent")), configuration: configuration)
        let action = machine.authenticationCompleted(.accepted(MQTTPrincipal(clientID: "device-7")), configuration: configuration, authorizeWill: { _, _ in true }, newClientID: { "x" })
        guard case .admit(let admission) = action else { Issue.record("\(action)"); return }
        #expect(admission.principal.clientID == "device-7")
        #expect(admission.assignedClientID == nil)
    }

    @Test func emptyClientIdentifiers() {
        // v5: one is assigned and told; 3.1.1 with a clean session: assigned silently.
        for version in [MQTTVersion.v5, .v311] {
            var machine = Machine()
            let sent = connect(version, clientID: "")
            _ = machine.packetReceived(.connect(sent), configuration: configuration)
            guard case .admit(let admission) = admit(&machine, sent) else { Issue.record("\(version) refused"); continue }
            #expect(admission.principal.clientID == "auto-1")
            #expect(admission.assignedClientID == "auto-1")
        }
        // 3.1.1 asking to resume a session it cannot name.
        var resuming = Machine()
        let unnamed = connect(.v311, clientID: "", cleanStart: false)
        _ = resuming.packetReceived(.connect(unnamed), configuration: configuration)
        guard case .close(let close) = admit(&resuming, unnamed) else { Issue.record("admitted"); return }
        #expect(close.connack == .clientIdentifierNotValid)
        // Not allowed by the configuration.
        var strict = Machine()
        let config = MQTTBrokerConfiguration(allowEmptyClientID: false)
        _ = strict.packetReceived(.connect(connect(clientID: "")), configuration: config)
        guard case .close(let refused) = admit(&strict, connect(clientID: ""), configuration: config) else { Issue.record("admitted"); return }
        #expect(refused.connack == .clientIdentifierNotValid)
    }

    @Test func aWillTheClientMayNotPublish() {
        let will = MQTTWill(topic: "forbidden", payload: ByteBuffer(string: "bye"))
        var v5 = Machine()
        _ = v5.packetReceived(.connect(connect(will: will)), configuration: configuration)
        guard case .close(let close) = admit(&v5, connect(will: will), willAllowed: false) else { Issue.record("admitted"); return }
        #expect(close.connack == .notAuthorized)
        // 3.1.1 cannot be told: admitted, the will checked again when published.
        var v311 = Machine()
        _ = v311.packetReceived(.connect(connect(.v311, will: will)), configuration: configuration)
        guard case .admit = admit(&v311, connect(.v311, will: will), willAllowed: false) else { Issue.record("refused"); return }
    }

    @Test func keepAliveWithinTheBrokersMaximum() {
        let config = MQTTBrokerConfiguration(maximumKeepAlive: 60)
        func admission(_ connect: MQTTConnect) -> Machine.AdmissionAction {
            var machine = Machine()
            _ = machine.packetReceived(.connect(connect), configuration: config)
            return admit(&machine, connect, configuration: config)
        }
        // v5 asking for none or too long is told the broker's.
        for asked: UInt16 in [0, 120] {
            guard case .admit(let terms) = admission(connect(.v5, keepAlive: asked)) else { Issue.record("refused \(asked)"); continue }
            #expect(terms.serverKeepAlive == 60)
            #expect(terms.keepAlive == 60)
        }
        // Within the maximum: as asked, nothing to tell.
        guard case .admit(let within) = admission(connect(.v5, keepAlive: 30)) else { Issue.record("refused"); return }
        #expect(within.serverKeepAlive == nil && within.keepAlive == 30)
        // 3.1.1 asking for too long cannot be told: refused, as mosquitto does.
        guard case .close(let refused) = admission(connect(.v311, keepAlive: 120)) else { Issue.record("admitted"); return }
        #expect(refused.connack == .clientIdentifierNotValid)
        // 3.1.1 asking for none is still let go after the maximum, silently.
        guard case .admit(let none) = admission(connect(.v311, keepAlive: 0)) else { Issue.record("refused"); return }
        #expect(none.keepAlive == 60 && none.serverKeepAlive == nil)
        // No maximum: as asked, 0 included.
        var free = Machine()
        _ = free.packetReceived(.connect(connect(keepAlive: 0)), configuration: configuration)
        guard case .admit(let unlimited) = admit(&free, connect(keepAlive: 0)) else { Issue.record("refused"); return }
        #expect(unlimited.keepAlive == 0)
    }

    @Test func aSessionHeldByAnotherUserRefusesTheClient() throws {
        var machine = Machine()
        _ = machine.packetReceived(.connect(connect()), configuration: configuration)
        _ = admit(&machine, connect())
        let closeAnswer = machine.sessionRefused()
        let close = try #require(closeAnswer)
        #expect(close.connack == .clientIdentifierNotValid)
        #expect(close.finish.wasConnected == false)
        #expect(machine.sessionRefused() == nil)
    }

    // MARK: Connected

    @Test func sessionPacketsGoToTheSession() throws {
        var machine = try connected(connect())
        let packets: [MQTTPacket] = [.pingreq, .puback(MQTTAck(packetID: 1)), .pubrec(MQTTAck(packetID: 2)), .pubrel(MQTTAck(packetID: 3)), .pubcomp(MQTTAck(packetID: 4)),
                                     .unsubscribe(MQTTUnsubscribe(packetID: 5, filters: ["a"]))]
        for packet in packets { #expect(machine.packetReceived(packet, configuration: configuration) == .session(packet)) }
    }

    @Test func topicAliasesAreDefinedUsedAndChecked() throws {
        var machine = try connected(connect())
        let defined = machine.packetReceived(publish("room/1/temp", properties: [.topicAlias(3)]), configuration: configuration)
        guard case .publish(let first, _, _) = defined else { Issue.record("\(defined)"); return }
        #expect(first.topic == "room/1/temp")
        let used = machine.packetReceived(publish("", properties: [.topicAlias(3)]), configuration: configuration)
        guard case .publish(let second, _, _) = used else { Issue.record("\(used)"); return }
        #expect(second.topic == "room/1/temp")

        guard case .close(let unknown) = machine.packetReceived(publish("", properties: [.topicAlias(4)]), configuration: configuration) else { Issue.record("kept"); return }
        #expect(unknown.disconnect == .protocolError)

        var other = try connected(connect())
        guard case .close(let tooHigh) = other.packetReceived(publish("t", properties: [.topicAlias(17)]), configuration: configuration) else { Issue.record("kept"); return }
        #expect(tooHigh.disconnect == .topicAliasInvalid)
        #expect(tooHigh.finish.reason == .protocolError)
    }

    @Test func aliasesOnlyMeanSomethingInVersion5() throws {
        var machine = try connected(connect(.v311))
        let action = machine.packetReceived(publish("plain", properties: [.topicAlias(1)]), configuration: configuration)
        guard case .publish(let message, _, _) = action else { Issue.record("\(action)"); return }
        #expect(message.topic == "plain")
        #expect(message.properties.isEmpty)
    }

    @Test func qosAndRetainBeyondTheBrokersLimits() throws {
        let config = MQTTBrokerConfiguration(maximumQoS: .atLeastOnce, retainAvailable: false)
        var machine = try connected(connect())
        guard case .close(let qos) = machine.packetReceived(publish("t", qos: .exactlyOnce), configuration: config) else { Issue.record("kept"); return }
        #expect(qos.disconnect == .qosNotSupported)
        var retaining = try connected(connect())
        guard case .close(let retain) = retaining.packetReceived(publish("t", retain: true), configuration: config) else { Issue.record("kept"); return }
        #expect(retain.disconnect == .retainNotSupported)
        var within = try connected(connect())
        let action = within.packetReceived(publish("t", qos: .atLeastOnce), configuration: config)
        #expect(action == .publish(MQTTMessage(topic: "t", payload: "x", qos: .atLeastOnce), qos: .atLeastOnce, packetID: 7))
    }

    // MARK: Ending

    @Test func normalDisconnectDropsTheWill() throws {
        let will = MQTTWill(topic: "status", payload: ByteBuffer(string: "gone"))
        var machine = try connected(connect(will: will))
        guard case .disconnect(let packet) = machine.packetReceived(.disconnect(MQTTReasonPacket()), configuration: configuration) else { Issue.record("not a disconnect"); return }
        let ending = machine.disconnectReceived(packet, sessionExpiry: 0, configuration: configuration)
        #expect(ending == .leave(sessionExpiry: nil, Machine.Close(connack: nil, disconnect: nil, finish: Machine.Finish(wasConnected: true, will: nil, reason: .normal))))
        #expect(machine.channelInactive() == nil)
    }

    @Test func disconnectWithWillMessageKeepsTheWill() throws {
        let will = MQTTWill(topic: "status", payload: ByteBuffer(string: "gone"))
        var machine = try connected(connect(will: will))
        let ending = machine.disconnectReceived(MQTTReasonPacket(reasonCode: .disconnectWithWillMessage), sessionExpiry: 0, configuration: configuration)
        guard case .leave(_, let close) = ending else { Issue.record("\(String(describing: ending))"); return }
        #expect(close.finish.will == will)
        #expect(close.finish.reason == .connectionLost)
    }

    @Test func sessionExpiryOnDisconnect() throws {
        let config = MQTTBrokerConfiguration(maximumSessionExpiry: 3600)
        var raising = try connected(connect())
        let violation = raising.disconnectReceived(MQTTReasonPacket(properties: [.sessionExpiryInterval(60)]), sessionExpiry: 0, configuration: config)
        guard case .close(let close) = violation else { Issue.record("\(String(describing: violation))"); return }
        #expect(close.disconnect == .protocolError)
        #expect(close.finish.reason == .protocolError)

        var lowering = try connected(connect())
        let capped = lowering.disconnectReceived(MQTTReasonPacket(properties: [.sessionExpiryInterval(86_400)]), sessionExpiry: 600, configuration: config)
        guard case .leave(let expiry, _) = capped else { Issue.record("\(String(describing: capped))"); return }
        #expect(expiry == 3600)

        // 3.1.1 has no properties to honour.
        var old = try connected(connect(.v311))
        guard case .leave(let none, _) = old.disconnectReceived(MQTTReasonPacket(properties: [.sessionExpiryInterval(60)]), sessionExpiry: 0, configuration: config) else { Issue.record("refused"); return }
        #expect(none == nil)
    }

    @Test func aLostConnectionPublishesTheWillOnce() throws {
        let will = MQTTWill(topic: "status", payload: ByteBuffer(string: "gone"))
        var machine = try connected(connect(will: will))
        let finishAnswer = machine.channelInactive()
        let finish = try #require(finishAnswer)
        #expect(finish == Machine.Finish(wasConnected: true, will: will, reason: .connectionLost))
        #expect(machine.channelInactive() == nil)
        #expect(machine.close(.serverShuttingDown) == nil)
        #expect(machine.keepAliveExpired() == nil)
    }

    @Test func closingTellsOnlyAConnectedVersion5Client() throws {
        var v5 = try connected(connect())
        #expect(v5.close(.serverShuttingDown)?.disconnect == .serverShuttingDown)
        var v311 = try connected(connect(.v311))
        let closeAnswer = v311.close(.serverShuttingDown)
        let close = try #require(closeAnswer)
        #expect(close.disconnect == nil)
        #expect(close.finish.wasConnected)
    }

    @Test func takeoverAndKeepAliveAreReportedAsSuch() throws {
        var taken = try connected(connect())
        #expect(taken.close(.sessionTakenOver)?.finish.reason == .takenOver)
        var silent = try connected(connect())
        let closeAnswer = silent.keepAliveExpired()
        let close = try #require(closeAnswer)
        #expect(close.disconnect == .keepAliveTimeout)
        #expect(close.finish.reason == .keepAliveTimeout)
    }

    @Test func connectTimeoutOnlyBeforeConnack() throws {
        var waiting = Machine()
        #expect(waiting.connectTimeoutFired() != nil)
        var authenticating = Machine()
        _ = authenticating.packetReceived(.connect(connect()), configuration: configuration)
        #expect(authenticating.connectTimeoutFired()?.finish.wasConnected == false)
        var machine = try connected(connect())
        #expect(machine.connectTimeoutFired() == nil)
        #expect(machine.isConnected)
    }
}
