import NIOCore
import Testing
import TetherCore
import TetherGizwitsLAN
import TetherTestSupport

/// The byte-level vectors of `shared/reference/gizwits-lan.md`.
@Suite("GAgent LAN frames: reference vectors")
struct FrameVectorTests {
    static let identity = GizwitsDeviceInfo(
        did: "gKufzxZwYeyd3Skbsb6mza",
        mac: .hex("ac cf 23 50 d4 46"),
        firmwareVersion: "04020006",
        productKey: "4214bf2d79694a259232431b6f2ef46b"
    )

    static let discoveryResponse = [UInt8].hex(
        """
        00 00 00 03 57 00 00 04
        00 16 67 4b 75 66 7a 78 5a 77 59 65 79 64 33 53 6b 62 73 62 36 6d 7a 61
        00 06 ac cf 23 50 d4 46
        00 08 30 34 30 32 30 30 30 36
        00 20 34 32 31 34 62 66 32 64 37 39 36 39 34 61 32 35 39 32 33 32 34 33 31 62 36 66 32 65 66 34 36 62
        00 00 00 00 00 00 00 00
        """)

    static let configurationSuccess = [UInt8].hex(
        """
        00 00 00 03 45 00 00 19
        00 06 ac cf 23 50 d4 46
        00 20 34 32 31 34 62 66 32 64 37 39 36 39 34 61 32 35 39 32 33 32 34 33 31 62 36 66 32 65 66 34 36 62
        00 16 67 4b 75 66 7a 78 5a 77 59 65 79 64 33 53 6b 62 73 62 36 6d 7a 61
        """)

    /// Every message with its exact bytes, from the reference.
    static let vectors: [(GizwitsLANMessage, [UInt8])] = [
        (.discoveryRequest, .hex("00 00 00 03 03 00 00 03")),
        (.discoveryResponse(identity), discoveryResponse),
        (.announcement(identity), Array(discoveryResponse[0..<7]) + [0x05] + Array(discoveryResponse[8...])),
        (.configurationSuccess(mac: identity.mac, productKey: identity.productKey, did: identity.did), configurationSuccess),
        (.passcodeRequest, .hex("00 00 00 03 03 00 00 06")),
        (.passcodeResponse("ABCDEFGHIJ"), .hex("00 00 00 03 0f 00 00 07 00 0a 41 42 43 44 45 46 47 48 49 4a")),
        (.passcodeResponse(nil), .hex("00 00 00 03 05 00 00 07 00 00")),
        (.login(passcode: "ABCDEFGHIJ"), .hex("00 00 00 03 0f 00 00 08 00 0a 41 42 43 44 45 46 47 48 49 4a")),
        (.loginResult(.success), .hex("00 00 00 03 04 00 00 09 00")),
        (.loginResult(.refused), .hex("00 00 00 03 04 00 00 09 01")),
        (.heartbeat, .hex("00 00 00 03 03 00 00 15")),
        (.heartbeatReply, .hex("00 00 00 03 03 00 00 16")),
        (.hardwareInfoRequest, .hex("00 00 00 03 03 00 00 13")),
        (.hotspotListRequest, .hex("00 00 00 03 03 00 00 0c")),
        (
            .hotspotList([GizwitsHotspot(ssid: "HomeWiFi", rssi: 0x3c), GizwitsHotspot(ssid: "Guest", rssi: 0x28)]),
            .hex("00 00 00 03 16 00 00 0d 00 08 48 6f 6d 65 57 69 46 69 3c 00 05 47 75 65 73 74 28")
        ),
        (.productionTestAck, .hex("00 00 00 03 03 00 00 18")),
        (
            .softAPConfiguration(ssid: "HomeWiFi", key: "secret123"),
            .hex("00 00 00 03 18 00 00 01 00 08 48 6f 6d 65 57 69 46 69 00 09 73 65 63 72 65 74 31 32 33")
        ),
        (
            // Tether's extension: the pairing token after the key.
            .softAPConfiguration(ssid: "HomeWiFi", key: "secret123", pairingToken: "t0k"),
            .hex("00 00 00 03 1d 00 00 01 00 08 48 6f 6d 65 57 69 46 69 00 09 73 65 63 72 65 74 31 32 33 00 03 74 30 6b")
        ),
        (.softAPConfigurationAck, .hex("00 00 00 03 03 00 00 02")),
        (.p0ToDevice(ByteBuffer(bytes: [0x02])), .hex("00 00 00 03 04 00 00 90 02")),
        (.p0WithAck(sn: 1, p0: ByteBuffer(bytes: [0x02])), .hex("00 00 00 03 08 00 00 93 00 00 00 01 02")),
        (
            .p0Ack(sn: 1, p0: ByteBuffer(bytes: [UInt8].hex("03 05 0a 14 1e 03 01 26 3c 02 0a"))),
            .hex("00 00 00 03 12 00 00 94 00 00 00 01 03 05 0a 14 1e 03 01 26 3c 02 0a")
        ),
        (.p0ToDevice(ByteBuffer(bytes: [UInt8].hex("01 05 05 0a 14 1e 03"))), .hex("00 00 00 03 0a 00 00 90 01 05 05 0a 14 1e 03")),
        (
            .p0FromDevice(ByteBuffer(bytes: [UInt8].hex("04 05 0a 14 1e 03 01 26 3c 02 0a"))),
            .hex("00 00 00 03 0e 00 00 91 04 05 0a 14 1e 03 01 26 3c 02 0a")
        ),
        (
            .p0WithAck(sn: 0, p0: ByteBuffer(bytes: [UInt8].hex("04 05 0a 14 1e 03 01 26 3c 02 0a"))),
            .hex("00 00 00 03 12 00 00 93 00 00 00 00 04 05 0a 14 1e 03 01 26 3c 02 0a")
        ),
        (.p0Ack(sn: 0, p0: ByteBuffer()), .hex("00 00 00 03 07 00 00 94 00 00 00 00")),
        (
            .p0WithAck(sn: 7, p0: ByteBuffer(bytes: [UInt8].hex("01 05 05 0a 14 1e 03"))),
            .hex("00 00 00 03 0e 00 00 93 00 00 00 07 01 05 05 0a 14 1e 03")
        ),
    ]

    @Test("every reference message encodes to its bytes and decodes back", arguments: 0..<vectors.count)
    func roundTrip(index: Int) throws {
        let (message, bytes) = Self.vectors[index]
        #expect(Array(message.frame.bytes.readableBytesView) == bytes)
        var buffer = ByteBuffer(bytes: bytes)
        let decoded = try #require(try GizwitsLANMessage.read(from: &buffer))
        #expect(decoded == message)
        #expect(buffer.readableBytes == 0)
        // A datagram holding exactly the frame reads the same.
        #expect(try GizwitsLANMessage(frame: GizwitsLANFrame.read(datagram: ByteBuffer(bytes: bytes))) == message)
    }

    @Test(
        "the varint table of the reference",
        arguments: [
            (0, "00"), (3, "03"), (127, "7f"), (128, "80 01"), (321, "c1 02"), (16_383, "ff 7f"), (16_384, "80 80 01"),
            (2_097_151, "ff ff 7f"), (2_097_152, "80 80 80 01"), (268_435_455, "ff ff ff 7f"),
        ])
    func varints(value: Int, encoding: String) {
        var buffer = ByteBuffer()
        buffer.gizwitsWriteVarint(value)
        #expect(Array(buffer.readableBytesView) == [UInt8].hex(encoding))
    }

    @Test("a frame longer than 127 bytes uses a two-byte length")
    func longFrame() throws {
        let payload = ByteBuffer(bytes: [UInt8](repeating: 0xAB, count: 300))
        let bytes = GizwitsLANMessage.p0FromDevice(payload).frame.bytes
        #expect(Array(bytes.readableBytesView.prefix(8)) == [UInt8].hex("00 00 00 03 af 02 00 00"))
        var buffer = bytes
        #expect(try GizwitsLANMessage.read(from: &buffer) == .p0FromDevice(payload))
    }

    @Test("GAgent's truncated refusal of a passcode (length 0x0f, 10 bytes, then FIN) reads as refused")
    func truncatedRefusal() throws {
        var buffer = ByteBuffer(bytes: [UInt8].hex("00 00 00 03 0f 00 00 07 00 00"))
        #expect(try GizwitsLANMessage.read(from: &buffer) == .passcodeResponse(nil))
        #expect(buffer.readableBytes == 0)
    }

    @Test("0x0001 with trailing bytes that are not a token (an app's padding) still carries the credentials, as GAgent reads it")
    func softAPPadding() throws {
        // ssid "ab", key "c", then one stray byte, then a length prefix promising more than is there.
        for trailer in ["ff", "00 09 41"] {
            let payload = [UInt8].hex("00 02 61 62 00 01 63 " + trailer)
            var buffer = ByteBuffer(bytes: [0, 0, 0, 3, UInt8(3 + payload.count), 0, 0, 1] + payload)
            #expect(try GizwitsLANMessage.read(from: &buffer) == .softAPConfiguration(ssid: "ab", key: "c", pairingToken: nil))
        }
    }

    @Test("GAgent's hardware info with its fixed, too-long length reads from the bytes actually sent")
    func hardwareInfoQuirk() throws {
        let info = GizwitsHardwareInfo(
            wifiHardwareVersion: "ESP_8266", wifiSoftwareVersion: "04020006", mcuHardwareVersion: "00000001",
            mcuSoftwareVersion: "00000002", p0Version: "00000004", wifiFirmwareVersion: "0402", productKey: String(repeating: "a", count: 32)
        )
        var frame = Array(GizwitsLANMessage.hardwareInfo(info).frame.bytes.readableBytesView)
        #expect(frame[4] == 3 + 48 + 2 + 4 + 2 + 32)
        frame[4] = 0x77  // flag + cmd + 116, as GAgent 04020006 writes it
        var buffer = ByteBuffer(bytes: frame + GizwitsLANMessage.heartbeatReply.frame.bytes.readableBytesView)
        #expect(try GizwitsLANMessage.read(from: &buffer) == .hardwareInfo(info))
        #expect(try GizwitsLANMessage.read(from: &buffer) == .heartbeatReply)
        // Reports that arrive in the same read, enough to cover the declared length, stay intact.
        let report = Array(GizwitsLANMessage.p0FromDevice(ByteBuffer(bytes: [UInt8].hex("04 05 0a 14 1e 03 01 26 3c 02 0a"))).frame.bytes.readableBytesView)
        var stream = ByteBuffer(bytes: frame + report + report + report)
        #expect(try GizwitsLANMessage.read(from: &stream) == .hardwareInfo(info))
        for _ in 0..<3 { #expect(try GizwitsLANMessage.read(from: &stream)?.command == .p0FromDevice) }
        #expect(stream.readableBytes == 0)
    }

    @Test("discovery bodies with bytes after mcu_attr are accepted and the bytes kept")
    func discoveryTrailer() throws {
        var info = Self.identity
        info.trailer = Array("m2m.example:1883\u{0}04020034\u{0}".utf8)
        var buffer = GizwitsLANMessage.discoveryResponse(info).frame.bytes
        #expect(try GizwitsLANMessage.read(from: &buffer) == .discoveryResponse(info))
    }

    @Test("a non-zero flag byte is accepted and preserved")
    func flagByte() throws {
        var buffer = ByteBuffer(bytes: [UInt8].hex("00 00 00 03 04 01 00 91 02"))
        let frame = try #require(try GizwitsLANFrame.read(from: &buffer))
        #expect(frame.flag == 1 && frame.command == .p0FromDevice)
        #expect(Array(frame.bytes.readableBytesView) == [UInt8].hex("00 00 00 03 04 01 00 91 02"))
    }
}
