import Foundation
import Testing
import TetherCore
import TetherTestSupport

/// The `tether` and `tether-agent` executables, run as a user runs them.
@Suite("CLI: tether and tether-agent processes", .enabled(if: Executables.available, "the executables are not built next to the tests"), .timeLimit(.minutes(1)))
struct CLITests {
    static let product = Fixtures.root.appendingPathComponent("products/pet-house.json").path

    func tether(_ arguments: String...) async throws -> Executables.Output {
        try await Executables.run(Executables.path("tether"), arguments)
    }

    func json(_ output: Executables.Output) throws -> JSONValue {
        #expect(output.status == 0, "\(output.stderr)")
        return try JSONValue.parse(output.stdout)
    }

    @Test("lan decode prints the reference's device 0x0093 report as one JSON object")
    func decodeReport() async throws {
        let output = try await tether("lan", "decode", "--product", Self.product, "00 00 00 03 12 00 00 93 00 00 00 00 04 05 0a 14 1e 03 01 26 3c 02 0a")
        let value = try json(output)
        #expect(value["cmd"] == .int(0x93))
        #expect(value["sn"] == .int(0))
        #expect(value["action"] == "report")
        #expect(value["data"]?["Motor_Speed"] == .int(-2))
        #expect(value["data"]?["Temperature"] == .int(25))
        #expect(value["data"]?["LED_Color"] == .int(2))
        #expect(value["alerts"]?["Alert_2"] == .bool(true))
        #expect(value["faults"]?["Fault_Motor"] == .bool(true))
    }

    @Test("lan decode takes a bare P0 payload and frames of other commands")
    func decodeOthers() async throws {
        let control = try json(try await tether("lan", "decode", "--product", Self.product, "0105050a141e03"))
        #expect(control["cmd"] == nil)
        #expect(control["action"] == "control")
        #expect(control["data"] == ["LED_OnOff": true, "LED_R": 10])
        let login = try json(try await tether("lan", "decode", "00 00 00 03 04 00 00 09 01"))
        #expect(login["cmd"] == .int(9) && login["action"] == "loginResult" && login["data"]?["success"] == .bool(false))
    }

    @Test("lan decode refuses malformed input with a clear message and a failure status")
    func decodeMalformed() async throws {
        let output = try await tether("lan", "decode", "--product", Self.product, "00 00 00 03 80 80 80 80 01")
        #expect(output.status != 0)
        #expect(output.stderr.contains("malformedFrame"))
    }

    @Test("discover, info, write, status and watch against a tether-agent process")
    func againstAgent() async throws {
        let agent = try Executables.Background(Executables.path("tether-agent"), [
            "simulate", "--product", Self.product, "--bind", "127.0.0.1", "--udp-port", "0", "--tcp-port", "0",
            "--bindable", "--json", "--seed", "11", "--interval", "0.2", "--announce", "none",
        ])
        defer { agent.stop() }
        let line = await next(agent.lines) { _ in true }
        let started = try JSONValue.parse(try #require(line))
        guard case .int(let udp)? = started["udpPort"], case .int(let tcp)? = started["tcpPort"], let did = started["did"]?.stringValue else {
            Issue.record("the agent did not print its ports: \(line ?? "")"); return
        }
        let found = try json(try await tether("lan", "discover", "--broadcast", "127.0.0.1", "--port", "\(udp)", "--timeout", "1", "--json"))
        #expect(found.arrayValue?.first?["did"] == .string(did))

        let host = ["--host", "127.0.0.1", "--port", "\(tcp)"]
        let info = try json(try await Executables.run(Executables.path("tether"), ["lan", "info", "--json"] + host))
        #expect(info["productKey"] == "de9e8d18d9394cce9081b25a531e552b")

        let written = try json(try await Executables.run(Executables.path("tether"), ["lan", "write", "--product", Self.product, "--sn", "5", "--json", "LED_OnOff=on", "LED_Color=Pink", "Motor_Speed=-4"] + host))
        #expect(written["sn"] == .int(5))
        #expect(written["data"]?["LED_Color"] == .int(3) && written["data"]?["Motor_Speed"] == .int(-4))

        let status = try json(try await Executables.run(Executables.path("tether"), ["lan", "status", "--product", Self.product, "--json"] + host))
        #expect(status["data"]?["LED_OnOff"] == .bool(true))

        let watched = try await Executables.run(Executables.path("tether"), ["lan", "watch", "--product", Self.product, "--json", "--count", "2"] + host)
        let reports = watched.stdout.split(separator: "\n").compactMap { try? JSONValue.parse(String($0)) }
        #expect(reports.count == 3, "the current status and two reports: \(watched.stdout) \(watched.stderr)")
        #expect(reports.allSatisfy { $0["data"]?["LED_Color"] == .int(3) })

        let refused = try await Executables.run(Executables.path("tether"), ["lan", "write", "--product", Self.product, "Humidity=3"] + host)
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("readOnlyDataPoint") && refused.stderr.contains("Humidity"))
    }

    @Test("--count 3 puts devices on consecutive loopback addresses with the same ports")
    func countAddresses() async throws {
        let agent = try Executables.Background(Executables.path("tether-agent"), [
            "simulate", "--product", Self.product, "--bind", "127.0.0.1", "--udp-port", "0", "--tcp-port", "0",
            "--count", "3", "--json", "--seed", "12", "--interval", "0", "--announce", "none",
        ])
        defer { agent.stop() }
        var devices: [JSONValue] = []
        for await line in agent.lines {
            devices.append(try JSONValue.parse(line))
            if devices.count == 3 { break }
        }
        #expect(devices.map { $0["host"] } == ["127.0.0.1", "127.0.0.2", "127.0.0.3"])
        #expect(Set(devices.map { $0["did"] }).count == 3)
        // With --udp-port 0 each device has its own system-chosen port; discovery asks each address.
        let arguments = ["lan", "discover", "--timeout", "1", "--json"]
        for device in devices {
            guard let host = device["host"]?.stringValue, case .int(let port)? = device["udpPort"] else { continue }
            let found = try json(try await Executables.run(Executables.path("tether"), arguments + ["--broadcast", host, "--port", "\(port)"]))
            #expect(found.arrayValue?.first?["did"] == device["did"] && found.arrayValue?.first?["host"] == .string(host))
        }
    }

    @Test("tether mqtt sub -C 2 prints what tether mqtt pub and mosquitto_pub publish to mosquitto", .enabled(if: Mosquitto.available, "mosquitto is not installed"))
    func mqttPubSub() async throws {
        let broker = try Mosquitto()
        let port = "\(broker.port)"
        let subscriber = Task {
            try await Executables.run(Executables.path("tether"), ["mqtt", "sub", "-h", "127.0.0.1", "-p", port, "-t", "cli/#", "-q", "1", "-C", "2", "-v", "-V", "5"])
        }
        try await Task.sleep(for: .milliseconds(700))
        // Retained, so that a subscriber still starting up (a loaded machine) gets them on
        // subscribing instead of missing them.
        let published = try await Executables.run(Executables.path("tether"), ["mqtt", "pub", "-h", "127.0.0.1", "-p", port, "-t", "cli/a", "-m", "from tether", "-q", "2", "-r"])
        #expect(published.status == 0, "\(published.stderr)")
        _ = try await Executables.run("/usr/bin/mosquitto_pub", ["-h", "127.0.0.1", "-p", port, "-t", "cli/b", "-m", "from mosquitto", "-q", "1", "-r"])
        let output = try await subscriber.value
        #expect(output.status == 0, "\(output.stderr)")
        #expect(output.stdout.split(separator: "\n") == ["cli/a from tether", "cli/b from mosquitto"])
        let refused = try await Executables.run(Executables.path("tether"), ["mqtt", "pub", "-h", "127.0.0.1", "-p", port, "-t", "bad/#", "-m", "x"])
        #expect(refused.status != 0)
    }

    @Test("tether and tether-agent report the one version of the release")
    func versions() async throws {
        for executable in ["tether", "tether-agent"] {
            let output = try await Executables.run(Executables.path(executable), ["--version"])
            #expect(output.status == 0, "\(output.stderr)")
            #expect(output.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == TetherVersion.current)
        }
    }

    @Test("tether demo discovers, writes to and watches its built-in virtual device")
    func demo() async throws {
        let output = try await tether("demo", "--seconds", "1.5")
        #expect(output.status == 0, "\(output.stderr)")
        #expect(output.stdout.contains("found did="))
        #expect(output.stdout.contains("controllable"))
        #expect(output.stdout.contains("acknowledged sn 1: LED_Color=3, LED_OnOff=true"))
    }
}
