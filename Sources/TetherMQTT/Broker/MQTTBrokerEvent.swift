/// Something that happened on the broker, for embedders (a cloud gateway records online and
/// offline from these).
public enum MQTTBrokerEvent: Hashable, Sendable {
    /// A client completed CONNECT; `sessionPresent` tells whether it resumed a stored session.
    case clientConnected(MQTTPrincipal, remoteAddress: String, sessionPresent: Bool)
    /// A connected client's connection ended, or another connection took its session over.
    case clientDisconnected(clientID: String, reason: DisconnectReason)

    /// Why a client's connection ended, as the broker saw it.
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
