public import TetherCore

/// The error type of ``TetherMQTT``: codec, client and broker. Codes are stable; `message` is
/// safe to log (it never contains passwords or payloads).
public struct MQTTError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What kind of failure, stable across releases; compare it with constants such as `.timeout`.
    public var code: Code
    /// What went wrong, for people; safe to log.
    public var message: String
    /// The reason code the peer sent (a refused CONNECT, a failed SUBSCRIBE, a DISCONNECT), or
    /// the one this side sends for a codec error.
    public var reasonCode: MQTTReasonCode?

    /// Builds an error from its code, a loggable message and, optionally, the MQTT reason code.
    public init(_ code: Code, _ message: String, reasonCode: MQTTReasonCode? = nil) {
        self.code = code
        self.message = message
        self.reasonCode = reasonCode
    }

    /// The code, the reason code if any, and the message, for logs.
    public var description: String {
        if let reasonCode { return "MQTTError(\(code), \(reasonCode)): \(message)" }
        return "MQTTError(\(code)): \(message)"
    }

    /// The codes of this domain (5001…5020), declared as static members of `ErrorCode`. They
    /// were 4001…4017 before, which `TetherError`'s cloud codes also used: every code is now
    /// unique across the package's error types.
    public typealias Code = ErrorCode<MQTTError>
    static func malformed(_ message: String) -> MQTTError {
        MQTTError(.malformedPacket, message, reasonCode: .malformedPacket)
    }

    static func protocolError(_ message: String) -> MQTTError {
        MQTTError(.protocolError, message, reasonCode: .protocolError)
    }
}

extension ErrorCode where Domain == MQTTError {
    /// Bytes that do not form a valid MQTT packet (bad remaining length, reserved flags,
    /// invalid UTF-8, wildcards in a topic name, truncated fields…).
    public static var malformedPacket: Self { Self(5001, "malformedPacket") }
    /// A well-formed packet that the protocol does not allow here (a second CONNECT, an
    /// unknown property for this packet, a property given twice…).
    public static var protocolError: Self { Self(5002, "protocolError") }
    /// A packet larger than the negotiated maximum.
    public static var packetTooLarge: Self { Self(5003, "packetTooLarge") }
    /// The peer speaks a protocol level this side does not.
    public static var unsupportedProtocolVersion: Self { Self(5004, "unsupportedProtocolVersion") }
    /// The server refused the connection; `reasonCode` says why.
    public static var connectionRefused: Self { Self(5005, "connectionRefused") }
    /// The connection was closed, by the peer or the network.
    public static var connectionClosed: Self { Self(5006, "connectionClosed") }
    /// No answer in time (CONNACK, SUBACK, keep-alive).
    public static var timeout: Self { Self(5007, "timeout") }
    /// The TLS handshake failed (untrusted certificate, wrong host name, protocol mismatch).
    public static var tlsFailure: Self { Self(5008, "tlsFailure") }
    /// The host name could not be resolved.
    public static var dnsFailure: Self { Self(5009, "dnsFailure") }
    /// The TCP connection could not be established.
    public static var connectFailed: Self { Self(5010, "connectFailed") }
    /// The offline queue is full: the message was not accepted.
    public static var offlineQueueFull: Self { Self(5011, "offlineQueueFull") }
    /// The server refused a subscription (`reasonCode`).
    public static var subscriptionRefused: Self { Self(5012, "subscriptionRefused") }
    /// The server refused a publication (v5 PUBACK/PUBREC reason code).
    public static var publishRefused: Self { Self(5013, "publishRefused") }
    /// The operation needs a connection and there is none.
    public static var notConnected: Self { Self(5014, "notConnected") }
    /// An argument is invalid (a topic with wildcards, QoS above the server's maximum…).
    public static var invalidArgument: Self { Self(5015, "invalidArgument") }
    /// The operation was cancelled or the client shut down.
    public static var cancelled: Self { Self(5016, "cancelled") }
    /// The server disconnected this client (`reasonCode`: takeover, shutdown, keep-alive…).
    public static var disconnected: Self { Self(5017, "disconnected") }
    /// A broker configuration, password or ACL file cannot be used; the message names the file
    /// and the line.
    public static var invalidConfiguration: Self { Self(5018, "invalidConfiguration") }
    /// The broker's persistence file could not be read or written.
    public static var persistenceFailed: Self { Self(5019, "persistenceFailed") }
    /// The broker cannot listen on an address (in use, not this host's, not permitted).
    public static var listenFailed: Self { Self(5020, "listenFailed") }
}
