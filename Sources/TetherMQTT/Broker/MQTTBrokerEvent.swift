/// Something that happened on the broker, for embedders (a cloud gateway records online and
/// offline from these).
public enum MQTTBrokerEvent: Hashable, Sendable {
    case clientConnected(MQTTPrincipal, remoteAddress: String, sessionPresent: Bool)
    case clientDisconnected(clientID: String, reason: DisconnectReason)

    public enum DisconnectReason: String, Hashable, Sendable {
        /// The client sent DISCONNECT.
        case normal
        /// Nothing arrived within 1.5 × keep-alive.
        case keepAliveTimeout
        /// Another connection took the session over.
        case takenOver
        /// The client broke the protocol (malformed packet, protocol error, too large a packet).
        case protocolError
        /// The network connection ended without DISCONNECT.
        case connectionLost
        /// The broker closed it (authorization, shutdown).
        case closedByBroker
    }
}
