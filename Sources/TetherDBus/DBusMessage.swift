/// One D-Bus message: a method call, its reply or error, or a signal.
public struct DBusMessage: Hashable, Sendable {
    public enum Kind: UInt8, Hashable, Sendable {
        case methodCall = 1
        case methodReturn = 2
        case error = 3
        case signal = 4
    }

    public struct Flags: OptionSet, Hashable, Sendable {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        /// The caller wants no reply (a signal-like call).
        public static let noReplyExpected = Flags(rawValue: 0x1)
        /// The bus must not start a service to deliver this call.
        public static let noAutoStart = Flags(rawValue: 0x2)
        /// The caller may wait for an interactive authorization (polkit).
        public static let allowInteractiveAuthorization = Flags(rawValue: 0x4)
    }

    public var kind: Kind
    public var flags: Flags
    /// Set by the connection when it sends the message; unique per sender.
    public var serial: UInt32
    public var path: String?
    public var interface: String?
    public var member: String?
    /// The error's name (`org.bluez.Error.Failed`), on an error.
    public var errorName: String?
    /// The serial of the call this answers, on a reply or an error.
    public var replySerial: UInt32?
    public var destination: String?
    /// Set by the bus: the sender's unique name.
    public var sender: String?
    public var body: [DBusValue]

    public init(
        kind: Kind, flags: Flags = [], serial: UInt32 = 0, path: String? = nil, interface: String? = nil, member: String? = nil,
        errorName: String? = nil, replySerial: UInt32? = nil, destination: String? = nil, sender: String? = nil, body: [DBusValue] = []
    ) {
        self.kind = kind
        self.flags = flags
        self.serial = serial
        self.path = path
        self.interface = interface
        self.member = member
        self.errorName = errorName
        self.replySerial = replySerial
        self.destination = destination
        self.sender = sender
        self.body = body
    }

    /// The body's signature.
    public var signature: DBusSignature { DBusSignature(body.map(\.type)) }

    /// A call of `interface.member` on `path` of `destination`.
    public static func methodCall(
        destination: String?, path: String, interface: String?, member: String, body: [DBusValue] = [], flags: Flags = []
    ) -> DBusMessage {
        DBusMessage(kind: .methodCall, flags: flags, path: path, interface: interface, member: member, destination: destination, body: body)
    }

    /// A signal `interface.member` from `path`.
    public static func signal(path: String, interface: String, member: String, body: [DBusValue] = [], destination: String? = nil) -> DBusMessage {
        DBusMessage(kind: .signal, flags: .noReplyExpected, path: path, interface: interface, member: member, destination: destination, body: body)
    }

    /// The successful reply to this call.
    public func reply(_ body: [DBusValue] = []) -> DBusMessage {
        DBusMessage(kind: .methodReturn, flags: .noReplyExpected, replySerial: serial, destination: sender, body: body)
    }

    /// An error answering this call, with a human-readable text as D-Bus errors carry it.
    public func errorReply(_ name: String, _ text: String) -> DBusMessage {
        DBusMessage(kind: .error, flags: .noReplyExpected, errorName: name, replySerial: serial, destination: sender, body: [.string(text)])
    }

    /// The text of an error (its first string argument), when it has one.
    public var errorText: String? {
        guard kind == .error, case .string(let text)? = body.first else { return nil }
        return text
    }
}

extension DBusMessage: CustomStringConvertible {
    /// The message's addressing and signature, never its body: bodies may hold secrets
    /// (a device's password written to a characteristic).
    public var description: String {
        var parts = ["\(kind)", "serial \(serial)"]
        if let sender { parts.append("from \(sender)") }
        if let destination { parts.append("to \(destination)") }
        if let path { parts.append(path) }
        if let interface, let member { parts.append("\(interface).\(member)") } else if let member { parts.append(member) }
        if let errorName { parts.append(errorName) }
        if let replySerial { parts.append("reply to \(replySerial)") }
        parts.append("(\(signature))")
        return "DBusMessage(" + parts.joined(separator: " ") + ")"
    }
}
