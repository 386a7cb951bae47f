public import TetherCloudProtocol
public import TetherCore

/// What one cloud node tells every node, itself included: device traffic for the apps
/// subscribed on any node, commands for the node that holds a device's connection, and the
/// command ledger's changes for the apps waiting on them.
public enum ClusterEvent: Codable, Sendable, Hashable {
    /// A device reported data points (a property post, already validated and stored).
    case status(did: String, attrs: JSONValue, atMs: Int64)
    /// A device posted an event: `kind` is the TSL event type (`info`, `alert`, `error`).
    case event(did: String, identifier: String, kind: String, values: JSONValue, atMs: Int64)
    /// Transparent bytes from a device.
    case raw(did: String, hex: String, atMs: Int64)
    /// A device connected (to `node`) or disconnected.
    case presence(did: String, online: Bool, node: String?, atMs: Int64)
    /// A command in the ledger is to be sent to its device by whichever node holds it.
    case deliver(commandID: Int64, did: String)
    /// A command's state changed.
    case command(CommandUpdate)
    /// A user bound or unbound a device.
    case binding(uid: String, did: String, bound: Bool)
    /// An app's RRPC call, for the node that holds the device's connection.
    case rrpcRequest(RRPCRequestEvent)
    /// The device answered an RRPC call (`payloadHex`), or it could not be sent to it (nil), for
    /// the node whose caller waits.
    case rrpcAnswer(messageID: String, did: String, payloadHex: String?)
    /// An app changed what it desires of a device's shadow, for the node that holds the
    /// device's connection to push the shadow as it is then.
    case shadowDesired(did: String)
    /// A device published on one of its custom topics (`/{pk}/{dn}/user/…`), for the apps
    /// subscribed to it on any node.
    case userMessage(did: String, topic: String, payloadHex: String, atMs: Int64)
    /// An app publishes to one of a device's custom topics, for the node that holds the device.
    case userPublish(did: String, topic: String, payloadHex: String, qos: Int)
    /// A firmware upgrade was offered or moved on, for the apps subscribed to its device.
    case upgrade(FirmwareUpgradeBody)
    /// A new entry of a user's message centre, for that user's sessions.
    case message(uid: String, MessageBody)
    /// A device presented one of a user's pairing tokens: the outcome, for that user's sessions.
    case pairing(uid: String, PairingStatusBody)
    /// One of a user's schedules changed, for that user's sessions.
    case schedules(uid: String, ScheduleChangeBody)
    /// A user's sessions changed (logout, refresh, password change, revoked session, account
    /// disabled): live sessions of that user check their token again.
    case credentialsChanged(uid: String)

    /// The device the event is about; empty for an event about no device.
    public var did: String {
        switch self {
        case .status(let did, _, _), .event(let did, _, _, _, _), .raw(let did, _, _), .presence(let did, _, _, _),
            .deliver(_, let did), .binding(_, let did, _), .rrpcAnswer(_, let did, _), .shadowDesired(let did),
            .userMessage(let did, _, _, _), .userPublish(let did, _, _, _):
            return did
        case .rrpcRequest(let request):
            return request.did
        case .command(let update):
            return update.did
        case .upgrade(let upgrade):
            return upgrade.did
        case .credentialsChanged, .message, .pairing, .schedules:
            return ""
        }
    }
}

/// A command ledger change, as apps see it.
public struct CommandUpdate: Codable, Sendable, Hashable {
    public var id: Int64
    public var did: String
    public var state: CommandState
    /// The device's Alink code (200 when it accepted), when it answered.
    public var code: Int?
    public var message: String

    public init(id: Int64, did: String, state: CommandState, code: Int? = nil, message: String = "") {
        self.id = id
        self.did = did
        self.state = state
        self.code = code
        self.message = message
    }
}

/// An RRPC call on its way to the device's node.
public struct RRPCRequestEvent: Codable, Sendable, Hashable {
    public var messageID: String
    public var did: String
    /// The custom topic (`/ext/rrpc/{messageId}{topic}`); nil for system RRPC.
    public var topic: String?
    public var payloadHex: String
    /// When the caller stops waiting (Unix milliseconds): the device's node forgets the call then.
    public var deadlineMs: Int64

    public init(messageID: String, did: String, topic: String?, payloadHex: String, deadlineMs: Int64) {
        self.messageID = messageID
        self.did = did
        self.topic = topic
        self.payloadHex = payloadHex
        self.deadlineMs = deadlineMs
    }
}

/// Messages travel between nodes as the JSON apps see.
extension MessageBody: @retroactive Codable {
    public init(from decoder: any Decoder) throws {
        try self.init(json: try JSONValue(from: decoder))
    }

    public func encode(to encoder: any Encoder) throws {
        try json.encode(to: encoder)
    }
}

/// Pairing outcomes travel between nodes as the JSON apps see.
extension PairingStatusBody: @retroactive Codable {
    public init(from decoder: any Decoder) throws {
        try self.init(json: try JSONValue(from: decoder))
    }

    public func encode(to encoder: any Encoder) throws {
        try json.encode(to: encoder)
    }
}

/// Upgrades travel between nodes as the JSON apps see.
extension FirmwareUpgradeBody: @retroactive Codable {
    public init(from decoder: any Decoder) throws {
        try self.init(json: try JSONValue(from: decoder))
    }

    public func encode(to encoder: any Encoder) throws {
        try json.encode(to: encoder)
    }
}

/// Schedule changes travel between nodes as the JSON apps see.
extension ScheduleChangeBody: @retroactive Codable {
    public init(from decoder: any Decoder) throws {
        try self.init(json: try JSONValue(from: decoder))
    }

    public func encode(to encoder: any Encoder) throws {
        try json.encode(to: encoder)
    }
}
