import Foundation
import Testing
import TetherCore
import TetherTestSupport

/// Broadcast discovery between two hosts made of network namespaces joined by a veth pair
/// (10.77.0.1 the app, 10.77.0.2 the device). Nothing leaves the namespaces the test creates.
@Suite(
    "Broadcast discovery in network namespaces",
    .enabled(if: NetworkNamespaces.usable, "needs root and `ip` (iproute2) to create network namespaces; broadcast discovery is not tested"),
    .enabled(if: Executables.available, "the executables are not built next to the tests"),
    .timeLimit(.minutes(1))
)
struct BroadcastDiscoveryTests {
    @Test("tether lan discover finds a device by limited and subnet broadcast, then controls it over TCP")
    func broadcast() async throws {
        let product = Fixtures.root.appendingPathComponent("products/pet-house.json").path
        try await NetworkNamespaces.withPair { app, device in
            let agent = try Executables.Background(
                "/usr/sbin/ip",
                [
                    "netns", "exec", device, Executables.path("tether-agent"), "simulate", "--product", product,
                    "--bind", "0.0.0.0", "--bindable", "--json", "--seed", "5", "--interval", "0",
                ])
            defer { agent.stop() }
            let line = try #require(await next(agent.lines) { _ in true })
            let did = try #require(try JSONValue.parse(line)["did"]?.stringValue)
            for broadcast in ["255.255.255.255", "10.77.0.255"] {
                let found = try await Executables.run(
                    "/usr/sbin/ip",
                    [
                        "netns", "exec", app, Executables.path("tether"), "lan", "discover", "--broadcast", broadcast, "--timeout", "1.5", "--json",
                    ])
                #expect(found.status == 0, "\(found.stderr)")
                let list = try JSONValue.parse(found.stdout)
                #expect(list.arrayValue?.first?["did"] == .string(did), "via \(broadcast)")
                #expect(list.arrayValue?.first?["host"] == "10.77.0.2")
            }
            let written = try await Executables.run(
                "/usr/sbin/ip",
                [
                    "netns", "exec", app, Executables.path("tether"), "lan", "write", "--host", "10.77.0.2", "--product", product, "--json", "LED_R=200",
                ])
            #expect(try JSONValue.parse(written.stdout)["data"]?["LED_R"] == .int(200), "\(written.stderr)")
        }
    }
}

extension BroadcastDiscoveryTests {
    @Test("tether tuya scan hears a Tuya device's broadcast beacons, then reads it by the address they came from", arguments: ["3.3", "3.5"])
    func tuyaBroadcast(version: String) async throws {
        let product = Fixtures.root.appendingPathComponent("products/pet-house.json").path
        try await NetworkNamespaces.withPair { app, device in
            let agent = try Executables.Background(
                "/usr/sbin/ip",
                [
                    "netns", "exec", device, Executables.path("tether-agent"), "simulate", "--product", product, "--protocol", "tuya",
                    "--version", version, "--bind", "0.0.0.0", "--tuya-id", "eb0123456789abcdefghij", "--local-key", "thisisarealkey00",
                    "--json", "--interval", "0", "--announce-interval", "0.3",
                ])
            defer { agent.stop() }
            _ = try #require(await next(agent.lines) { _ in true })
            let found = try await Executables.run(
                "/usr/sbin/ip",
                [
                    "netns", "exec", app, Executables.path("tether"), "tuya", "scan", "--timeout", "1.5", "--json",
                ])
            #expect(found.status == 0, "\(found.stderr)")
            let list = try JSONValue.parse(found.stdout)
            #expect(list.arrayValue?.first?["id"] == "eb0123456789abcdefghij" && list.arrayValue?.first?["host"] == "10.77.0.2", "\(found.stdout)")
            let status = try await Executables.run(
                "/usr/sbin/ip",
                [
                    "netns", "exec", app, Executables.path("tether"), "tuya", "status", "--host", "10.77.0.2", "--id", "eb0123456789abcdefghij",
                    "--local-key", "thisisarealkey00", "--version", version, "--product", product, "--json",
                ])
            #expect(try JSONValue.parse(status.stdout)["data"]?["LED_OnOff"] == .bool(false), "\(status.stderr)")
        }
    }
}

/// Two network namespaces joined by a veth pair, created and removed by the test.
enum NetworkNamespaces {
    static func ip(_ arguments: String...) async throws {
        let result = try await Executables.run("/usr/sbin/ip", arguments)
        guard result.status == 0 else { throw TetherError(.invalidArgument, "ip \(arguments.joined(separator: " ")): \(result.stderr)") }
    }

    static var usable: Bool {
        getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/sbin/ip")
    }

    static func withPair(_ body: (_ app: String, _ device: String) async throws -> Void) async throws {
        let suffix = "\(getpid())-\(UInt16.random(in: 0...UInt16.max))"
        let app = "tether-app-\(suffix)"
        let device = "tether-dev-\(suffix)"
        let vethApp = "tapp\(suffix.suffix(6).filter(\.isNumber))"
        let vethDevice = "tdev\(suffix.suffix(6).filter(\.isNumber))"
        try await ip("netns", "add", app)
        do {
            try await ip("netns", "add", device)
            try await ip("-n", app, "link", "add", vethApp, "type", "veth", "peer", "name", vethDevice, "netns", device)
            try await ip("-n", app, "addr", "add", "10.77.0.1/24", "broadcast", "10.77.0.255", "dev", vethApp)
            try await ip("-n", device, "addr", "add", "10.77.0.2/24", "broadcast", "10.77.0.255", "dev", vethDevice)
            for (namespace, link) in [(app, vethApp), (device, vethDevice)] {
                try await ip("-n", namespace, "link", "set", "lo", "up")
                try await ip("-n", namespace, "link", "set", link, "up")
                // The limited broadcast 255.255.255.255 needs a route out of the namespace's only link.
                try await ip("-n", namespace, "route", "add", "default", "dev", link)
            }
            try await body(app, device)
        } catch {
            _ = try? await Executables.run("/usr/sbin/ip", ["netns", "del", device])
            _ = try? await Executables.run("/usr/sbin/ip", ["netns", "del", app])
            throw error
        }
        _ = try? await Executables.run("/usr/sbin/ip", ["netns", "del", device])
        _ = try? await Executables.run("/usr/sbin/ip", ["netns", "del", app])
    }
}
