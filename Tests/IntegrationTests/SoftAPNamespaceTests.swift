import Foundation
import Testing
import TetherCore
import TetherTestSupport

/// GAgent SoftAP as a phone lives it, in network namespaces the test creates: the phone reaches
/// the device on its access point (10.10.100.0/24, the device at 10.10.100.254), gives it the
/// credentials, then leaves the access point for the router's network (192.168.1.0/24), where the
/// device, having joined, announces itself by broadcast. Nothing leaves the namespaces.
@Suite(
    "SoftAP with the phone moving between the device's access point and the router",
    .enabled(if: NetworkNamespaces.usable, "needs root and `ip` (iproute2) to create network namespaces"),
    .enabled(if: Executables.available, "the executables are not built next to the tests"),
    .timeLimit(.minutes(1))
)
struct SoftAPNamespaceTests {
    @Test("0x0001 on the access point, the phone moves, the device's 0x0019 heard on the router's network")
    func phoneMoves() async throws {
        let product = Fixtures.root.appendingPathComponent("products/pet-house.json").path
        let suffix = "\(getpid() % 10000)\(UInt16.random(in: 0...999))"
        let (phone, device) = ("tether-phone-\(suffix)", "tether-ap-\(suffix)")
        let (phoneAP, deviceAP, phoneLAN, deviceLAN) = ("pap\(suffix)", "dap\(suffix)", "plan\(suffix)", "dlan\(suffix)")
        let ip = NetworkNamespaces.ip
        try await ip("netns", "add", phone)
        do {
            try await ip("netns", "add", device)
            try await Self.run(phone: phone, device: device, links: (phoneAP, deviceAP, phoneLAN, deviceLAN), product: product)
        } catch {
            _ = try? await Executables.run("/usr/sbin/ip", ["netns", "del", device])
            _ = try? await Executables.run("/usr/sbin/ip", ["netns", "del", phone])
            throw error
        }
        _ = try? await Executables.run("/usr/sbin/ip", ["netns", "del", device])
        _ = try? await Executables.run("/usr/sbin/ip", ["netns", "del", phone])
    }

    static func run(
        phone: String, device: String, links: (phoneAP: String, deviceAP: String, phoneLAN: String, deviceLAN: String), product: String
    ) async throws {
        let ip = NetworkNamespaces.ip
        let (phoneAP, deviceAP, phoneLAN, deviceLAN) = links
        // The device's access point, and the router's network the device joins.
        try await ip("-n", phone, "link", "add", phoneAP, "type", "veth", "peer", "name", deviceAP, "netns", device)
        try await ip("-n", phone, "link", "add", phoneLAN, "type", "veth", "peer", "name", deviceLAN, "netns", device)
        try await ip("-n", device, "addr", "add", "10.10.100.254/24", "dev", deviceAP)
        try await ip("-n", phone, "addr", "add", "10.10.100.2/24", "dev", phoneAP)
        try await ip("-n", device, "addr", "add", "192.168.1.23/24", "broadcast", "192.168.1.255", "dev", deviceLAN)
        try await ip("-n", phone, "addr", "add", "192.168.1.10/24", "broadcast", "192.168.1.255", "dev", phoneLAN)
        for (namespace, link) in [(phone, phoneAP), (device, deviceAP), (device, deviceLAN), (phone, "lo"), (device, "lo")] {
            try await ip("-n", namespace, "link", "set", link, "up")
        }
        // The device's broadcasts leave by the router's network; the phone's LAN link is down
        // while it is on the access point.
        try await ip("-n", device, "route", "add", "default", "dev", deviceLAN)

        let agent = try Executables.Background(
            "/usr/sbin/ip",
            [
                "netns", "exec", device, Executables.path("tether-agent"), "simulate", "--product", product, "--bind", "0.0.0.0", "--softap",
                "--json", "--seed", "9", "--interval", "0",
            ])
        defer { agent.stop() }
        let line = try #require(await next(agent.lines) { _ in true })
        let did = try #require(try JSONValue.parse(line)["did"]?.stringValue)

        let onboarding = try Executables.Background(
            "/usr/sbin/ip",
            [
                "netns", "exec", phone, Executables.path("tether"), "onboard", "softap", "--device", "10.10.100.254:12414", "--wifi-ssid", "HomeNet",
                "--wifi-password", "correct-horse", "--timeout", "20",
            ])
        defer { onboarding.stop() }
        _ = try #require(await next(onboarding.lines) { $0.contains("device_acknowledged") })
        // The phone leaves the access point and joins the router's network, as a real phone does.
        try await ip("-n", phone, "link", "set", phoneAP, "down")
        try await ip("-n", phone, "link", "set", phoneLAN, "up")
        try await ip("-n", phone, "route", "add", "default", "dev", phoneLAN)
        let found = try #require(await next(onboarding.lines, timeout: .seconds(20)) { $0.hasPrefix("device ") })
        #expect(found == "device \(did) 192.168.1.23")
    }
}
