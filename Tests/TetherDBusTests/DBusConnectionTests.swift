import Logging
import TetherCore
import TetherTestSupport
import Testing

@testable import TetherDBus

/// Against a real dbus-daemon of our own (never the machine's buses).
@Suite("D-Bus connection against dbus-daemon", .enabled(if: DBusDaemon.available))
struct DBusConnectionTests {
    static func configuration(_ daemon: DBusDaemon) -> DBusConnection.Configuration {
        var configuration = DBusConnection.Configuration(address: DBusAddress(path: daemon.socketPath))
        configuration.callTimeout = .seconds(5)
        return configuration
    }

    @Test("authenticates, gets a unique name, and calls the bus")
    func hello() async throws {
        let daemon = try DBusDaemon()
        try await DBusConnection.withConnection(configuration: Self.configuration(daemon)) { connection in
            #expect(connection.uniqueName.hasPrefix(":1."))
            let names = try await connection.call(.bus(member: "ListNames"))
            #expect(names.body.first?.arrayValue?.contains(.string(connection.uniqueName)) == true)
            let id = try await connection.call(.bus(member: "GetId"))
            #expect(id.body.first?.stringValue?.utf8.count == 32)
        }
    }

    @Test("an error reply is a typed error naming the D-Bus error; exchange returns it as a message")
    func errors() async throws {
        let daemon = try DBusDaemon()
        try await DBusConnection.withConnection(configuration: Self.configuration(daemon)) { connection in
            let error = await #expect(throws: TetherError.self) {
                try await connection.call(.bus(member: "GetNameOwner", body: [.string("org.bluez")]))
            }
            #expect(error?.code == .busCallFailed)
            #expect(error?.message.hasPrefix("org.freedesktop.DBus.Error.NameHasNoOwner") == true)
            let reply = try await connection.exchange(.bus(member: "NoSuchMethod"))
            #expect(reply.kind == .error && reply.errorName == "org.freedesktop.DBus.Error.UnknownMethod")
        }
    }

    @Test("signals one connection sends reach another's matching subscription, and only those")
    func signals() async throws {
        let daemon = try DBusDaemon()
        try await DBusConnection.withConnection(configuration: Self.configuration(daemon)) { listener in
            try await DBusConnection.withConnection(configuration: Self.configuration(daemon)) { sender in
                let stream = try await listener.signals(
                    DBusMatchRule(sender: sender.uniqueName, pathNamespace: "/com/example", interface: "com.example.Events"))
                try sender.send(.signal(path: "/elsewhere", interface: "com.example.Events", member: "Ignored", body: [.int32(0)]))
                for index in 1...3 {
                    try sender.send(
                        .signal(path: "/com/example/thing", interface: "com.example.Events", member: "Changed", body: [.int32(Int32(index)), .bytes([1, 2])]))
                }
                var received: [Int64] = []
                for await signal in stream {
                    #expect(signal.sender == sender.uniqueName && signal.member == "Changed")
                    received.append(signal.body.first?.integerValue ?? -1)
                    if received.count == 3 { break }
                }
                #expect(received == [1, 2, 3])
                // A call to a connection that exports nothing is answered, not left waiting.
                let reply = try await listener.exchange(.methodCall(destination: sender.uniqueName, path: "/x", interface: "com.example.X", member: "Y"))
                #expect(reply.errorName == "org.freedesktop.DBus.Error.UnknownObject")
            }
        }
    }

    @Test("when the bus goes away, subscriptions end and calls fail as closed")
    func busGone() async throws {
        var daemon: DBusDaemon? = try DBusDaemon()
        try await DBusConnection.withConnection(configuration: Self.configuration(daemon!)) { connection in
            let stream = try await connection.signals(DBusMatchRule(interface: "com.example.Events"))
            daemon = nil
            for await _ in stream { Issue.record("a signal from a dead bus") }
            let error = await #expect(throws: TetherError.self) { try await connection.call(.bus(member: "ListNames")) }
            #expect(error?.code == .connectionClosed)
        }
    }

    /// A counter with a property and a method, as a test object.
    struct Counter: DBusObject {
        let start: Int32
        var interfaces: [String: [String: DBusValue]] { ["com.example.Counter": ["Start": .int32(start), "Name": .string("counter")]] }
        func handle(_ call: DBusMessage) async -> DBusMessage {
            guard call.member == "Add", case .int32(let amount)? = call.body.first else {
                return call.errorReply("com.example.Error.Unknown", "no such method")
            }
            return call.reply([.int32(start + amount)])
        }
    }

    @Test("exported objects answer their methods, their properties and GetManagedObjects; PropertiesChanged reaches a subscriber")
    func exports() async throws {
        let daemon = try DBusDaemon()
        try await DBusConnection.withConnection(configuration: Self.configuration(daemon)) { server in
            try server.export(Counter(start: 40), at: "/com/example/app/counter0")
            try server.export(Counter(start: 1), at: "/com/example/app/counter1")
            try await DBusConnection.withConnection(configuration: Self.configuration(daemon)) { client in
                let name = server.uniqueName
                func call(_ path: String, _ interface: String?, _ member: String, _ body: [DBusValue] = []) async throws -> DBusMessage {
                    try await client.exchange(.methodCall(destination: name, path: path, interface: interface, member: member, body: body))
                }
                #expect(try await call("/com/example/app/counter0", "com.example.Counter", "Add", [.int32(2)]).body == [.int32(42)])
                let get = try await call(
                    "/com/example/app/counter0", "org.freedesktop.DBus.Properties", "Get", [.string("com.example.Counter"), .string("Start")])
                #expect(get.body == [.variant(.int32(40))])
                let all = try await call("/com/example/app/counter1", "org.freedesktop.DBus.Properties", "GetAll", [.string("com.example.Counter")])
                #expect(all.body.first?.propertiesValue == ["Start": .int32(1), "Name": .string("counter")])
                let managed = try await call("/com/example/app", "org.freedesktop.DBus.ObjectManager", "GetManagedObjects")
                let objects = try #require(managed.body.first?.dictionaryValue)
                #expect(Set(objects.keys) == [.objectPath("/com/example/app/counter0"), .objectPath("/com/example/app/counter1")])
                #expect(try await call("/com/example/app/counter0", "com.example.Counter", "Nope").errorName == "com.example.Error.Unknown")
                #expect(try await call("/elsewhere", "com.example.Counter", "Add", [.int32(1)]).errorName == "org.freedesktop.DBus.Error.UnknownObject")
                let set = try await call(
                    "/com/example/app/counter0", "org.freedesktop.DBus.Properties", "Set",
                    [.string("com.example.Counter"), .string("Start"), .variant(.int32(0))])
                #expect(set.errorName == "org.freedesktop.DBus.Error.PropertyReadOnly")

                let changes = try await client.signals(
                    DBusMatchRule(sender: name, path: "/com/example/app/counter0", interface: "org.freedesktop.DBus.Properties"))
                try server.emitPropertiesChanged(path: "/com/example/app/counter0", interface: "com.example.Counter", changed: ["Start": .int32(7)])
                for await signal in changes {
                    #expect(signal.body.first == .string("com.example.Counter"))
                    #expect(signal.body[1].propertiesValue == ["Start": .int32(7)])
                    break
                }
                server.unexport("/com/example/app/counter0")
                #expect(
                    try await call("/com/example/app/counter0", "com.example.Counter", "Add", [.int32(1)]).errorName
                        == "org.freedesktop.DBus.Error.UnknownObject")
            }
        }
    }

    @Test("nobody listening at the address is a connection error")
    func noBus() async throws {
        await #expect(throws: TetherError.self) {
            try await DBusConnection.withConnection(configuration: .init(address: DBusAddress(path: "/tmp/tether-no-such-bus.sock"))) { _ in }
        }
    }
}
