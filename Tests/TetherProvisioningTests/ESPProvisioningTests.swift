import Testing
import TetherCore
import TetherProvisioning
import TetherTestSupport

/// ESP-IDF provisioning's messages and security 1 against the reference's bytes and known-answer
/// vector (`shared/reference/provisioning.md` §2–§3).
@Suite("ESP-IDF provisioning: messages and security 1")
struct ESPProvisioningTests {
    static func hex(_ text: String) -> [UInt8] { [UInt8](tetherHex: text.filter { !$0.isWhitespace })! }

    @Test("security 0: the handshake's bytes")
    func sec0() throws {
        #expect(ESPSessionMessage.sec0Command.encoded() == Self.hex("52 03 a2 01 00"))
        #expect(ESPSessionMessage.sec0Response(status: .success).encoded() == Self.hex("52 05 08 01 aa 01 00"))
        #expect(try ESPSessionMessage(decoding: Self.hex("52 03 a2 01 00")) == .sec0Command)
        #expect(try ESPSessionMessage(decoding: Self.hex("52 05 08 01 aa 01 00")) == .sec0Response(status: .success))
    }

    @Test("security 1: the reference's vector (PoP abcd1234), wire shapes, and both sides agreeing")
    func sec1Vector() throws {
        let pop = Array("abcd1234".utf8)
        var client = try ESPSecurity1.Client(pop: pop, privateKey: Self.hex("0102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f20"))
        var device = try ESPSecurity1.Device(
            pop: pop, privateKey: Self.hex("2122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f40"),
            random: Self.hex("a0a1a2a3a4a5a6a7a8a9aaabacadaeaf"))
        #expect(client.publicKey == Self.hex("07a37cbc142093c8b755dc1b10e86cb426374ad16aa853ed0bdfc0b2b86d1c7c"))
        #expect(device.publicKey == Self.hex("5869aff450549732cbaaed5e5df9b30a6da31cb0e5742bad5ad4a1a768f1a67b"))
        let command0 = client.command0()
        #expect(command0.encoded() == Self.hex("10 01 5a 25 a2 01 22 0a 20") + client.publicKey)
        let response0 = try device.respond(to: try ESPSessionMessage(decoding: command0.encoded()))
        #expect(response0.encoded() == Self.hex("10 01 5a 39 08 01 aa 01 34 12 20") + device.publicKey + Self.hex("1a 10 a0a1a2a3a4a5a6a7a8a9aaabacadaeaf"))
        let command1 = try #require(try client.command1(after: try ESPSessionMessage(decoding: response0.encoded())))
        #expect(command1 == .sec1Command1(clientVerifyData: Self.hex("527d5d0604ab390e387edfb2edd69291a9f5d3bc2486b9bfaf469157071f4eee")))
        #expect(command1.encoded().prefix(11) == Self.hex("10 01 5a 27 08 02 b2 01 22 12 20")[...])
        let response1 = try device.respond(to: try ESPSessionMessage(decoding: command1.encoded()))
        #expect(response1 == .sec1Response1(status: .success, deviceVerifyData: Self.hex("2269f29d63597181e5a9ccb15dc0acde206674f74dbc91b1a0ad13a412d8403d")))
        #expect(response1.encoded().prefix(11) == Self.hex("10 01 5a 27 08 03 ba 01 22 1a 20")[...])
        try client.finish(after: try ESPSessionMessage(decoding: response1.encoded()))
        #expect(client.isEstablished && device.isEstablished)
        // The data phase: one keystream, request then response.
        let request = ESPWiFiConfigMessage.setConfig(ssid: Array("myssid".utf8), passphrase: Array("mypassword".utf8)).encoded()
        let sealed = try client.encrypt(request)
        #expect(sealed != request)
        #expect(try device.decrypt(sealed) == request)
        let answer = ESPWiFiConfigMessage.setConfigResponse(status: .success).encoded()
        #expect(try client.decrypt(try device.encrypt(answer)) == answer)
    }

    @Test("security 1: a wrong proof of possession fails the session on both sides")
    func sec1WrongPoP() throws {
        var client = try ESPSecurity1.Client(pop: Array("wrong".utf8))
        var device = try ESPSecurity1.Device(pop: Array("abcd1234".utf8))
        let command1 = try #require(try client.command1(after: try device.respond(to: client.command0())))
        let error = #expect(throws: TetherError.self) { try device.respond(to: command1) }
        #expect(error?.code == .sessionNegotiationFailed)
        #expect(throws: TetherError.self) { try device.encrypt([1, 2, 3]) }
    }

    @Test("prov-config: the reference's plaintext examples, and every message round-trips")
    func wifiConfig() throws {
        #expect(ESPWiFiConfigMessage.getStatus.encoded() == Self.hex("52 00"))
        let set = ESPWiFiConfigMessage.setConfig(ssid: Array("myssid".utf8), passphrase: Array("mypassword".utf8))
        #expect(set.encoded() == Self.hex("08 02 62 14 0a 06 6d 79 73 73 69 64 12 0a 6d 79 70 61 73 73 77 6f 72 64"))
        #expect(ESPWiFiConfigMessage.applyConfig.encoded() == Self.hex("08 04"))
        #expect(try ESPWiFiConfigMessage(decoding: Self.hex("08 04 72 00")) == .applyConfig)
        #expect(try ESPWiFiConfigMessage(decoding: []) == .getStatus)
        let messages: [ESPWiFiConfigMessage] = [
            .getStatus, set, .setConfigResponse(status: .success), .applyConfig, .applyConfigResponse(status: .internalError),
            .getStatusResponse(ESPWiFiStatus(state: .connected, connected: .init(ipv4: "192.168.1.23", ssid: Array("myssid".utf8), channel: 6))),
            .getStatusResponse(ESPWiFiStatus(state: .connected)),
            .getStatusResponse(ESPWiFiStatus(state: .connectionFailed, failReason: .authError)),
            .getStatusResponse(ESPWiFiStatus(state: .connectionFailed, failReason: .networkNotFound)),
            .getStatusResponse(ESPWiFiStatus(state: .connecting, attemptsRemaining: 3)),
            .getStatusResponse(ESPWiFiStatus(state: .disconnected, tetherFailDetail: .dhcpTimeout)),
            .getStatusResponse(ESPWiFiStatus(state: .disconnected, tetherFailDetail: .joinRefused)),
        ]
        for message in messages { #expect(try ESPWiFiConfigMessage(decoding: message.encoded()) == message) }
        // Tether's field 100 (tag 0xa0 0x06) comes after ESP-IDF's own; a decoder that does not know it skips it.
        let dhcp = ESPWiFiConfigMessage.getStatusResponse(ESPWiFiStatus(state: .disconnected, tetherFailDetail: .dhcpTimeout)).encoded()
        #expect(dhcp == Self.hex("08 01 5a 05 10 02 a0 06 02"))
    }

    @Test("prov-scan: every message round-trips, negative signal strengths included")
    func scan() throws {
        let networks = [
            ESPWiFiNetwork(ssid: Array("HomeNet".utf8), channel: 6, rssi: -40, bssid: [2, 0, 0, 0, 0, 1], auth: .wpa2PSK),
            ESPWiFiNetwork(ssid: Array("Open".utf8), channel: 11, rssi: -87, bssid: [], auth: .open),
            ESPWiFiNetwork(ssid: [0xe6, 0xb5], channel: 1, rssi: 0, bssid: [], auth: ESPWiFiAuthMode(rawValue: 9)),
        ]
        let messages: [ESPWiFiScanMessage] = [
            .start(blocking: true, groupChannels: 5), .startResponse(status: .success), .status, .statusResponse(status: .success, finished: true, count: 3),
            .results(startIndex: 0, count: 100), .resultsResponse(status: .success, networks: networks),
            .resultsResponse(status: .invalidArgument, networks: []),
        ]
        for message in messages { #expect(try ESPWiFiScanMessage(decoding: message.encoded()) == message) }
    }

    @Test("prov-ctrl: every message round-trips")
    func control() throws {
        for message in [ESPWiFiCtrlMessage.reset, .resetResponse(status: .success), .reprovision, .reprovisionResponse(status: .invalidArgument)] {
            #expect(try ESPWiFiCtrlMessage(decoding: message.encoded()) == message)
        }
        #expect(throws: TetherError.self) { try ESPWiFiCtrlMessage(decoding: [0x08, 0x09]) }
    }

    @Test("malformed messages are typed errors, never a crash (bounded)")
    func malformed() throws {
        for bytes in [
            [0x52], [0x52, 0x05, 0x08], [0x0a, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01], [0x0f], [0x10, 0x09, 0x5a, 0x00],
        ] as [[UInt8]] {
            #expect(throws: TetherError.self) { try ESPSessionMessage(decoding: bytes) }
        }
        var generator = SplitMix64(seed: 15)
        for _ in 0..<20_000 {
            let bytes = (0..<Int(generator.next() % 24)).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
            if let message = try? ESPSessionMessage(decoding: bytes) { #expect(try ESPSessionMessage(decoding: message.encoded()) == message) }
            if let message = try? ESPWiFiConfigMessage(decoding: bytes) { #expect(try ESPWiFiConfigMessage(decoding: message.encoded()) == message) }
            if let message = try? ESPWiFiScanMessage(decoding: bytes) { #expect(try ESPWiFiScanMessage(decoding: message.encoded()) == message) }
        }
    }

    @Test("the fuzz target from real messages, mutated (bounded)")
    func mutated() {
        for seed in [UInt64(3), 4] {
            if let failure = FuzzTargets.run(iterations: 2_000, seed: seed, seeds: FuzzTargets.espProvisioningSeeds, target: FuzzTargets.espProvisioning) {
                Issue.record("\(failure)")
            }
        }
    }
}
