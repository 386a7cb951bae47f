import NIOCore
import NIOTestUtils
import Testing
import TetherCore
import TetherMQTT
import TetherTestSupport

@Suite("MQTT codec")
struct MQTTCodecTests {
    static func payload(_ text: String) -> ByteBuffer { ByteBuffer(string: text) }

    /// Packets with their exact bytes, built by hand from the MQTT 3.1.1 and 5.0 specifications.
    static let vectors: [(MQTTPacket, MQTTVersion, String)] = [
        (.connect(MQTTConnect(version: .v311, clientID: "", keepAlive: 60)), .v311, "10 0c 00 04 4d 51 54 54 04 02 00 3c 00 00"),
        (.connect(MQTTConnect(version: .v31, clientID: "x", cleanStart: false, keepAlive: 10)), .v31, "10 0f 00 06 4d 51 49 73 64 70 03 00 00 0a 00 01 78"),
        (
            .connect(MQTTConnect(version: .v5, clientID: "c", keepAlive: 60, properties: [.sessionExpiryInterval(3600)])), .v5,
            "10 13 00 04 4d 51 54 54 05 02 00 3c 05 11 00 00 0e 10 00 01 63"
        ),
        (
            .connect(MQTTConnect(version: .v311, clientID: "d", keepAlive: 30, username: "u", password: [0x70],
                                 will: MQTTWill(topic: "w", payload: payload("x"), qos: .atLeastOnce, retain: true))), .v311,
            "10 19 00 04 4d 51 54 54 04 ee 00 1e 00 01 64 00 01 77 00 01 78 00 01 75 00 01 70"
        ),
        (.connack(MQTTConnAck()), .v311, "20 02 00 00"),
        (.connack(MQTTConnAck(reasonCode: .notAuthorized)), .v311, "20 02 00 05"),
        (.connack(MQTTConnAck(sessionPresent: true, properties: [.receiveMaximum(10)])), .v5, "20 06 01 00 03 21 00 0a"),
        (.connack(MQTTConnAck(reasonCode: .badUserNameOrPassword)), .v5, "20 03 00 86 00"),
        (.publish(MQTTPublish(topic: "a/b", payload: payload("hi"))), .v311, "30 07 00 03 61 2f 62 68 69"),
        (.publish(MQTTPublish(topic: "a/b", payload: payload("hi"), qos: .atLeastOnce, packetID: 10)), .v311, "32 09 00 03 61 2f 62 00 0a 68 69"),
        (.publish(MQTTPublish(topic: "a/b", payload: payload("hi"), qos: .exactlyOnce, retain: true, dup: true, packetID: 10)), .v311, "3d 09 00 03 61 2f 62 00 0a 68 69"),
        (.publish(MQTTPublish(topic: "a", payload: payload("hi"), properties: [.messageExpiryInterval(5)])), .v5, "30 0b 00 01 61 05 02 00 00 00 05 68 69"),
        (.puback(MQTTAck(packetID: 10)), .v311, "40 02 00 0a"),
        (.puback(MQTTAck(packetID: 10, reasonCode: .noMatchingSubscribers)), .v5, "40 03 00 0a 10"),
        (.pubrec(MQTTAck(packetID: 10)), .v5, "50 02 00 0a"),
        (.pubrel(MQTTAck(packetID: 10)), .v311, "62 02 00 0a"),
        (.pubcomp(MQTTAck(packetID: 10)), .v311, "70 02 00 0a"),
        (.subscribe(MQTTSubscribe(packetID: 1, subscriptions: [MQTTTopicSubscription(filter: "a/#", qos: .atLeastOnce)])), .v311, "82 08 00 01 00 03 61 2f 23 01"),
        (
            .subscribe(MQTTSubscribe(packetID: 1, subscriptions: [MQTTTopicSubscription(filter: "a/+", qos: .exactlyOnce, noLocal: true, retainAsPublished: true, retainHandling: .doNotSend)])), .v5,
            "82 09 00 01 00 00 03 61 2f 2b 2e"
        ),
        (.suback(MQTTSubAck(packetID: 1, reasonCodes: [.grantedQoS1, .unspecifiedError])), .v311, "90 04 00 01 01 80"),
        (.unsubscribe(MQTTUnsubscribe(packetID: 2, filters: ["a/#"])), .v311, "a2 07 00 02 00 03 61 2f 23"),
        (.unsuback(MQTTSubAck(packetID: 2, reasonCodes: [])), .v311, "b0 02 00 02"),
        (.unsuback(MQTTSubAck(packetID: 2, reasonCodes: [.success, .noSubscriptionExisted])), .v5, "b0 05 00 02 00 00 11"),
        (.pingreq, .v311, "c0 00"),
        (.pingresp, .v5, "d0 00"),
        (.disconnect(MQTTReasonPacket()), .v311, "e0 00"),
        (.disconnect(MQTTReasonPacket(reasonCode: .sessionTakenOver)), .v5, "e0 01 8e"),
        (.auth(MQTTReasonPacket(reasonCode: .continueAuthentication, properties: [.authenticationMethod("x")])), .v5, "f0 06 18 04 15 00 01 78"),
    ]

    @Test("known packets encode to their bytes and decode back", arguments: 0..<vectors.count)
    func knownVectors(index: Int) throws {
        let (packet, version, hex) = Self.vectors[index]
        let bytes = [UInt8].hex(hex)
        #expect(Array(try packet.bytes(version: version).readableBytesView) == bytes)
        var buffer = ByteBuffer(bytes: bytes)
        let decodingVersion: MQTTVersion? = if case .connect = packet { nil } else { version }
        #expect(try MQTTPacket.read(from: &buffer, version: decodingVersion) == packet)
        #expect(buffer.readableBytes == 0)
    }

    static let rich: [MQTTPacket] = [
        .connect(MQTTConnect(
            version: .v5, clientID: "client-ü", cleanStart: false, keepAlive: 1200, username: "user", password: Array("secret".utf8),
            will: MQTTWill(topic: "will/t", payload: payload("bye"), qos: .exactlyOnce, properties: [.willDelayInterval(10), .contentType("text/plain"), .userProperty("k", "v")]),
            properties: [.sessionExpiryInterval(60), .receiveMaximum(20), .maximumPacketSize(1024), .topicAliasMaximum(5), .requestProblemInformation(1), .userProperty("a", "b"), .userProperty("a", "c")]
        )),
        .connack(MQTTConnAck(sessionPresent: true, properties: [
            .assignedClientIdentifier("auto-1"), .serverKeepAlive(30), .maximumQoS(1), .retainAvailable(0), .wildcardSubscriptionAvailable(1),
            .subscriptionIdentifierAvailable(1), .sharedSubscriptionAvailable(1), .reasonString("welcome"), .topicAliasMaximum(10),
        ])),
        .publish(MQTTPublish(topic: "t/1", payload: ByteBuffer(bytes: [0, 1, 2, 255]), qos: .atLeastOnce, packetID: 65535, properties: [
            .payloadFormatIndicator(0), .responseTopic("r/1"), .correlationData([9, 9]), .subscriptionIdentifier(268_435_455), .subscriptionIdentifier(7), .topicAlias(3),
        ])),
        .publish(MQTTPublish(topic: "", payload: payload("aliased"), properties: [.topicAlias(3)])),
        .pubrel(MQTTAck(packetID: 7, reasonCode: .packetIdentifierNotFound, properties: [.reasonString("gone")])),
        .subscribe(MQTTSubscribe(packetID: 9, subscriptions: [MQTTTopicSubscription(filter: "$share/g/a/#", qos: .atLeastOnce), MQTTTopicSubscription(filter: "+", retainHandling: .sendOnNewSubscribe)], properties: [.subscriptionIdentifier(42)])),
        .suback(MQTTSubAck(packetID: 9, reasonCodes: [.grantedQoS1, .notAuthorized], properties: [.reasonString("no")])),
        .unsubscribe(MQTTUnsubscribe(packetID: 10, filters: ["a", "b/+"], properties: [.userProperty("x", "y")])),
        .disconnect(MQTTReasonPacket(reasonCode: .serverMoved, properties: [.serverReference("other:1883"), .sessionExpiryInterval(0)])),
    ]

    @Test("every v5 packet with properties round-trips", arguments: 0..<rich.count)
    func richRoundTrip(index: Int) throws {
        let packet = Self.rich[index]
        var buffer = try packet.bytes(version: .v5)
        let version: MQTTVersion? = if case .connect = packet { nil } else { .v5 }
        #expect(try MQTTPacket.read(from: &buffer, version: version) == packet)
    }

    @Test("every split of a stream of packets decodes to the same packets")
    func verifier() throws {
        let v311 = Self.vectors.filter { $0.1 == .v311 }.map(\.0).filter { if case .connect = $0 { false } else { true } }
        let pairs = try v311.map { packet in (try packet.bytes(version: .v311), [packet]) }
        try ByteToMessageDecoderVerifier.verifyDecoder(inputOutputPairs: pairs) { MQTTPacketDecoder(version: .v311) }
        let v5 = try Self.rich.filter { if case .connect = $0 { false } else { true } }.map { packet in (try packet.bytes(version: .v5), [packet]) }
        try ByteToMessageDecoderVerifier.verifyDecoder(inputOutputPairs: v5) { MQTTPacketDecoder(version: .v5) }
    }

    @Test("a server's decoder learns the version from CONNECT")
    func serverDecoder() throws {
        var decoder = MQTTPacketDecoder()
        var buffer = try MQTTPacket.connect(MQTTConnect(version: .v5, clientID: "a")).bytes(version: .v5)
        try MQTTPacket.puback(MQTTAck(packetID: 1, reasonCode: .noMatchingSubscribers)).write(to: &buffer, version: .v5)
        _ = try decoder.decode(buffer: &buffer)
        #expect(decoder.version == .v5)
        #expect(try decoder.decode(buffer: &buffer) == .puback(MQTTAck(packetID: 1, reasonCode: .noMatchingSubscribers)))
    }

    @Test("a topic name's bytes are read as the UTF-8 rules say: ASCII, multi-byte, ill-formed and U+0000, against an independent check")
    func topicNameBytes() throws {
        var random = SplitMix64(seed: 21)
        let alphabet: [[UInt8]] = [
            [0x61], [0x2F], [0x7F], [0x00], [0x2B], [0x23], [0xC3, 0xA9], [0xE2, 0x82, 0xAC], [0xF0, 0x9F, 0x92, 0xA1],
            [0xC3], [0x80], [0xED, 0xA0, 0x80], [0xF8], [0xC0, 0xAF],
        ]
        for _ in 0..<5_000 {
            var topic: [UInt8] = []
            for _ in 0..<Int.random(in: 1...12, using: &random) { topic += alphabet[Int.random(in: 0..<alphabet.count, using: &random)] }
            var body: [UInt8] = [UInt8(topic.count >> 8), UInt8(topic.count & 0xFF)] + topic + [0x78]
            body.insert(contentsOf: [0x30, UInt8(body.count)], at: 0)
            var buffer = ByteBuffer(bytes: body)
            let expected = String(validating: topic, as: UTF8.self).flatMap { text in
                topic.contains(where: { $0 == 0 || $0 == 0x2B || $0 == 0x23 }) ? nil : text
            }
            do {
                guard case .publish(let publish)? = try MQTTPacket.read(from: &buffer, version: .v311) else {
                    Issue.record("no PUBLISH for \(topic)")
                    continue
                }
                #expect(publish.topic == expected, "\(topic)")
                #expect(Array(publish.topic.utf8) == topic)
            } catch {
                #expect(expected == nil, "\(topic) refused: \(error)")
                #expect(error.code == .malformedPacket)
            }
        }
    }

    @Test(
        "malformed packets are refused with a typed error",
        arguments: [
            ("30 80 80 80 80 01", MQTTError.Code.malformedPacket, MQTTVersion.v311),   // 5-byte remaining length
            ("36 05 00 01 61 00 01", .malformedPacket, .v311),                        // QoS 3
            ("38 04 00 01 61 78", .malformedPacket, .v311),                           // DUP on QoS 0
            ("30 04 00 01 2b 78", .malformedPacket, .v311),                           // wildcard in a topic name
            ("30 04 00 01 23 78", .malformedPacket, .v311),
            ("30 04 00 00 78 78", .malformedPacket, .v311),                           // empty topic name in 3.1.1
            ("30 05 00 02 c3 28 78", .malformedPacket, .v311),                        // invalid UTF-8
            ("30 05 00 02 61 00 78", .malformedPacket, .v311),                        // U+0000
            ("32 05 00 01 61 00 00", .malformedPacket, .v311),                        // packet identifier 0
            ("80 08 00 01 00 03 61 2f 23 01", .malformedPacket, .v311),               // SUBSCRIBE flags must be 0010
            ("82 08 00 01 00 03 61 23 2f 01", .malformedPacket, .v311),               // # not last
            ("82 08 00 01 00 03 61 2f 23 04", .malformedPacket, .v311),               // reserved option bits (3.1.1)
            ("82 02 00 01", .protocolError, .v311),                                   // no filters
            ("60 02 00 01", .malformedPacket, .v311),                                 // PUBREL flags
            ("c0 01 00", .malformedPacket, .v311),                                    // PINGREQ with a body
            ("e0 01 00", .malformedPacket, .v311),                                    // 3.1.1 DISCONNECT with a body
            ("f0 00", .malformedPacket, .v311),                                       // AUTH in 3.1.1
            ("00 00", .malformedPacket, .v5),                                         // type 0 is reserved
            ("40 03 00 01 00", .malformedPacket, .v311),                              // 3.1.1 PUBACK has 2 bytes
            ("30 06 00 01 61 02 11 00", .protocolError, .v5),                         // session expiry in PUBLISH
            ("30 09 00 01 61 04 01 00 01 00 78", .protocolError, .v5),                // property given twice
            ("30 07 00 01 61 02 01 02 78", .protocolError, .v5),                      // payload format 2
            ("30 07 00 01 61 05 02 00 00", .malformedPacket, .v5),                    // truncated properties
            ("30 04 00 00 00 78", .malformedPacket, .v5),                             // empty topic without an alias
            ("82 09 00 01 00 00 03 61 2f 2b 30", .malformedPacket, .v5),              // retain handling 3
            ("20 02 02 00", .malformedPacket, .v311),                                 // CONNACK reserved flags
            ("20 02 00 06", .malformedPacket, .v311),                                 // reserved 3.1.1 return code (found by libFuzzer)
        ]
    )
    func malformed(hex: String, code: MQTTError.Code, version: MQTTVersion) {
        var buffer = ByteBuffer(bytes: [UInt8].hex(hex))
        #expect {
            _ = try MQTTPacket.read(from: &buffer, version: version)
        } throws: { error in
            (error as? MQTTError)?.code == code
        }
    }

    @Test(
        "CONNECT rules: protocol name and level, reserved flag, will flags, password without user name",
        arguments: [
            ("10 0c 00 04 4d 51 54 54 06 02 00 3c 00 00", MQTTError.Code.unsupportedProtocolVersion),
            ("10 0c 00 04 4d 51 54 58 04 02 00 3c 00 00", .unsupportedProtocolVersion),
            ("10 0c 00 04 4d 51 54 54 04 03 00 3c 00 00", .malformedPacket),
            ("10 0c 00 04 4d 51 54 54 04 1a 00 3c 00 00", .malformedPacket),
            ("10 0c 00 04 4d 51 54 54 04 22 00 3c 00 00", .malformedPacket),
            ("10 0f 00 04 4d 51 54 54 04 42 00 3c 00 00 00 01 70", .malformedPacket),
            ("11 0c 00 04 4d 51 54 54 04 02 00 3c 00 00", .malformedPacket),
        ]
    )
    func connectRules(hex: String, code: MQTTError.Code) {
        var buffer = ByteBuffer(bytes: [UInt8].hex(hex))
        #expect { _ = try MQTTPacket.read(from: &buffer, version: nil) } throws: { ($0 as? MQTTError)?.code == code }
    }

    @Test("only CONNECT is accepted before the version is known")
    func firstPacket() {
        var buffer = ByteBuffer(bytes: [0xC0, 0x00])
        #expect { _ = try MQTTPacket.read(from: &buffer, version: nil) } throws: { ($0 as? MQTTError)?.code == .protocolError }
    }

    @Test("a packet above the maximum size is refused as soon as its length is known")
    func maximumSize() throws {
        var buffer = ByteBuffer(bytes: [0x30, 0xFF, 0x7F])
        #expect { _ = try MQTTPacket.read(from: &buffer, version: .v5, maximumPacketSize: 1024) } throws: { ($0 as? MQTTError)?.code == .packetTooLarge }
        var small = ByteBuffer(bytes: [0x30, 0x7F])
        #expect(try MQTTPacket.read(from: &small, version: .v5, maximumPacketSize: 1024) == nil)
    }

    @Test("partial input returns nil and leaves the buffer untouched")
    func partial() throws {
        let bytes = Array(try MQTTPacket.publish(MQTTPublish(topic: "a/b", payload: Self.payload(String(repeating: "x", count: 200)))).bytes(version: .v311).readableBytesView)
        for cut in [0, 1, 2, 3, 10, bytes.count - 1] {
            var buffer = ByteBuffer(bytes: bytes[0..<cut])
            #expect(try MQTTPacket.read(from: &buffer, version: .v311) == nil)
            #expect(buffer.readableBytes == cut)
        }
    }

    @Test("encoding refuses what the wire cannot carry")
    func encodingLimits() {
        let long = String(repeating: "a", count: 70_000)
        #expect { _ = try MQTTPacket.publish(MQTTPublish(topic: long, payload: ByteBuffer())).bytes(version: .v311) } throws: { ($0 as? MQTTError)?.code == .invalidArgument }
        #expect { _ = try MQTTPacket.publish(MQTTPublish(topic: "a", payload: ByteBuffer(), qos: .atLeastOnce)).bytes(version: .v311) } throws: { ($0 as? MQTTError)?.code == .invalidArgument }
    }
}

@Suite("MQTT topics")
struct MQTTTopicTests {
    @Test("matching, with wildcards and the $ rule", arguments: [
        ("a/b", "a/b", true), ("a/+", "a/b", true), ("a/+", "a/b/c", false), ("a/#", "a", true), ("a/#", "a/b/c", true),
        ("#", "a/b", true), ("+/+", "a/b", true), ("+", "/a", false), ("+/a", "/a", true), ("a/+/c", "a//c", true),
        ("#", "$SYS/x", false), ("+/x", "$SYS/x", false), ("$SYS/#", "$SYS/x", true), ("a/b", "a/b/", false), ("a/b/#", "a/b", true),
    ])
    func matching(filter: String, topic: String, expected: Bool) {
        #expect(MQTTTopic.matches(filter: filter, topic: topic) == expected)
    }

    @Test("invalid filters are refused", arguments: ["", "a/#/b", "a#", "a/b+", "$share/", "$share/g", "$share//a", "$share/g+/a"])
    func invalidFilters(filter: String) {
        #expect(throws: MQTTError.self) { try MQTTTopic.validateFilter(filter) }
    }

    @Test("valid filters are accepted", arguments: ["#", "+", "a/+/b", "/", "$share/g/a/#", "$SYS/#", "a//b"])
    func validFilters(filter: String) throws {
        try MQTTTopic.validateFilter(filter)
    }

    @Test("shared subscriptions split into group and filter")
    func shared() {
        #expect(MQTTTopic.sharedSubscription("$share/g1/a/+/c")! == ("g1", "a/+/c"))
        #expect(MQTTTopic.sharedSubscription("a/b") == nil)
    }
}
