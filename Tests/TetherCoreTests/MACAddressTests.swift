import Testing
import TetherCore

@Suite("MAC addresses as text")
struct MACAddressTests {
    @Test("colons, dashes or nothing between the bytes, either case")
    func forms() {
        let expected: [UInt8] = [0xC8, 0x47, 0x8C, 0x12, 0x34, 0x5F]
        for text in ["C8:47:8C:12:34:5F", "c8-47-8c-12-34-5f", "C8478C12345f", "C8:47-8C12:34:5F"] {
            #expect(MACAddress.bytes(text) == expected, "\(text)")
            #expect(MACAddress.hexDigits(text) == "c8478c12345f", "\(text)")
        }
    }

    @Test(
        "anything else is no MAC address",
        arguments: ["", ":::", "C8:47:8C:12:34", "C8:47:8C:12:34:5F:00", "C8:47:8C:12:34:5G", "C8 47 8C 12 34 5F", "Ｃ8478C12345F", "C8478C12345"])
    func refused(text: String) {
        #expect(MACAddress.bytes(text) == nil)
        #expect(MACAddress.hexDigits(text) == nil)
    }

    @Test("arbitrary text is a MAC exactly when it is 12 ASCII hex digits once colons and dashes go (bounded fuzz)")
    func fuzz() {
        var generator = SplitMix64(seed: 18)
        let alphabet = Array("0123456789abcdefABCDEFgGx:-: \tＣé")
        for _ in 0..<5_000 {
            let text = String((0..<Int(generator.next() % 20)).map { _ in alphabet[Int(generator.next() % UInt64(alphabet.count))] })
            let digits = text.filter { $0 != ":" && $0 != "-" }
            let isMAC = digits.count == 12 && digits.allSatisfy { $0.isASCII && $0.isHexDigit }
            #expect((MACAddress.bytes(text) != nil) == isMAC, "\(text)")
            #expect(MACAddress.hexDigits(text) == (isMAC ? digits.lowercased() : nil), "\(text)")
        }
    }
}
