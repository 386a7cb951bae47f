import NIOCore

/// The protocol rules of one broker connection, as a value: the handler feeds it what happened
/// (a packet, a decoding failure, the authentication hook's answer, a timer, the socket's end)
/// and does what it answers. Nothing here touches a socket, a session or a lock, so every rule
/// is tested without them (`BrokerConnectionStateMachineTests`).
///
/// It decides: which packets each phase accepts (CONNECT first, packets held until CONNACK and
/// how many, no second CONNECT), who is admitted and on what terms (client identifier, will,
/// keep-alive), what a connected client's packets mean (topic aliases, QoS and retain limits,
/// DISCONNECT and session expiry), and how the connection ends (whether a DISCONNECT is sent,
/// whether the will is published, what the end is reported as) — once.
///
/// Kept small: the handler holds one per connection, and memory per idle connection is a
/// measured goal, so what only some connections need (a will, incoming topic aliases, the
/// packets held before CONNACK) is boxed or empty.
struct BrokerConnectionStateMachine {
    private enum Phase {
        case awaitingConnect
        indirect case authenticating(MQTTConnect, pending: [MQTTPacket])
        case connected
        /// Over for the broker: its socket may still linger to deliver the last packets.
        case closed
    }

    private var phase = Phase.awaitingConnect
    /// The protocol level of the connection, from its CONNECT.
    private(set) var version = MQTTVersion.v311
    private var closeReason = MQTTBrokerEvent.DisconnectReason.connectionLost
    private var will: BoxedWill?
    /// Topic aliases the client defined (MQTT 5 §3.3.2.3.4).
    private var incomingAliases: [UInt16: String] = [:]

    static let maximumPendingBeforeConnack = 64

    private final class BoxedWill {
        let will: MQTTWill
        init(_ will: MQTTWill) { self.will = will }
    }

    /// Whether the connection still acts on what the client sends.
    var isOpen: Bool {
        if case .closed = phase { return false }
        return true
    }

    var isConnected: Bool {
        if case .connected = phase { return true }
        return false
    }

    // MARK: Actions

    /// How the connection ends, when it ends now.
    struct Close: Equatable {
        /// A CONNACK refusing the client, sent before closing.
        var connack: MQTTReasonCode?
        /// A v5 DISCONNECT telling a connected client why, sent before closing.
        var disconnect: MQTTReasonCode?
        var finish: Finish
    }

    /// The connection is over for the broker.
    struct Finish: Equatable {
        /// Whether the client had been admitted (its session is let go, its end reported).
        var wasConnected: Bool
        /// The will to publish, unless the client disconnected normally.
        var will: MQTTWill?
        /// What the end is reported as (unless another connection took the session meanwhile).
        var reason: MQTTBrokerEvent.DisconnectReason
    }

    enum PacketAction: Equatable {
        case none
        /// Ask the authentication hook about this CONNECT.
        case authenticate(MQTTConnect)
        /// A publication that passed the connection's rules (its topic resolved from an alias).
        case publish(MQTTMessage, qos: MQTTQoS, packetID: UInt16?)
        /// A DISCONNECT: its rules need the session's expiry (``disconnectReceived(_:sessionExpiry:configuration:)``).
        case disconnect(MQTTReasonPacket)
        /// Acknowledgements, subscriptions and pings: the session's business.
        case session(MQTTPacket)
        case close(Close)
    }

    enum AdmissionAction: Equatable {
        /// The connection closed while the hook decided.
        case none
        case admit(Admission)
        case close(Close)
    }

    /// The terms a client is admitted on.
    struct Admission: Equatable {
        var connect: MQTTConnect
        var principal: MQTTPrincipal
        /// The client identifier the broker made up, to tell a v5 client.
        var assignedClientID: String?
        /// Seconds of silence after which the client is let go (times the keep-alive factor); 0: never.
        var keepAlive: UInt16
        /// The keep-alive the broker imposes on a v5 client (Server Keep Alive).
        var serverKeepAlive: UInt16?
    }

    // MARK: Events

    mutating func packetReceived(_ packet: MQTTPacket, configuration: MQTTBrokerConfiguration) -> PacketAction {
        switch phase {
        case .awaitingConnect:
            guard case .connect(let connect) = packet else { return .close(finish(connack: nil, disconnect: nil)) }
            version = connect.version
            if connect.version == .v5, connect.properties.authenticationMethod != nil {
                // MQTT 5 §4.12: no enhanced authentication method is supported; accepting the
                // connection would let the client believe it authenticated with one.
                return .close(refuse(.badAuthenticationMethod))
            }
            phase = .authenticating(connect, pending: [])
            return .authenticate(connect)
        case .authenticating(let connect, var pending):
            // Clients may send before CONNACK arrives; their packets wait until it is decided.
            if case .connect = packet { return .close(protocolViolation()) }
            // Held in memory before the client is known: bounded.
            guard pending.count < Self.maximumPendingBeforeConnack else { return .close(protocolViolation()) }
            phase = .connected  // lets go of the array's reference, so that appending does not copy it
            pending.append(packet)
            phase = .authenticating(connect, pending: pending)
            return .none
        case .connected:
            return connectedPacket(packet, configuration: configuration)
        case .closed:
            return .none
        }
    }

    private mutating func connectedPacket(_ packet: MQTTPacket, configuration: MQTTBrokerConfiguration) -> PacketAction {
        switch packet {
        case .publish(let publish):
            return publication(publish, configuration: configuration)
        case .disconnect(let disconnect):
            return .disconnect(disconnect)
        case .puback, .pubrec, .pubrel, .pubcomp, .subscribe, .unsubscribe, .pingreq:
            return .session(packet)
        case .connect, .auth, .connack, .suback, .unsuback, .pingresp:
            // A second CONNECT; enhanced authentication (not supported); server packets.
            return .close(protocolViolation())
        }
    }

    private mutating func publication(_ publish: MQTTPublish, configuration: MQTTBrokerConfiguration) -> PacketAction {
        var topic = publish.topic
        if version == .v5, let alias = publish.properties.topicAlias {
            guard alias > 0, alias <= configuration.topicAliasMaximum else { return .close(protocolViolation(.topicAliasInvalid)) }
            if topic.isEmpty {
                guard let known = incomingAliases[alias] else { return .close(protocolViolation()) }
                topic = known
            } else {
                incomingAliases[alias] = topic
            }
        }
        if publish.qos > configuration.maximumQoS { return .close(protocolViolation(.qosNotSupported)) }
        if publish.retain, !configuration.retainAvailable { return .close(protocolViolation(.retainNotSupported)) }
        let message = MQTTMessage(
            topic: topic, payload: publish.payload, qos: publish.qos, retain: publish.retain, properties: version == .v5 ? publish.properties : [])
        return .publish(message, qos: publish.qos, packetID: publish.packetID)
    }

    enum Disconnection: Equatable {
        /// The client leaves; its session's expiry becomes `sessionExpiry` when given.
        case leave(sessionExpiry: UInt32?, Close)
        case close(Close)
    }

    /// A connected client's DISCONNECT, beside its session's current expiry interval (nil: none).
    mutating func disconnectReceived(_ disconnect: MQTTReasonPacket, sessionExpiry current: UInt32?, configuration: MQTTBrokerConfiguration) -> Disconnection? {
        guard isConnected else { return nil }
        var expiry: UInt32?
        if version == .v5, let requested = disconnect.properties.sessionExpiryInterval {
            // MQTT 5 §3.14.2.2.2: a session CONNECT gave no expiry cannot be given one now.
            if current == 0, requested != 0 { return .close(protocolViolation()) }
            expiry = min(requested, configuration.maximumSessionExpiry)
        }
        closeReason = disconnect.reasonCode == .disconnectWithWillMessage ? .connectionLost : .normal
        return .leave(sessionExpiry: expiry, finish(connack: nil, disconnect: nil))
    }

    /// The input could not be decoded.
    mutating func decodingFailed(_ error: MQTTError) -> Close? {
        guard isOpen else { return nil }
        closeReason = .protocolError
        if case .awaitingConnect = phase, error.code == .unsupportedProtocolVersion {
            // MQTT 3.1.1 §3.1.2.2: an unknown level is answered with return code 1, then closed.
            return finish(connack: .unsupportedProtocolVersion, disconnect: nil)
        }
        return finish(connack: nil, disconnect: error.reasonCode ?? .malformedPacket)
    }

    /// The authentication hook answered. `authorizeWill` asks whether the admitted principal
    /// may publish its will; `newClientID` makes up an identifier for a client that sent none.
    mutating func authenticationCompleted(
        _ result: MQTTAuthentication,
        configuration: MQTTBrokerConfiguration,
        authorizeWill: (MQTTPrincipal, String) -> Bool,
        newClientID: () -> String
    ) -> AdmissionAction {
        guard case .authenticating(let connect, _) = phase else { return .none }
        var principal: MQTTPrincipal
        switch result {
        case .refused(let code): return .close(refuse(code))
        case .accepted(let accepted): principal = accepted
        }
        // The hook may key the session by an identity of its own (a gateway keys it by device).
        var clientID = principal.clientID.isEmpty ? connect.clientID : principal.clientID
        var assigned: String?
        if clientID.isEmpty {
            guard configuration.allowEmptyClientID, connect.version == .v5 || connect.cleanStart else {
                return .close(refuse(.clientIdentifierNotValid))
            }
            clientID = newClientID()
            assigned = clientID
        }
        principal.clientID = clientID
        if let will = connect.will {
            // A 3.1.1 client cannot be told; its will is checked again when it is published.
            guard authorizeWill(principal, will.topic) || connect.version != .v5 else { return .close(refuse(.notAuthorized)) }
            self.will = BoxedWill(will)
        }
        var keepAlive = connect.keepAlive
        var serverKeepAlive: UInt16?
        if let maximum = configuration.maximumKeepAlive, keepAlive == 0 || keepAlive > maximum {
            if connect.version == .v5 {
                serverKeepAlive = maximum
            } else if keepAlive > 0 {
                // 3.1.1 cannot be told another keep-alive: refused, as mosquitto does.
                return .close(refuse(.clientIdentifierNotValid))
            }
            // A 3.1.1 client without keep-alive is still let go when silent that long: a server
            // may disconnect an inactive client at any time (3.1.1 §3.1.2.10).
            keepAlive = maximum
        }
        return .admit(Admission(connect: connect, principal: principal, assignedClientID: assigned, keepAlive: keepAlive, serverKeepAlive: serverKeepAlive))
    }

    /// The broker could not give the admitted client a session (its client identifier holds
    /// another user's).
    mutating func sessionRefused() -> Close? {
        guard case .authenticating = phase else { return nil }
        return refuse(.clientIdentifierNotValid)
    }

    /// The client has its session: it is connected, and the packets it sent before CONNACK are
    /// handed back to be received now, in order.
    mutating func sessionOpened() -> [MQTTPacket] {
        guard case .authenticating(_, let pending) = phase else { return [] }
        phase = .connected
        return pending
    }

    /// No CONNACK within the connect timeout: a client whose authentication never completes is
    /// dropped too.
    mutating func connectTimeoutFired() -> Close? {
        switch phase {
        case .awaitingConnect, .authenticating: return finish(connack: nil, disconnect: nil)
        case .connected, .closed: return nil
        }
    }

    /// Nothing arrived for the keep-alive times its factor.
    mutating func keepAliveExpired() -> Close? {
        close(.keepAliveTimeout, because: .keepAliveTimeout)
    }

    /// The broker closes the connection: another connection took its session (reported as a
    /// takeover), the embedder or a congested subscriber's rules asked.
    mutating func close(_ reason: MQTTReasonCode?, because cause: MQTTBrokerEvent.DisconnectReason? = nil) -> Close? {
        guard isOpen else { return nil }
        if let cause { closeReason = cause }
        if reason == .sessionTakenOver { closeReason = .takenOver }
        return finish(connack: nil, disconnect: reason)
    }

    /// The socket closed by itself.
    mutating func channelInactive() -> Finish? {
        guard isOpen else { return nil }
        return finish(connack: nil, disconnect: nil).finish
    }

    // MARK: Ending

    private mutating func refuse(_ code: MQTTReasonCode) -> Close {
        closeReason = .closedByBroker
        return finish(connack: code, disconnect: nil)
    }

    private mutating func protocolViolation(_ code: MQTTReasonCode = .protocolError) -> Close {
        closeReason = .protocolError
        return finish(connack: nil, disconnect: code)
    }

    /// Ends the connection for the broker; a DISCONNECT only goes to a connected v5 client.
    private mutating func finish(connack: MQTTReasonCode?, disconnect: MQTTReasonCode?) -> Close {
        let wasConnected = isConnected
        phase = .closed
        let finish = Finish(
            wasConnected: wasConnected,
            will: closeReason == .normal ? nil : will?.will,
            reason: closeReason
        )
        will = nil
        incomingAliases = [:]
        return Close(connack: connack, disconnect: wasConnected && version == .v5 ? disconnect : nil, finish: finish)
    }
}
