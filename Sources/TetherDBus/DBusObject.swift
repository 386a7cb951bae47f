/// An object this connection offers on the bus (a BlueZ GATT application's services and
/// characteristics, an advertisement).
///
/// The connection answers the standard interfaces for it (`Properties.Get`/`GetAll`,
/// `ObjectManager.GetManagedObjects` for the objects below a path, `Introspectable`, `Peer`);
/// everything else is the object's to answer.
public protocol DBusObject: Sendable {
    /// The interfaces it implements, with their properties as they are now.
    var interfaces: [String: [String: DBusValue]] { get }

    /// Answers a call of one of its own methods: `call.reply(…)` or `call.errorReply(…)`.
    func handle(_ call: DBusMessage) async -> DBusMessage
}

/// The standard interfaces the connection answers for exported objects.
enum DBusStandardInterfaces {
    static let properties = "org.freedesktop.DBus.Properties"
    static let objectManager = "org.freedesktop.DBus.ObjectManager"
    static let introspectable = "org.freedesktop.DBus.Introspectable"
    static let peer = "org.freedesktop.DBus.Peer"

    /// The answer to `call` from the exported objects by path; nil when the call is for the
    /// object itself to answer.
    static func answer(_ call: DBusMessage, objects: [String: any DBusObject]) -> DBusMessage? {
        let path = call.path ?? "/"
        switch (call.interface, call.member) {
        case (peer, "Ping"), (nil, "Ping"):
            return call.reply()
        case (objectManager, "GetManagedObjects"), (nil, "GetManagedObjects"):
            let prefix = path == "/" ? "/" : path + "/"
            let below = objects.filter { $0.key.hasPrefix(prefix) }.sorted { $0.key < $1.key }
            let entries = below.map { path, object in
                DBusValue.dictionaryEntry(.objectPath(path), interfacesValue(object.interfaces))
            }
            return call.reply([.array(.dictionaryEntry(key: .objectPath, value: .array(.dictionaryEntry(key: .string, value: .properties))), entries)])
        case (introspectable, "Introspect"), (nil, "Introspect"):
            return call.reply([.string(introspection(path: path, objects: objects))])
        default:
            break
        }
        guard let object = objects[path] else {
            return call.errorReply("org.freedesktop.DBus.Error.UnknownObject", "no object at \(path)")
        }
        guard call.interface == properties else { return nil }
        let interfaces = object.interfaces
        switch (call.member, call.body.first?.stringValue) {
        case ("Get", let name?):
            guard call.body.count == 2, let property = call.body[1].stringValue else { return invalidArguments(call) }
            guard let value = interfaces[name]?[property] else {
                return call.errorReply("org.freedesktop.DBus.Error.InvalidArgs", "no property \(property) of \(name) at \(path)")
            }
            return call.reply([.variant(value)])
        case ("GetAll", let name?):
            return call.reply([.properties(interfaces[name] ?? [:])])
        case ("Set", _):
            return call.errorReply("org.freedesktop.DBus.Error.PropertyReadOnly", "the properties at \(path) are read-only")
        default:
            return invalidArguments(call)
        }
    }

    static func interfacesValue(_ interfaces: [String: [String: DBusValue]]) -> DBusValue {
        .array(
            .dictionaryEntry(key: .string, value: .properties),
            interfaces.sorted { $0.key < $1.key }.map { .dictionaryEntry(.string($0.key), .properties($0.value)) })
    }

    private static func invalidArguments(_ call: DBusMessage) -> DBusMessage {
        call.errorReply("org.freedesktop.DBus.Error.InvalidArgs", "\(call.member ?? "the call") has arguments of signature \(call.signature)")
    }

    /// Enough introspection XML for tools that look before they call: the interfaces by name and
    /// the child nodes.
    static func introspection(path: String, objects: [String: any DBusObject]) -> String {
        var xml = "<!DOCTYPE node PUBLIC \"-//freedesktop//DTD D-BUS Object Introspection 1.0//EN\" "
        xml += "\"http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd\">\n<node>\n"
        for name in (objects[path]?.interfaces.keys.sorted() ?? []) + [properties, introspectable, peer] {
            xml += "  <interface name=\"\(name)\"/>\n"
        }
        let prefix = path == "/" ? "/" : path + "/"
        var children = Set<String>()
        for key in objects.keys where key.hasPrefix(prefix) {
            if let child = key.dropFirst(prefix.count).split(separator: "/").first { children.insert(String(child)) }
        }
        for child in children.sorted() { xml += "  <node name=\"\(child)\"/>\n" }
        return xml + "</node>\n"
    }
}
