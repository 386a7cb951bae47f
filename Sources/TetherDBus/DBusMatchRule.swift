/// Which signals a subscriber wants: sent to the bus as an `AddMatch` rule, and checked again
/// locally because one connection receives what all its rules match.
public struct DBusMatchRule: Hashable, Sendable {
    /// A unique or well-known bus name. The bus filters on a well-known name's current owner;
    /// locally a well-known name is compared with the owner resolved when subscribing.
    public var sender: String?
    public var path: String?
    /// This path and every path below it.
    public var pathNamespace: String?
    public var interface: String?
    public var member: String?
    /// The first argument, when it is a string (`PropertiesChanged`'s interface name).
    public var arg0: String?

    public init(
        sender: String? = nil, path: String? = nil, pathNamespace: String? = nil, interface: String? = nil, member: String? = nil,
        arg0: String? = nil
    ) {
        self.sender = sender
        self.path = path
        self.pathNamespace = pathNamespace
        self.interface = interface
        self.member = member
        self.arg0 = arg0
    }

    /// The rule as `AddMatch` takes it.
    public var text: String {
        var parts = ["type='signal'"]
        func add(_ key: String, _ value: String?) {
            // Inside quotes only the quote itself needs escaping, as '\'' (end, escaped, reopen).
            if let value { parts.append("\(key)='" + value.split(separator: "'", omittingEmptySubsequences: false).joined(separator: #"'\''"#) + "'") }
        }
        add("sender", sender)
        add("path", path)
        add("path_namespace", pathNamespace)
        add("interface", interface)
        add("member", member)
        add("arg0", arg0)
        return parts.joined(separator: ",")
    }

    /// Whether `message` is a signal this rule matches; `owner` is the unique name the rule's
    /// well-known sender had when subscribing (nil: any sender passes).
    public func matches(_ message: DBusMessage, owner: String? = nil) -> Bool {
        guard message.kind == .signal else { return false }
        if let sender {
            let expected = sender.hasPrefix(":") ? sender : owner
            if let expected, message.sender != expected { return false }
        }
        if let path, message.path != path { return false }
        if let pathNamespace, let messagePath = message.path {
            let prefix = pathNamespace == "/" ? "/" : pathNamespace + "/"
            if messagePath != pathNamespace, !messagePath.hasPrefix(prefix) { return false }
        } else if pathNamespace != nil {
            return false
        }
        if let interface, message.interface != interface { return false }
        if let member, message.member != member { return false }
        if let arg0 {
            guard case .string(let first)? = message.body.first, first == arg0 else { return false }
        }
        return true
    }
}
