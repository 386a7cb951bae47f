import Testing
import TetherCore

@Suite("Base64")
struct Base64Tests {
    @Test("RFC 4648 §10 vectors, both ways", arguments: [
        ("", ""), ("f", "Zg=="), ("fo", "Zm8="), ("foo", "Zm9v"), ("foob", "Zm9vYg=="), ("fooba", "Zm9vYmE="), ("foobar", "Zm9vYmFy"),
    ])
    func vectors(plain: String, encoded: String) {
        #expect(Array(plain.utf8).tetherBase64 == encoded)
        #expect([UInt8](tetherBase64: encoded) == Array(plain.utf8))
    }

    @Test("every byte value and every length up to 64 round-trips")
    func roundTrip() {
        let bytes = (0..<256).map { UInt8($0) }
        #expect([UInt8](tetherBase64: bytes.tetherBase64) == bytes)
        #expect(bytes.tetherBase64.hasSuffix("+/w=="))
        for length in 0...64 {
            let prefix = Array(bytes.reversed().prefix(length))
            #expect([UInt8](tetherBase64: prefix.tetherBase64) == prefix)
        }
    }

    @Test("anything but canonical padded Base64 is refused", arguments: [
        "Zg", "Zg=", "Zm9", "Z===", "=Zg=", "Zg==Zg==", "Zm9v\n", "Zm 9v", "Zm9v-_==", "Zh==", "Zm9=", "ＺＺＺＺ", "Zm=v",
    ])
    func refused(text: String) {
        #expect([UInt8](tetherBase64: text) == nil)
    }
}
