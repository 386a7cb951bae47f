import Foundation
import Testing
import TetherCore
@testable import TetherAgent

/// The Wi-Fi stations onboarding joins through: the simulated router's faults and timing, and
/// how NetworkManager's answers are read (nmcli itself cannot run here: no Wi-Fi in CI).
@Suite("Wi-Fi stations: the simulated router and NetworkManager's answers", .timeLimit(.minutes(1)))
struct WiFiStationTests {
    @Test("the simulated router: a scan strongest first, each fault its outcome, a DHCP timeout twice the join delay")
    func simulatedRouter() async throws {
        var router = SimulatedRouter(networks: [.init(ssid: "Attic", password: "", rssi: -70), .init(ssid: "HomeNet", password: "pw", rssi: -40)])
        #expect(try await router.scan().map(\.ssid) == ["HomeNet", "Attic"])
        #expect(try await router.scan().map(\.secured) == [true, false])
        #expect(await router.join(ssid: "HomeNet", password: "pw") == .joined(ip: "192.168.1.23"))
        #expect(await router.join(ssid: "HomeNet", password: "no") == .wrongPassword)
        #expect(await router.join(ssid: "Cellar", password: "") == .networkNotFound)
        router.faults = .init(refuseJoin: true)
        #expect(await router.join(ssid: "HomeNet", password: "pw") == .joinRefused)
        router.faults = .init(joinDelay: .milliseconds(50), dhcpTimeout: true, goneNetworks: ["Attic"])
        #expect(await router.join(ssid: "Attic", password: "") == .networkNotFound)
        #expect(router.joinDuration(.noAddress) == .milliseconds(100) && router.joinDuration(.networkNotFound) == .milliseconds(50))
        #expect(await router.join(ssid: "HomeNet", password: "pw") == .noAddress)
    }

    @Test("nmcli's terse list: escaped colons, the strongest of repeated SSIDs, hidden networks skipped, signal as dBm")
    func networkManagerList() {
        let text = """
            HomeNet:80:6:WPA2
            Cafe\\:Free:40:11:
            HomeNet:30:1:WPA2
            :90:6:WPA2
            Attic:55:36:--
            garbage line
            """
        let networks = NetworkManagerStation.parseList(text)
        #expect(networks.map(\.ssid) == ["HomeNet", "Attic", "Cafe:Free"])
        #expect(networks.map(\.rssi) == [-60, -73, -80])
        #expect(networks.map(\.secured) == [true, false, false])
        #expect(networks.first?.channel == 6)
    }

    @Test("the Wi-Fi device among NetworkManager's devices")
    func wifiDevice() {
        #expect(NetworkManagerStation.firstWiFiDevice("eth0:ethernet\nlo:loopback\nwlp2s0:wifi\nwlan1:wifi\n") == "wlp2s0")
        #expect(NetworkManagerStation.firstWiFiDevice("eth0:ethernet\n") == nil)
    }

    @Test("a process's output read as it comes, its status, and a run that cannot start", .enabled(if: FileManager.default.isExecutableFile(atPath: "/bin/sh")))
    func processRunner() async {
        let quick = await NetworkManagerStation.run("/bin/sh", ["-c", "echo hi"], timeout: .seconds(20))
        #expect(quick.standardOutput == "hi\n")
        // More than a pipe holds: a runner reading only at the end would stall the process.
        let big = await NetworkManagerStation.run("/bin/sh", ["-c", "head -c 200000 /dev/zero | tr '\\0' x; echo oops >&2; exit 3"], timeout: .seconds(20))
        #expect(big.status == 3 && big.standardOutput.count == 200_000 && big.standardError == "oops\n")
        let echoed = await NetworkManagerStation.run("/bin/sh", ["-c", "read line; echo got $line"], input: "secret\n", timeout: .seconds(20))
        #expect(echoed.standardOutput == "got secret\n")
        let missing = await NetworkManagerStation.run("/nonexistent/nmcli", [], timeout: .seconds(5))
        #expect(missing.status == 127 && missing.standardError.contains("cannot run"))
        let slow = await NetworkManagerStation.run("/bin/sh", ["-c", "exec sleep 30"], timeout: .milliseconds(200))
        #expect(slow.status != 0, "killed at its timeout")
    }

    @Test(
        "nmcli's failures as onboarding's outcomes",
        arguments: [
            (Int32(0), "Device 'wlan0' successfully activated", WiFiJoinResult.joined(ip: "")),
            (10, "Error: No network with SSID 'Cellar' found.", .networkNotFound),
            (4, "Error: Connection activation failed: (7) Secrets were required, but not provided.", .wrongPassword),
            (4, "Error: Connection activation failed: IP configuration could not be reserved (no available address, timeout, etc.).", .noAddress),
            (4, "Error: Connection activation failed: (5) The Wi-Fi network could not be found", .joinRefused),
            (3, "Error: Timeout expired (45 seconds)", .joinRefused),
        ])
    func networkManagerOutcomes(status: Int32, message: String, expected: WiFiJoinResult) {
        #expect(NetworkManagerStation.joinResult(status: status, message: message) == expected)
    }
}
