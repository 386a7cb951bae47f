import Testing
import TetherCore
import TetherProvisioning
import TetherTestSupport

/// The phone's side: every smart-config encoder reproduces the vendors' encoders' output exactly.
@Suite("Smart config: encoders against the vendors' vectors")
struct SmartConfigEncoderTests {
    @Test("CRC-8/MAXIM check value")
    func crc() {
        #expect(CRC8.maxim(Array("123456789".utf8)) == 0xA1)
        #expect(CRC8.maxim([]) == 0)
    }

    @Test("ESP-Touch v1: data bytes, guide and the data code in the app's order")
    func espTouchV1() throws {
        let vectors = try AirLinkVectors()
        #expect(vectors.cases("esptouch_v1").count == 6)
        for vector in vectors.cases("esptouch_v1") {
            let name = vector["name"]?.stringValue ?? "?"
            let credentials = try AirLinkVectors.credentials(vector)
            let hidden = vector["hidden"] == .bool(true)
            let ip = AirLinkVectors.ipv4(vector["ip"]?.stringValue)
            #expect(try ESPTouchV1.dataBytes(credentials, phoneIP: ip, hidden: hidden) == AirLinkVectors.bytes(vector, "data_hex"), "\(name)")
            #expect(try ESPTouchV1.datum(credentials, phoneIP: ip, hidden: hidden) == AirLinkVectors.ints(vector["datum"]), "\(name)")
            #expect(ESPTouchV1.guide == AirLinkVectors.ints(vector["guide"]))
        }
    }

    @Test("ESP-Touch v2: head and one cycle of packets with the vector's padding, plain and AES")
    func espTouchV2() throws {
        let vectors = try AirLinkVectors()
        #expect(vectors.cases("esptouch_v2").count == 2)
        for vector in vectors.cases("esptouch_v2") {
            let name = vector["name"]?.stringValue ?? "?"
            let credentials = try AirLinkVectors.credentials(vector)
            let options = ESPTouchV2.Options(
                reserved: AirLinkVectors.bytes(vector, "reserved_hex"), aesKey: vector["aes_key"]?.stringValue.map { Array($0.utf8) },
                portMark: Int(vector["port_mark"]?.numberValue ?? 0), ipv4: vector["ipv4"] == .bool(true))
            let padding = ["password", "reserved", "ssid"].flatMap { AirLinkVectors.ints(vector["padding"]?[$0]) }.map { UInt8($0) }
            #expect(try ESPTouchV2.head(credentials, options: options) == AirLinkVectors.bytes(vector, "head_hex"), "\(name)")
            #expect(try ESPTouchV2.paddingCount(credentials, options: options) == padding.count, "\(name)")
            #expect(try ESPTouchV2.packets(credentials, options: options, padding: padding) == AirLinkVectors.ints(vector["packets"]), "\(name)")
            // Random padding changes only the positions the vector names.
            let random = try ESPTouchV2.packets(credentials, options: options)
            let fixed = Set(0..<random.count).subtracting(AirLinkVectors.ints(vector["random_positions"]))
            #expect(fixed.allSatisfy { random[$0] == AirLinkVectors.ints(vector["packets"])[$0] }, "\(name)")
        }
    }

    @Test("AirKiss: leading, magic, prefix and sequences, the whole transmission")
    func airKiss() throws {
        let vectors = try AirLinkVectors()
        #expect(vectors.cases("airkiss").count == 4)
        for vector in vectors.cases("airkiss") {
            let name = vector["name"]?.stringValue ?? "?"
            let credentials = try AirLinkVectors.credentials(vector)
            let random = UInt8(vector["random"]?.numberValue ?? 0)
            #expect(AirKiss.magicCode(credentials) == AirLinkVectors.ints(vector["magic"]), "\(name)")
            #expect(AirKiss.prefixCode(credentials) == AirLinkVectors.ints(vector["prefix"]), "\(name)")
            #expect(AirKiss.sequences(credentials, random: random) == (vector["sequences"]?.arrayValue ?? []).map { AirLinkVectors.ints($0) }, "\(name)")
            #expect(try AirKiss.lengths(credentials, random: random) == AirLinkVectors.ints(vector["lengths"]), "\(name)")
        }
    }

    @Test("bad input: typed errors")
    func refusals() throws {
        #expect(throws: TetherError.self) { try SmartConfigCredentials(ssid: [], password: [], bssid: [0, 0, 0, 0, 0, 0]) }
        #expect(throws: TetherError.self) { try SmartConfigCredentials(ssid: [1], password: [UInt8](repeating: 1, count: 65)) }
        #expect(throws: TetherError.self) { try SmartConfigCredentials(ssid: [1], password: [], bssid: [1, 2, 3]) }
        let credentials = try SmartConfigCredentials(ssid: "Home", password: "secret")
        #expect(throws: TetherError.self) { try ESPTouchV1.datum(credentials, phoneIP: [1, 2, 3]) }
        #expect(throws: TetherError.self) { try ESPTouchV2.packets(credentials, options: .init(aesKey: [1, 2, 3])) }
        #expect(throws: TetherError.self) { try ESPTouchV2.packets(credentials, options: .init(portMark: 4)) }
        #expect(throws: TetherError.self) { try ESPTouchV2.packets(credentials, padding: [200, 200]) }
        #expect(throws: TetherError.self) { try AirKiss.lengths(credentials, random: 127) }
        #expect(!"\(credentials)".contains("secret"))
    }
}

extension SmartConfigEncoderTests {
    @Test("acknowledgements: built by the device, read by the phone; a foreign one is not taken")
    func acknowledgements() {
        let mac: [UInt8] = [0xac, 0xcf, 0x23, 0x50, 0xd4, 0x46]
        let v1 = SmartConfigAcknowledgement.espTouchV1(ssidLength: 6, passwordLength: 10, mac: mac, ip: [192, 168, 4, 9])
        #expect(v1 == [25] + mac + [192, 168, 4, 9])
        #expect(SmartConfigAcknowledgement.readESPTouchV1(v1, ssidLength: 6, passwordLength: 10)?.ip == [192, 168, 4, 9])
        #expect(SmartConfigAcknowledgement.readESPTouchV1(v1, ssidLength: 7, passwordLength: 10) == nil)
        #expect(SmartConfigAcknowledgement.readESPTouchV1(Array(v1.prefix(10)), ssidLength: 6, passwordLength: 10) == nil)
        #expect(SmartConfigAcknowledgement.readESPTouchV2(SmartConfigAcknowledgement.espTouchV2(mac: mac)) == mac)
        #expect(SmartConfigAcknowledgement.readESPTouchV2([1, 2, 3]) == nil)
        var counter = SmartConfigAcknowledgement.AirKissCounter(random: 42)
        let early = [counter.add([42, 42, 1]), counter.add([7]), counter.add([42, 42, 42])]
        #expect(early == [false, false, false])
        let heard = counter.add(SmartConfigAcknowledgement.airKiss(random: 42))
        #expect(heard && counter.seen == 6)
    }
}
