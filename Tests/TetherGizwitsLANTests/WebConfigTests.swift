import Testing
import TetherCore
import TetherGizwitsLAN
import TetherTestSupport

/// GAgent's `web_config.cgi` query, read as the firmware reads it (no percent-decoding).
@Suite("web_config.cgi: the query as GAgent reads it")
struct WebConfigTests {
    @Test("the app's target, and the firmware's reading of it, with and without a pairing token")
    func roundTrip() throws {
        let plain = GizwitsWebConfig(ssid: "HomeNet", password: "correct-horse_1.")
        #expect(try plain.target() == "/web_config.cgi?ssid=HomeNet&pass=correct-horse_1.")
        #expect(GizwitsWebConfig(target: try plain.target()) == plain)
        let paired = GizwitsWebConfig(ssid: "HomeNet", password: "pw", pairingToken: "0123456789abcdef0123456789abcdef")
        #expect(try paired.target() == "/web_config.cgi?ssid=HomeNet&pass=pw&token=0123456789abcdef0123456789abcdef")
        #expect(GizwitsWebConfig(target: try paired.target()) == paired)
        #expect(!paired.description.contains("pw") && !paired.description.contains("0123"))
    }

    @Test("the firmware's rules: the SSID ends at &, ssid= before pass=, other paths and empty SSIDs get the form")
    func firmwareRules() {
        #expect(GizwitsWebConfig(target: "/web_config.cgi?ssid=a b&pass=x y") == GizwitsWebConfig(ssid: "a b", password: "x"))
        #expect(GizwitsWebConfig(target: "/web_config.cgi?pass=x&ssid=a") == nil)
        #expect(GizwitsWebConfig(target: "/web_config.cgi?ssid=&pass=x") == nil)
        #expect(GizwitsWebConfig(target: "/index.html?ssid=a&pass=b") == nil)
        #expect(GizwitsWebConfig(target: "/web_config.cgi?ssid=\(String(repeating: "s", count: 33))&pass=b") == nil)
        #expect(GizwitsWebConfig(target: "/web_config.cgi?ssid=a&pass=") == GizwitsWebConfig(ssid: "a", password: ""))
        #expect(GizwitsWebConfig(target: "/web_config.cgi?ssid=bypass=1&pass=pw") == GizwitsWebConfig(ssid: "bypass=1", password: "pw"))
    }

    @Test("what the firmware cannot carry is refused before sending", arguments: ["pass word", "a&b", "100%", "x#y", "caf\u{e9}"])
    func refused(password: String) {
        let error = #expect(throws: TetherError.self) { try GizwitsWebConfig(ssid: "HomeNet", password: password).target() }
        #expect(error?.code == .invalidArgument)
    }

    @Test("arbitrary targets never crash the reader, and what it reads fits GAgent's buffers (bounded)")
    func fuzz() {
        var generator = SplitMix64(seed: 41)
        let alphabet = Array("/web_config.cgi?ssid=pass=token=&% #abcXYZ019".utf8)
        for _ in 0..<5_000 {
            let length = Int(generator.next() % 120)
            let bytes = (0..<length).map { _ in
                generator.next() % 4 == 0 ? UInt8(truncatingIfNeeded: generator.next()) : alphabet[Int(generator.next() % UInt64(alphabet.count))]
            }
            let text = "/web_config.cgi?" + String(decoding: bytes, as: UTF8.self)
            if let read = GizwitsWebConfig(target: text) {
                #expect(!read.ssid.isEmpty && read.ssid.utf8.count <= 32 && read.password.utf8.count <= 32 && !read.ssid.contains("&"))
            }
        }
    }
}
