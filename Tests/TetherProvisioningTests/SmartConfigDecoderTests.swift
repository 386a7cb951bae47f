import Testing
import TetherCore
import TetherProvisioning
import TetherTestSupport

/// The device's side: each decoder rebuilds what the phone sent from frame lengths (the vendors'
/// vectors plus a constant 802.11 overhead, with other traffic mixed in), and survives noise.
@Suite("Smart config: device-side decoders")
struct SmartConfigDecoderTests {
    /// `lengths` as frames: each plus `overhead`, with a length of other traffic after every
    /// `every`-th one (never one that completes a code by chance: far above the codes' range).
    static func frames(_ lengths: [Int], overhead: Int, every: Int = 7) -> [Int] {
        var frames: [Int] = []
        for (index, length) in lengths.enumerated() {
            frames.append(length + overhead)
            if index % every == every - 1 { frames.append(1400 + index % 50) }
        }
        return frames
    }

    @Test("ESP-Touch v1: guide then data code, noise between codes; the legacy visible-network form")
    func espTouchV1() throws {
        for vector in try AirLinkVectors().cases("esptouch_v1") {
            let name = vector["name"]?.stringValue ?? "?"
            let credentials = try AirLinkVectors.credentials(vector)
            let hidden = vector["hidden"] == .bool(true)
            let ip = AirLinkVectors.ipv4(vector["ip"]?.stringValue)
            var decoder = ESPTouchV1Decoder(expectsSSID: hidden)
            var result: ESPTouchV1Decoder.Result?
            // Noise between whole codes only: a code's three frames travel together.
            let datum = try ESPTouchV1.datum(credentials, phoneIP: ip, hidden: hidden)
            var lengths = ESPTouchV1.guide.map { $0 + 52 }
            for start in stride(from: 0, to: datum.count, by: 3) { lengths += datum[start..<(start + 3)].map { $0 + 52 } + [1300] }
            for length in lengths where result == nil { result = decoder.feed(frameLength: length) }
            #expect(decoder.offset == 52, "\(name)")
            let decoded = try #require(result, "\(name)")
            #expect(decoded.password == credentials.password && decoded.bssid == credentials.bssid && decoded.phoneIP == ip, "\(name)")
            #expect(decoded.ssid == (hidden ? credentials.ssid : nil) && decoded.ssidCRC == CRC8.maxim(credentials.ssid), "\(name)")
        }
    }

    @Test("ESP-Touch v2: plain and AES; the wrong key, or none, is a typed failure")
    func espTouchV2() throws {
        for vector in try AirLinkVectors().cases("esptouch_v2") {
            let name = vector["name"]?.stringValue ?? "?"
            let credentials = try AirLinkVectors.credentials(vector)
            let key = vector["aes_key"]?.stringValue.map { Array($0.utf8) }
            let packets = AirLinkVectors.ints(vector["packets"])
            var decoder = ESPTouchV2Decoder(aesKey: key)
            var result: ESPTouchV2Decoder.Result?
            for length in Self.frames(packets, overhead: 36, every: 1000) where result == nil { result = decoder.feed(frameLength: length) }
            let decoded = try #require(result, "\(name)")
            #expect(decoded.ssid == credentials.ssid && decoded.password == credentials.password, "\(name)")
            #expect(decoded.reserved == AirLinkVectors.bytes(vector, "reserved_hex"), "\(name)")
            #expect(decoded.bssidCRC == CRC8.maxim(credentials.bssid) && decoded.encrypted == (key != nil), "\(name)")
            #expect(decoded.portMark == Int(vector["port_mark"]?.numberValue ?? 0), "\(name)")
            guard key != nil else { continue }
            for wrong in [nil, Array("6543210987654321".utf8)] {
                var refusing = ESPTouchV2Decoder(aesKey: wrong)
                for length in packets.map({ $0 + 36 }) { #expect(refusing.feed(frameLength: length) == nil) }
                #expect(refusing.failure?.code == .decryptionFailed, "\(name)")
            }
        }
    }

    @Test("ESP-Touch v2: non-ASCII password and SSID travel as 8-bit parts and come back")
    func espTouchV2EightBit() throws {
        let credentials = try SmartConfigCredentials(ssid: "测试网络", password: "pässwörd", bssid: [1, 2, 3, 4, 5, 6])
        let options = ESPTouchV2.Options(reserved: Array("data".utf8), portMark: 2)
        var decoder = ESPTouchV2Decoder()
        var result: ESPTouchV2Decoder.Result?
        for length in try ESPTouchV2.packets(credentials, options: options).map({ $0 + 40 }) where result == nil { result = decoder.feed(frameLength: length) }
        let decoded = try #require(result)
        #expect(decoded.ssid == credentials.ssid && decoded.password == credentials.password && decoded.reserved == Array("data".utf8))
        #expect(decoded.portMark == 2 && !decoded.encrypted)
    }

    @Test("AirKiss: leading, magic, prefix, sequences; password, random byte and SSID back")
    func airKiss() throws {
        for vector in try AirLinkVectors().cases("airkiss") {
            let name = vector["name"]?.stringValue ?? "?"
            let credentials = try AirLinkVectors.credentials(vector)
            var decoder = AirKissDecoder()
            var result: AirKissDecoder.Result?
            for length in AirLinkVectors.ints(vector["lengths"]).map({ $0 + 80 }) where result == nil { result = decoder.feed(frameLength: length) }
            #expect(decoder.offset == 80, "\(name)")
            let decoded = try #require(result, "\(name)")
            #expect(decoded.ssid == credentials.ssid && decoded.password == credentials.password, "\(name)")
            #expect(decoded.random == UInt8(vector["random"]?.numberValue ?? -1), "\(name)")
        }
    }

    @Test("arbitrary lengths never crash a decoder, and never decode to nonsense (bounded)")
    func fuzz() {
        var generator = SplitMix64(seed: 20_261_124)
        var v1 = ESPTouchV1Decoder()
        var v2 = ESPTouchV2Decoder(aesKey: Array("1234567890123456".utf8))
        var airKiss = AirKissDecoder()
        var decoded = 0
        for _ in 0..<100_000 {
            let length = Int(generator.next() % 1600)
            // Every check (CRCs, lengths, the XOR) must hold for a result: noise almost never passes.
            if v1.feed(frameLength: length) != nil { decoded += 1 }
            if v2.feed(frameLength: length) != nil { decoded += 1 }
            if airKiss.feed(frameLength: length) != nil { decoded += 1 }
        }
        #expect(decoded <= 3)
    }

    @Test("the fuzz target from the encoders' output, mutated (bounded)")
    func mutated() {
        for seed in [UInt64(1), 2] {
            if let failure = FuzzTargets.run(iterations: 800, seed: seed, seeds: FuzzTargets.smartConfigSeeds, target: FuzzTargets.smartConfig) {
                Issue.record("\(failure)")
            }
        }
    }
}
