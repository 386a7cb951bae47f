public import TetherCore

/// One frame of the WebSocket M2M API (`shared/reference/gizwits-openapi.md` §4), in either
/// direction: the app's requests and the cloud's answers and pushes. Text frames carry one JSON
/// object, `{"cmd": …, "data": …}`, with `req_sn`/`res_sn` beside `cmd`.
///
/// The SDK (`CloudRealtime`) and the cloud (`M2MSession`) both read and write frames only
/// through this type: ``init(decoding:maximumLength:)`` and ``encoded()`` are the codec, pure
/// and total (a malformed frame is an ``M2MFrameError``, never a crash).
public enum M2MFrame: Sendable, Hashable {
    // App → cloud.
    /// `login_req`.
    case login(M2MLogin)
    /// `subscribe_req`: the devices to subscribe to.
    case subscribe(dids: [String])
    /// `c2s_write`.
    case write(M2MWrite)
    /// `c2s_read`.
    case read(M2MRead)
    /// `c2s_raw`: a LAN-format frame for the device.
    case raw(M2MRaw)
    /// `c2s_ack`: the app acknowledges a notification that asked for it.
    case acknowledge(M2MAcknowledgement)
    /// `ping`.
    case ping

    // Cloud → app.
    /// `login_res`.
    case loginResult(M2MLoginResult)
    /// `subscribe_res`.
    case subscribeResult(M2MSubscribeResult)
    /// `s2c_ack`: the device accepted a write that had a `req_sn`.
    case writeAcknowledged(M2MWriteAcknowledgement)
    /// `s2c_noti`: data points of a device (a report, or the answer to a read or write).
    case notification(M2MNotification)
    /// `s2c_invalid_msg`: a frame refused, or a command that failed.
    case invalid(M2MInvalid)
    /// `s2c_online_status`.
    case onlineStatus(M2MOnlineStatus)
    /// `s2c_binding_changed`.
    case bindingChanged(did: String, bound: Bool)
    /// `s2c_raw`: a LAN-format frame from the device.
    case rawReport(M2MRaw)
    /// `s2c_event` (Tether): an event the device posted.
    case event(M2MEvent)
    /// `s2c_user_topic` (Tether): what an Alink device published on one of its product's
    /// custom topics (`/{pk}/{dn}/user/…`).
    case userTopic(M2MUserTopic)
    /// `s2c_upgrade` (Tether): a firmware upgrade of a subscribed device moved on.
    case upgrade(FirmwareUpgradeBody)
    /// `s2c_message` (Tether): a new entry of the user's message centre (an invitation arrived,
    /// was accepted, refused, cancelled or revoked).
    case message(MessageBody)
    /// `s2c_pairing` (Tether): a device presented one of the user's pairing tokens: bound, or
    /// refused and why.
    case pairing(PairingStatusBody)
    /// `s2c_schedules` (Tether): one of the user's schedules was created, changed or deleted.
    case schedules(ScheduleChangeBody)
    /// `pong`.
    case pong

    /// The `cmd` of this frame.
    public var command: String {
        switch self {
        case .login: "login_req"
        case .subscribe: "subscribe_req"
        case .write: "c2s_write"
        case .read: "c2s_read"
        case .raw: "c2s_raw"
        case .acknowledge: "c2s_ack"
        case .ping: "ping"
        case .loginResult: "login_res"
        case .subscribeResult: "subscribe_res"
        case .writeAcknowledged: "s2c_ack"
        case .notification: "s2c_noti"
        case .invalid: "s2c_invalid_msg"
        case .onlineStatus: "s2c_online_status"
        case .bindingChanged: "s2c_binding_changed"
        case .rawReport: "s2c_raw"
        case .event: "s2c_event"
        case .userTopic: "s2c_user_topic"
        case .upgrade: "s2c_upgrade"
        case .message: "s2c_message"
        case .pairing: "s2c_pairing"
        case .schedules: "s2c_schedules"
        case .pong: "pong"
        }
    }
}

/// A `req_sn` or `res_sn` as the app sent it: the cloud echoes it unchanged.
public enum M2MSequence: Sendable, Hashable, CustomStringConvertible {
    case number(Int64)
    case text(String)

    public var description: String {
        switch self {
        case .number(let number): String(number)
        case .text(let text): text
        }
    }

    /// The number, when it is one.
    public var number: Int64? {
        if case .number(let number) = self { return number }
        return nil
    }
}

/// How the app wants device data (`p0_type`).
public enum M2MDataFormat: String, Sendable, Hashable {
    /// Named data points (`attrs_v4`).
    case attributes = "attrs_v4"
    /// LAN frames only (`custom`): `c2s_raw` and `s2c_raw`.
    case custom
}

public struct M2MLogin: Sendable, Hashable {
    public var appID: String
    public var uid: String
    public var token: String
    public var dataFormat: M2MDataFormat
    /// Seconds between the app's pings; the cloud closes a connection silent for 1.5 × this.
    public var heartbeatInterval: Int64?
    /// Subscribe to every bound device at login (the reference's default).
    public var autoSubscribe: Bool

    public init(appID: String, uid: String, token: String, dataFormat: M2MDataFormat = .attributes, heartbeatInterval: Int64? = nil, autoSubscribe: Bool = true)
    {
        self.appID = appID
        self.uid = uid
        self.token = token
        self.dataFormat = dataFormat
        self.heartbeatInterval = heartbeatInterval
        self.autoSubscribe = autoSubscribe
    }
}

public struct M2MLoginResult: Sendable, Hashable {
    public var success: Bool
    /// Why not, when not (the Open API's codes).
    public var errorCode: Int?
    public var message: String?

    public init(success: Bool, errorCode: Int? = nil, message: String? = nil) {
        self.success = success
        self.errorCode = errorCode
        self.message = message
    }
}

public struct M2MSubscribeResult: Sendable, Hashable {
    public struct Entry: Sendable, Hashable {
        /// Nil when the request's entry had no did.
        public var did: String?
        public var errorCode: Int
        public var message: String

        public init(did: String?, errorCode: Int = 0, message: String = "ok") {
            self.did = did
            self.errorCode = errorCode
            self.message = message
        }
    }

    public var success: [Entry]
    public var failed: [Entry]

    public init(success: [Entry], failed: [Entry]) {
        self.success = success
        self.failed = failed
    }
}

public struct M2MWrite: Sendable, Hashable {
    public var sequence: M2MSequence?
    public var did: String
    /// Data points by name, as apps write them (bools, enum labels, numbers, byte arrays).
    public var attrs: JSONObject
    /// Tether: seconds the command may wait for an offline device.
    public var queueTTL: Int64?

    public init(sequence: M2MSequence? = nil, did: String, attrs: JSONObject, queueTTL: Int64? = nil) {
        self.sequence = sequence
        self.did = did
        self.attrs = attrs
        self.queueTTL = queueTTL
    }
}

public struct M2MRead: Sendable, Hashable {
    public var sequence: M2MSequence?
    public var did: String
    /// Only these data points (variable-length products).
    public var names: [String]?

    public init(sequence: M2MSequence? = nil, did: String, names: [String]? = nil) {
        self.sequence = sequence
        self.did = did
        self.names = names
    }
}

public struct M2MRaw: Sendable, Hashable {
    public var did: String
    public var bytes: [UInt8]
    /// Tether, `c2s_raw` only: seconds the command may wait for an offline device.
    public var queueTTL: Int64?

    public init(did: String, bytes: [UInt8], queueTTL: Int64? = nil) {
        self.did = did
        self.bytes = bytes
        self.queueTTL = queueTTL
    }
}

public struct M2MAcknowledgement: Sendable, Hashable {
    public var sequence: M2MSequence?
    public var did: String?

    public init(sequence: M2MSequence?, did: String?) {
        self.sequence = sequence
        self.did = did
    }
}

public struct M2MWriteAcknowledgement: Sendable, Hashable {
    /// The write's `req_sn`.
    public var sequence: M2MSequence?
    public var did: String
    /// Tether: the command's ledger entry.
    public var commandID: Int64?

    public init(sequence: M2MSequence?, did: String, commandID: Int64? = nil) {
        self.sequence = sequence
        self.did = did
        self.commandID = commandID
    }
}

public struct M2MNotification: Sendable, Hashable {
    /// The `req_sn` of the read or write this answers (`res_sn`).
    public var answering: M2MSequence?
    /// The device asked for an acknowledgement (`req_sn`; the app answers `c2s_ack`).
    public var request: M2MSequence?
    /// Tether: the ledger entry of the write this answers.
    public var commandID: Int64?
    public var did: String
    public var attrs: JSONObject

    public init(answering: M2MSequence? = nil, request: M2MSequence? = nil, commandID: Int64? = nil, did: String, attrs: JSONObject) {
        self.answering = answering
        self.request = request
        self.commandID = commandID
        self.did = did
        self.attrs = attrs
    }
}

public struct M2MInvalid: Sendable, Hashable {
    /// The `req_sn` of the refused request, when it had one (`res_sn`).
    public var sequence: M2MSequence?
    /// Tether: the ledger entry of a command that failed.
    public var commandID: Int64?
    public var errorCode: Int
    public var message: String
    public var did: String?

    public init(sequence: M2MSequence? = nil, commandID: Int64? = nil, errorCode: Int, message: String, did: String? = nil) {
        self.sequence = sequence
        self.commandID = commandID
        self.errorCode = errorCode
        self.message = message
        self.did = did
    }
}

public struct M2MOnlineStatus: Sendable, Hashable {
    public var did: String
    public var passcode: String
    public var mac: String
    public var online: Bool

    public init(did: String, passcode: String, mac: String, online: Bool) {
        self.did = did
        self.passcode = passcode
        self.mac = mac
        self.online = online
    }
}

public struct M2MEvent: Sendable, Hashable {
    public var did: String
    /// The event's identifier in the product's model.
    public var identifier: String
    /// The TSL event type: `info`, `alert` or `error`.
    public var type: String
    public var values: JSONValue
    /// Unix milliseconds.
    public var timestamp: Int64

    public init(did: String, identifier: String, type: String, values: JSONValue, timestamp: Int64) {
        self.did = did
        self.identifier = identifier
        self.type = type
        self.values = values
        self.timestamp = timestamp
    }
}

/// A device's message on one of its custom topics: `{"did", "topic", "payload_base64", "timestamp"}`.
public struct M2MUserTopic: Sendable, Hashable {
    public var did: String
    /// The whole MQTT topic, `/{pk}/{dn}/user/…`.
    public var topic: String
    public var payload: [UInt8]
    /// Unix milliseconds.
    public var timestamp: Int64

    public init(did: String, topic: String, payload: [UInt8], timestamp: Int64) {
        self.did = did
        self.topic = topic
        self.payload = payload
        self.timestamp = timestamp
    }
}
