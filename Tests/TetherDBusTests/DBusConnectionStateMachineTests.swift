import TetherCore
import Testing

@testable import TetherDBus

@Suite("D-Bus connection state machine")
struct DBusConnectionStateMachineTests {
    typealias Machine = DBusConnectionStateMachine<String, String>

    static func running() -> Machine {
        var machine = Machine()
        _ = machine.started(uid: 0)
        _ = machine.received(.authenticationLine("OK 0123"))
        _ = machine.received(.message(DBusMessage(kind: .methodReturn, serial: 1, replySerial: 1, body: [.string(":1.9")])))
        return machine
    }

    @Test("authenticates with EXTERNAL as the uid in hex-encoded digits, then BEGIN and Hello, then is ready")
    func startup() throws {
        var machine = Machine()
        guard case .write(.authentication(let auth)) = machine.started(uid: 1000) else { Issue.record("no AUTH"); return }
        #expect(auth == "\0AUTH EXTERNAL 31303030\r\n")
        guard case .writeAll(let outbound) = machine.received(.authenticationLine("OK 3f2a")) else { Issue.record("no BEGIN"); return }
        #expect(outbound.count == 2)
        guard case .authentication("BEGIN\r\n") = outbound[0], case .message(let hello) = outbound[1] else { Issue.record("not BEGIN + Hello"); return }
        #expect(hello.member == "Hello" && hello.destination == "org.freedesktop.DBus" && hello.serial == 1)
        // An unrelated message before Hello's reply changes nothing.
        guard case .none = machine.received(.message(DBusMessage.signal(path: "/", interface: "a.b", member: "C"))) else { Issue.record("acted"); return }
        guard case .ready(":1.5") = machine.received(.message(DBusMessage(kind: .methodReturn, serial: 1, replySerial: 1, body: [.string(":1.5")]))) else {
            Issue.record("not ready"); return
        }
        #expect(machine.uniqueName == ":1.5")
    }

    @Test("a refused authentication or Hello fails the start")
    func refused() {
        var machine = Machine()
        _ = machine.started(uid: 0)
        guard case .failStartup(let error) = machine.received(.authenticationLine("REJECTED EXTERNAL")) else { Issue.record("accepted"); return }
        #expect(error.code == .connectionFailed)
        #expect(throws: TetherError.self) { try machine.outgoing(.signal(path: "/", interface: "a.b", member: "C")).get() }

        var other = Machine()
        _ = other.started(uid: 0)
        _ = other.received(.authenticationLine("OK 1"))
        guard case .failStartup = other.received(.message(DBusMessage(kind: .error, serial: 2, errorName: "a.Denied", replySerial: 1))) else {
            Issue.record("Hello error accepted"); return
        }
    }

    @Test("a call's reply resumes its waiter once; a reply nobody waits for is ignored")
    func replies() throws {
        var machine = Self.running()
        let call = try machine.outgoing(.methodCall(destination: "org.bluez", path: "/", interface: "a.b", member: "C")).get()
        #expect(call.serial == 2)
        guard case .none = machine.wait(serial: call.serial, "caller") else { Issue.record("resumed early"); return }
        let reply = DBusMessage(kind: .methodReturn, serial: 5, replySerial: call.serial)
        guard case .resume("caller", .success(reply)) = machine.received(.message(reply)) else { Issue.record("not resumed"); return }
        guard case .none = machine.received(.message(reply)) else { Issue.record("resumed twice"); return }
    }

    @Test("a call abandoned before or after its waiter is registered fails exactly once")
    func abandon() throws {
        var machine = Self.running()
        let early = try machine.outgoing(.methodCall(destination: nil, path: "/", interface: nil, member: "A")).get()
        guard case .none = machine.abandon(serial: early.serial, Machine.cancelled) else { Issue.record("no waiter yet"); return }
        guard case .resume("early", .failure(let error)) = machine.wait(serial: early.serial, "early") else { Issue.record("waits forever"); return }
        #expect(error.code == .cancelled)

        let late = try machine.outgoing(.methodCall(destination: nil, path: "/", interface: nil, member: "B")).get()
        _ = machine.wait(serial: late.serial, "late")
        guard case .resume("late", .failure(let timeout)) = machine.abandon(serial: late.serial, TetherError(.timeout, "t")) else {
            Issue.record("not failed"); return
        }
        #expect(timeout.code == .timeout)
        guard case .none = machine.received(.message(DBusMessage(kind: .methodReturn, serial: 9, replySerial: late.serial))) else {
            Issue.record("a late reply resumed again"); return
        }
    }

    @Test("signals reach the subscribers whose rules match, method calls are dispatched")
    func signalsAndCalls() {
        var machine = Self.running()
        _ = machine.subscribe(DBusMatchRule(interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged"), owner: nil, "properties")
        let bluez = machine.subscribe(DBusMatchRule(sender: "org.bluez", pathNamespace: "/org/bluez"), owner: ":1.3", "bluez")
        var signal = DBusMessage.signal(path: "/org/bluez/hci0", interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged")
        signal.sender = ":1.3"
        guard case .deliver(let both, _) = machine.received(.message(signal)) else { Issue.record("not delivered"); return }
        #expect(Set(both) == ["properties", "bluez"])
        signal.sender = ":1.4"
        guard case .deliver(["properties"], _) = machine.received(.message(signal)) else { Issue.record("wrong sender delivered"); return }
        #expect(machine.unsubscribe(bluez) != nil)
        signal.member = "Other"
        guard case .none = machine.received(.message(signal)) else { Issue.record("unmatched delivered"); return }
        guard case .dispatch = machine.received(.message(.methodCall(destination: ":1.9", path: "/x", interface: nil, member: "Get"))) else {
            Issue.record("call not dispatched"); return
        }
    }

    @Test("closing fails every waiter and ends every subscriber, once")
    func closing() throws {
        var machine = Self.running()
        let call = try machine.outgoing(.methodCall(destination: nil, path: "/", interface: nil, member: "A")).get()
        _ = machine.wait(serial: call.serial, "waiter")
        _ = machine.subscribe(DBusMatchRule(), owner: nil, "subscriber")
        let closed = machine.closed(TetherError(.connectionClosed, "gone"))
        #expect(closed.startup == nil && closed.waiters == ["waiter"] && closed.subscribers == ["subscriber"])
        let again = machine.closed(TetherError(.connectionClosed, "gone"))
        #expect(again.waiters.isEmpty && again.subscribers.isEmpty)
        guard case .resume(_, .failure(let error)) = machine.wait(serial: 7, "after") else { Issue.record("waits on a closed bus"); return }
        #expect(error.code == .connectionClosed)
    }

    @Test("match rules are written as AddMatch reads them and match as the bus does")
    func matchRules() {
        let rule = DBusMatchRule(sender: "org.bluez", pathNamespace: "/org/bluez", interface: "org.freedesktop.DBus.Properties", arg0: "it's")
        #expect(
            rule.text
                == #"type='signal',sender='org.bluez',path_namespace='/org/bluez',interface='org.freedesktop.DBus.Properties',arg0='it'\''s'"#)
        var signal = DBusMessage.signal(path: "/org/bluez", interface: "org.freedesktop.DBus.Properties", member: "P", body: [.string("it's")])
        #expect(rule.matches(signal))
        signal.path = "/org/bluezz"
        #expect(!rule.matches(signal))
        signal.path = "/org/bluez/hci0/dev_1"
        #expect(rule.matches(signal))
        signal.body = [.string("other")]
        #expect(!rule.matches(signal))
    }

    @Test("addresses: the first unix:path of a list, escapes decoded; others refused")
    func addresses() throws {
        #expect(try DBusAddress("tcp:host=x,port=1;unix:guid=1,path=/tmp/a%20b").path == "/tmp/a b")
        #expect(throws: TetherError.self) { try DBusAddress("unix:abstract=/tmp/x") }
        #expect(try DBusAddress.system(environment: [:]).path == "/var/run/dbus/system_bus_socket")
        #expect(try DBusAddress.system(environment: ["DBUS_SYSTEM_BUS_ADDRESS": "unix:path=/run/x"]).path == "/run/x")
    }
}
