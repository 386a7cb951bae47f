import TetherProvisioning

extension FuzzTargets {
    static let smartConfigCredentials = try! SmartConfigCredentials(ssid: "TestAP", password: "secretpass", bssid: [0x11, 0x22, 0x33, 0x44, 0x55, 0x66])

    /// The three encoders' output as 16-bit big-endian lengths: inputs that decode.
    public static let smartConfigSeeds: [[UInt8]] = [
        ESPTouchV1.guide + (try! ESPTouchV1.datum(smartConfigCredentials, phoneIP: [192, 168, 4, 2])),
        try! ESPTouchV2.packets(smartConfigCredentials, options: .init(aesKey: Array("1234567890123456".utf8))),
        Array(try! AirKiss.lengths(smartConfigCredentials, random: 42).prefix(400)),
    ].map { lengths in lengths.flatMap { [UInt8($0 >> 8 & 0xFF), UInt8($0 & 0xFF)] } }

    /// The input read as 16-bit frame lengths, fed to every smart-config decoder: nothing crashes,
    /// and whatever decodes is consistent (lengths within the protocols' limits).
    public static func smartConfig(_ bytes: [UInt8]) -> String? {
        var v1 = ESPTouchV1Decoder()
        var v2 = ESPTouchV2Decoder(aesKey: Array("1234567890123456".utf8))
        var airKiss = AirKissDecoder()
        for index in stride(from: 0, to: bytes.count - 1, by: 2) {
            let length = Int(bytes[index]) << 8 | Int(bytes[index + 1])
            if let result = v1.feed(frameLength: length), result.bssid.count != 6 || result.password.count > 255 { return "ESP-Touch v1: \(result)" }
            if let result = v2.feed(frameLength: length), result.ssid.count > 127 || result.password.count > 127 { return "ESP-Touch v2: \(result)" }
            // L (password ‖ random ‖ SSID) is one byte, and the SSID's CRC was checked.
            if let result = airKiss.feed(frameLength: length), result.ssid.count + result.password.count >= 255 { return "AirKiss: \(result)" }
        }
        return nil
    }
}

extension FuzzTargets {
    /// ESP-IDF provisioning messages, as a device receives them.
    public static let espProvisioningSeeds: [[UInt8]] = [
        ESPSessionMessage.sec0Command.encoded(), ESPSessionMessage.sec1Command0(clientPublicKey: [UInt8](repeating: 7, count: 32)).encoded(),
        ESPSessionMessage.sec2Command0(username: Array("wifiprov".utf8), clientPublicKey: [UInt8](repeating: 9, count: 384)).encoded(),
        ESPWiFiConfigMessage.setConfig(ssid: Array("myssid".utf8), passphrase: Array("mypassword".utf8)).encoded(),
        ESPWiFiScanMessage.resultsResponse(status: .success, networks: [.init(ssid: [65], channel: 6, rssi: -40, bssid: [2, 0, 0, 0, 0, 1], auth: .wpa2PSK)])
            .encoded(),
        ESPWiFiConfigMessage.getStatusResponse(ESPWiFiStatus(state: .connected, connected: .init(ipv4: "192.168.1.2", ssid: [1], channel: 6))).encoded(),
    ]

    /// Both decoders over one input: nothing crashes, and what decodes re-encodes to the same message.
    public static func espProvisioning(_ bytes: [UInt8]) -> String? {
        if let message = try? ESPSessionMessage(decoding: bytes), (try? ESPSessionMessage(decoding: message.encoded())) != message {
            return "a session message does not survive a round trip: \(message)"
        }
        if let message = try? ESPWiFiConfigMessage(decoding: bytes), (try? ESPWiFiConfigMessage(decoding: message.encoded())) != message {
            return "a prov-config message does not survive a round trip: \(message)"
        }
        if let message = try? ESPWiFiCtrlMessage(decoding: bytes), (try? ESPWiFiCtrlMessage(decoding: message.encoded())) != message {
            return "a prov-ctrl message does not survive a round trip: \(message)"
        }
        if let message = try? ESPWiFiScanMessage(decoding: bytes), (try? ESPWiFiScanMessage(decoding: message.encoded())) != message {
            return "a prov-scan message does not survive a round trip: \(message)"
        }
        return nil
    }
}
