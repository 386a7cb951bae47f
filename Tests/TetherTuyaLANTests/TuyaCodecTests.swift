import NIOCore
import NIOTestUtils
import Testing
import TetherCore
import TetherTestSupport
import TetherTuyaLAN

/// The Tuya local protocol's codec against the reference's vectors (`tuya-lan.md` §8, each checked
/// there with tinytuya's own `unpack_message`), round trips on every version and direction, and
/// every way a frame can be wrong.
@Suite("Tuya LAN codec")
struct TuyaCodecTests {
    static let key = Array("thisisarealkey00".utf8)
    static let deviceID = "eb0123456789abcdefghij"
    static let time: Int64 = 1_700_000_000

    static func hex(_ text: String) -> [UInt8] { [UInt8](tetherHex: text.filter { !$0.isWhitespace })! }

    static func app(_ version: TuyaVersion, key: [UInt8] = key) throws -> TuyaCodec { try TuyaCodec(version: version, key: key, sender: .app) }
    static func device(_ version: TuyaVersion, key: [UInt8] = key) throws -> TuyaCodec { try TuyaCodec(version: version, key: key, sender: .device) }

    static func bytes(_ buffer: ByteBuffer) -> [UInt8] { Array(buffer.readableBytesView) }

    @Test("3.1 DP_QUERY: plaintext JSON with CRC32, byte for byte")
    func v31Query() throws {
        let (command, payload) = TuyaRequest.query(deviceID: Self.deviceID, version: .v31, time: Self.time)
        let frame = try Self.app(.v31).encode(TuyaMessage(sequence: 1, command: command, payload: payload))
        #expect(
            Self.bytes(frame)
                == Self.hex(
                    "000055aa000000010000000a0000007a7b2267774964223a226562303132333435363738396162636465666768696a222c226465764964223a226562303132333435363738396162636465666768696a222c22756964223a226562303132333435363738396162636465666768696a222c2274223a2231373030303030303030227dde8b0b230000aa55"
                ))
        var buffer = frame
        #expect(try Self.device(.v31).decode(&buffer) == TuyaMessage(sequence: 1, command: .query, payload: payload))
    }

    @Test("3.3 CONTROL: the version header in clear, then AES-ECB, byte for byte")
    func v33Control() throws {
        let (command, payload) = TuyaRequest.control(["1": true], deviceID: Self.deviceID, version: .v33, time: Self.time)
        #expect(command == .control)
        let frame = try Self.app(.v33).encode(TuyaMessage(sequence: 2, command: command, payload: payload))
        #expect(
            Self.bytes(frame)
                == Self.hex(
                    "000055aa000000020000000700000087332e3300000000000000000000000006506e24abe22681dace73641f4048e47c931bfc82f081f08344ba87a50b3d14dbbeb07443d79be2eae2ba08e6d16ecb01e1c9c1937c924333d2255d58fa449023830e7e8fdc30d4ce42516bfcd75abbadb09544fec353cbab39e563059f7fafca0dee5074f5aba767cfbf89cddf9621230a178f0000aa55"
                ))
        var buffer = frame
        let read = try #require(try Self.device(.v33).decode(&buffer))
        #expect(read.command == .control && read.payload == payload && read.returnCode == nil)
    }

    @Test("3.3 STATUS from the device: return code, header, AES-ECB; read back as data points")
    func v33Status() throws {
        let status = TuyaStatus(dps: ["1": true], time: Self.time)
        let frame = try Self.device(.v33).encode(TuyaMessage(sequence: 2, command: .status, returnCode: 0, payload: status.payload(deviceID: Self.deviceID, version: .v33)))
        #expect(
            Self.bytes(frame)
                == Self.hex(
                    "000055aa00000002000000080000006b00000000332e3300000000000000000000000006506e24abe22681dace73641f4048e47c931bfc82f081f08344ba87a50b3d14adb09544fec353cbab39e563059f7fafd473692cdc67b07344aaf8fbfab23b78c09eed78d509b306df260a532e6957c5a5afb1420000aa55"
                ))
        var buffer = frame
        let read = try #require(try Self.app(.v33).decode(&buffer))
        #expect(read.returnCode == 0 && read.command == .status)
        #expect(try TuyaStatus(parsing: read.payload) == status)
    }

    @Test("3.4 CONTROL_NEW: the header inside the ciphertext, HMAC-SHA256 trailer, byte for byte")
    func v34Control() throws {
        // The reference's vector carries the 3.3-style JSON, sealed with the local key as the session key.
        let (_, payload) = TuyaRequest.control(["1": true], deviceID: Self.deviceID, version: .v33, time: Self.time)
        let frame = try Self.app(.v34).encode(TuyaMessage(sequence: 3, command: .controlNew, payload: payload))
        #expect(
            Self.bytes(frame)
                == Self.hex(
                    "000055aa000000030000000d000000a41cfc952f063bc9d0fa6783d5c530a41d10c3b5e7eac190b53566f6aae485a2d701e1c9c1937c924333d2255d58fa4490493ea6c0acdfe36020bc4312a3574591f30bab829b3178d4896ff658c7660edc08d5ebafb89f846a2fed14618d66566b9e2326670018ddf4f837ac5c8b32727fa64b62b7c09fd58b392f975982f5c59a8556e580e5b8eb09e6aca8139a06a132d5072d9c0866dc03da851215c60e12120000aa55"
                ))
        var buffer = frame
        #expect(try Self.device(.v34).decode(&buffer)?.payload == payload)
    }

    @Test("3.5 DP_QUERY_NEW: 6699, AES-GCM with the header as AAD, byte for byte")
    func v35Query() throws {
        let (command, payload) = TuyaRequest.query(deviceID: Self.deviceID, version: .v35, time: Self.time)
        let frame = try Self.app(.v35).encode(TuyaMessage(sequence: 4, command: command, payload: payload), iv: Array("0123456789ab".utf8))
        #expect(Self.bytes(frame) == Self.hex("00006699000000000004000000100000001e303132333435363738396162de4282cd7a22131d43d9a03a88fc0239196d00009966"))
        var buffer = frame
        #expect(try Self.device(.v35).decode(&buffer) == TuyaMessage(sequence: 4, command: .queryNew, payload: Array("{}".utf8)))
    }

    @Test("the session key negotiation: the reference's HMACs and keys for 3.4 and 3.5, both sides through their codecs")
    func negotiation() throws {
        let clientNonce = Array("0123456789abcdef".utf8)
        let deviceNonce = Array("fedcba9876543210".utf8)
        #expect(
            try TuyaHandshake.sessionKey(version: .v34, localKey: Self.key, clientNonce: clientNonce, deviceNonce: deviceNonce)
                == Self.hex("e7a46b5db884502ab16647bf59b84389"))
        #expect(
            try TuyaHandshake.sessionKey(version: .v35, localKey: Self.key, clientNonce: clientNonce, deviceNonce: deviceNonce)
                == Self.hex("f36b42461e122923ae5b142946a7b683"))
        for version in [TuyaVersion.v34, .v35] {
            let app = try TuyaHandshake.App(version: version, localKey: Self.key, clientNonce: clientNonce)
            var device = try TuyaHandshake.Device(version: version, localKey: Self.key, deviceNonce: deviceNonce)
            // Every handshake message crosses the wire under the local key.
            var wire = try Self.app(version).encode(app.start(sequence: 1))
            let start = try #require(try Self.device(version).decode(&wire))
            var answer = try Self.device(version).encode(try device.respond(to: start, sequence: 1))
            let response = try #require(try Self.app(version).decode(&answer))
            #expect(response.returnCode == 0)
            #expect(response.payload.dropFirst(16) == Self.hex("469e9f3cc60b265fab0cbfe57b985327affc4a27a87e5f759e2a714c5b66784d")[...])
            let (finish, appKey) = try app.finish(after: response, sequence: 2)
            #expect(finish.payload == Self.hex("2bd243a3d769a219f15aa2f5147dd0fa8cc6fe2b85a2d5e5339ff5855ba8ec9e"))
            var finishWire = try Self.app(version).encode(finish)
            let deviceKey = try device.complete(with: try #require(try Self.device(version).decode(&finishWire)))
            #expect(appKey == deviceKey && appKey.count == 16)
            // A device with another key fails the app's check at step 2, naming it.
            var impostor = try TuyaHandshake.Device(version: version, localKey: Array("0000000000000000".utf8), deviceNonce: deviceNonce)
            let forged = try impostor.respond(to: start, sequence: 1)
            let refused = #expect(throws: TetherError.self) { try app.finish(after: forged, sequence: 2) }
            #expect(refused?.code == .sessionNegotiationFailed && refused?.message.contains("step 2") == true)
            let lateFinish = #expect(throws: TetherError.self) {
                try device.complete(with: TuyaMessage(sequence: 3, command: .sessionKeyFinish, payload: [UInt8](repeating: 0, count: 32)))
            }
            #expect(lateFinish?.code == .sessionNegotiationFailed)
        }
    }

    @Test("a 3.3 announcement on UDP 6667 decodes; announcements of every version round-trip; the 3.5 probe")
    func discovery() throws {
        let datagram = Self.hex(
            "000055aa0000000000000013000000bc00000000c93a7a82e88092c976194993d44403f44712c2a6262fa6ddd2e8cdb851266d1c482611d8caa5248ac6cea65bdad007df9eccca2e6571bc0a9636b764a083da7898b5a7135018ddfa3ca88c5b6c41188dd48182ba55c1c34699c5942905fd52a0f24d14479cf7a3dd4cb43d0f842d0ddcfdf7ba9d1c8e714cfa5026f89d2fc97d5556bb75e4f07f32855bf26d4e0f522718febaf9be838a361895d51d2451d6852dd3a795424f2879a4492a51a7d90f07babbefcf0000aa55"
        )
        let announced = try TuyaDiscovery.announcement(in: datagram)
        #expect(announced == TuyaAnnouncement(ip: "127.0.0.1", deviceID: Self.deviceID, productKey: "keydeadbeef12345", version: "3.3", active: 2, ability: 0, encrypt: true))
        #expect(TuyaDiscovery.udpKey.tetherHex == "6c1ec8e2bb9bb59ab50b0daf649b410a")
        for version in TuyaVersion.allCases {
            let announcement = TuyaAnnouncement(ip: "127.0.0.9", deviceID: Self.deviceID, productKey: "keydeadbeef12345", version: version.rawValue)
            #expect(try TuyaDiscovery.announcement(in: try TuyaDiscovery.datagram(announcement, version: version)) == announcement, "\(version)")
        }
        #expect(try TuyaDiscovery.probeAddress(in: try TuyaDiscovery.probe(appIP: "127.0.0.5")) == "127.0.0.5")
        #expect(try TuyaAnnouncement(json: Array(#"{"ip":"1.2.3.4","gwId":"x","ablilty":3}"#.utf8)).ability == 3)
    }

    @Test("every version, both directions, every command kind: what is written reads back", arguments: TuyaVersion.allCases)
    func roundTrips(version: TuyaVersion) throws {
        let messages = [
            TuyaMessage(sequence: 7, command: .heartbeat, payload: TuyaRequest.heartbeat(deviceID: Self.deviceID).1),
            TuyaMessage(sequence: 8, command: .control, payload: TuyaRequest.control(["1": true, "2": 50], deviceID: Self.deviceID, version: version, time: Self.time).1),
            TuyaMessage(sequence: 9, command: .updateDPS, payload: TuyaRequest.updateDPS([18, 19]).1),
            TuyaMessage(sequence: 10, command: .extendedStream, payload: Array(#"{"reqType":"x"}"#.utf8)),
        ]
        for message in messages {
            var toDevice = try Self.app(version).encode(message)
            #expect(try Self.device(version).decode(&toDevice) == message, "\(version) \(message.command) app → device")
            var answer = message
            answer.returnCode = 0
            var toApp = try Self.device(version).encode(answer)
            #expect(try Self.app(version).decode(&toApp) == answer, "\(version) \(message.command) device → app")
        }
        // An empty answer (a heartbeat's) stays empty.
        var empty = try Self.device(version).encode(TuyaMessage(sequence: 1, command: .heartbeat, returnCode: 0))
        #expect(try Self.app(version).decode(&empty)?.payload == [])
    }

    @Test("both status shapes; device22's refusal is named")
    func statusShapes() throws {
        let old = try TuyaStatus(parsing: Array(#"{"devId":"x","dps":{"1":true,"2":50},"t":1700000000}"#.utf8))
        let new = try TuyaStatus(parsing: Array(#"{"protocol":4,"t":1700000000,"data":{"dps":{"1":true,"2":50}}}"#.utf8))
        #expect(old == new && old.dps["2"] == .int(50) && old.time == Self.time)
        let refused = #expect(throws: TetherError.self) { try TuyaStatus(parsing: Array("json obj data unvalid".utf8)) }
        #expect(refused?.message.contains("device22") == true)
        #expect(throws: TetherError.self) { try TuyaStatus(parsing: Array(#"{"devId":"x"}"#.utf8)) }
    }

    @Test("wrong key, forged byte, bad suffix, wrong frame kind, oversized length: typed errors; partial input: nil, nothing consumed", arguments: TuyaVersion.allCases)
    func refusals(version: TuyaVersion) throws {
        let message = TuyaMessage(sequence: 3, command: .control, payload: TuyaRequest.control(["1": true], deviceID: Self.deviceID, version: version, time: Self.time).1)
        let frame = Self.bytes(try Self.app(version).encode(message))
        for cut in 0..<frame.count {
            var partial = ByteBuffer(bytes: frame.prefix(cut))
            #expect(try Self.device(version).decode(&partial) == nil, "\(version) cut at \(cut)")
            #expect(partial.readableBytes == cut)
        }
        var wrongKey = ByteBuffer(bytes: frame)
        let keyError = #expect(throws: TetherError.self) { try Self.device(version, key: Array("0000000000000000".utf8)).decode(&wrongKey) }
        let expected: [TetherError.Code] = version == .v31 ? [.integrityCheckFailed] : version.negotiatesSessionKey ? [.integrityCheckFailed] : [.decryptionFailed]
        #expect(keyError.map { expected.contains($0.code) } == true, "\(version): \(String(describing: keyError))")
        var forged = frame
        forged[forged.count - 12] ^= 0x01
        var forgedBuffer = ByteBuffer(bytes: forged)
        #expect(throws: TetherError.self) { try Self.device(version).decode(&forgedBuffer) }
        var badSuffix = frame
        badSuffix[badSuffix.count - 1] ^= 0xFF
        var suffixBuffer = ByteBuffer(bytes: badSuffix)
        #expect(throws: TetherError.self) { try Self.device(version).decode(&suffixBuffer) }
        var huge = frame
        huge[version == .v35 ? 14 : 12] = 0x7F
        var hugeBuffer = ByteBuffer(bytes: huge)
        let tooLarge = #expect(throws: TetherError.self) { try Self.device(version).decode(&hugeBuffer) }
        #expect(tooLarge?.code == .frameTooLarge)
        var other = ByteBuffer(bytes: frame)
        let otherVersion: TuyaVersion = version == .v35 ? .v33 : .v35
        #expect(throws: TetherError.self) { try Self.device(otherVersion).decode(&other) }
    }

    @Test("every split of a stream of frames decodes to the same messages", arguments: TuyaVersion.allCases)
    func verifier(version: TuyaVersion) throws {
        let codec = try Self.app(version)
        let pairs = try (1...4).map { index -> (ByteBuffer, [TuyaMessage]) in
            let message = TuyaMessage(
                sequence: UInt32(index), command: .status, returnCode: 0, payload: TuyaStatus(dps: ["1": .int(Int64(index))], time: 1).payload(deviceID: "d", version: version))
            return (try Self.device(version).encode(message), [message])
        }
        try ByteToMessageDecoderVerifier.verifyDecoder(inputOutputPairs: pairs) { TuyaMessageDecoder(codec: codec) }
    }

    @Test("fuzzed frames never crash the decoders, and what decodes round-trips (bounded)", arguments: [UInt64(1), 2])
    func fuzz(seed: UInt64) {
        if let failure = FuzzTargets.run(iterations: 1_500, seed: seed, seeds: FuzzTargets.tuyaSeeds, target: FuzzTargets.tuya) {
            Issue.record("\(failure.problem) for input \(failure.input.tetherHex)")
        }
    }
}
