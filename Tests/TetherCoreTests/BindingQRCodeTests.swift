import Testing
import TetherCore

@Suite("Binding QR codes")
struct BindingQRCodeTests {
    @Test("round trip through the text, with a secret that needs escaping")
    func roundTrip() throws {
        let code = try BindingQRCode(productKey: "6f3074fe43894547a4f1314bd7e3ae0b", mac: "AC:CF:23:50:D4:46", productSecret: "s3cr&t=+/ü")
        #expect(code.mac == "accf2350d446")
        #expect(code.text.hasPrefix("tether://bind?product_key=6f3074fe43894547a4f1314bd7e3ae0b&mac=accf2350d446&product_secret="))
        #expect(try BindingQRCode(text: code.text) == code)
        #expect(try BindingQRCode(text: "  \(code.text)\n") == code, "whitespace around a scan is ignored")
    }

    @Test("the bare query form other tools print is read too")
    func bareQuery() throws {
        let code = try BindingQRCode(text: "mac=accf2350d446&product_key=pk1&product_secret=ps1&extra=ignored")
        #expect(code.productKey == "pk1" && code.mac == "accf2350d446" && code.productSecret == "ps1")
    }

    @Test("bad codes are refused with invalidArgument, and the secret stays out of the message", arguments: [
        "", "tether://bind?", "http://example.com/?product_key=a&mac=accf2350d446&product_secret=SECRET",
        "product_key=a&mac=accf2350d4&product_secret=SECRET", "product_key=a&mac=accf2350d44g&product_secret=SECRET",
        "product_key=a&mac=ａｃｃｆ２３５０ｄ４４６&product_secret=SECRET", "product_key=&mac=accf2350d446&product_secret=SECRET",
        "tether://bind?product_key=a&mac=accf2350d446&product%5Fsecret=SECRET&x", "tether://bind?product_key=a&product_secret=SECRET",
    ])
    func refused(text: String) {
        let error = #expect(throws: TetherError.self) { try BindingQRCode(text: text) }
        #expect(error?.code == .invalidArgument)
        #expect(error?.message.contains("SECRET") == false, "\(error?.message ?? "")")
    }

    @Test("arbitrary text never crashes the reader; what it accepts round-trips (bounded fuzz)")
    func fuzz() {
        var generator = SplitMix64(seed: 0x51_7e7e)
        let alphabet = Array("tether://bind?product_key=&mac=product_secret=%0123456789abcdefABCDEF:-+ &=?ü\u{0}")
        for _ in 0..<20_000 {
            let length = Int.random(in: 0...80, using: &generator)
            let text = String((0..<length).map { _ in alphabet.randomElement(using: &generator)! })
            guard let code = try? BindingQRCode(text: text) else { continue }
            #expect(code.mac.count == 12)
            #expect((try? BindingQRCode(text: code.text)) == code)
        }
    }
}
