import Testing
import TetherAlink
import TetherCore

@Suite("The signed device registration form")
struct DeviceRegistrationFormTests {
    @Test("known vectors (computed with Python's hmac), with and without a passcode")
    func vectors() throws {
        let product = try #require(DeviceRegistrationForm(productKey: "a1PK000001", mac: "AC:CF:23:50:D4:46", passcode: "ABCDEFGHIJ", timestamp: 1_700_000_000))
        #expect(product.signingContent == "authproductmacaccf2350d446passcodeABCDEFGHIJproduct_keya1PK000001timestamp1700000000")
        #expect(product.signed(with: "ps3cr3t").sign == "1b727724df9c1e5bd91a10441425edd6f4c9101bf7784a56368dc7c4ad4ecf23")
        let device = try #require(DeviceRegistrationForm(productKey: "a1PK000001", mac: "accf2350d446", authority: .device, timestamp: 1_700_000_000))
        #expect(device.signed(with: "devsecret").sign == "9629d28ece7f08b968c50e3a3d594be2b11c610fdf818ec1d7874cf82e98ae28")
        #expect(DeviceRegistrationForm(productKey: "pk", mac: "not a mac", timestamp: 0) == nil)
    }

    @Test("the form is what GAgent posts, with the proof after it")
    func formEncoding() throws {
        let form = try #require(DeviceRegistrationForm(productKey: "a1PK000001", mac: "accf2350d446", passcode: "ABCDEFGHIJ", timestamp: 1_700_000_000)).signed(with: "ps3cr3t")
        #expect(form.formEncoded == "mac=accf2350d446&product_key=a1PK000001&passcode=ABCDEFGHIJ&auth=product&timestamp=1700000000&sign=\(form.sign)")
        let odd = try #require(DeviceRegistrationForm(productKey: "a&b=c d", mac: "accf2350d446", timestamp: 1))
        #expect(odd.formEncoded.hasPrefix("mac=accf2350d446&product_key=a%26b%3Dc%20d&auth=product"))
    }

    @Test("answers read back what they write; anything without a did is refused")
    func answers() {
        let full = DeviceRegistrationAnswer(did: "abc", passcode: "PASSWORDAB", deviceSecret: "s3cr3t")
        #expect(full.formEncoded == "did=abc&passcode=PASSWORDAB&device_secret=s3cr3t")
        #expect(DeviceRegistrationAnswer(formEncoded: full.formEncoded) == full)
        #expect(DeviceRegistrationAnswer(formEncoded: "did=abc") == DeviceRegistrationAnswer(did: "abc"))
        for text in ["", "did=", "passcode=x", "&&&", "=", "did"] {
            #expect(DeviceRegistrationAnswer(formEncoded: text) == nil, "\(text)")
        }
    }

    @Test("arbitrary answers never crash the reader (bounded fuzz)")
    func fuzz() {
        var generator = SplitMix64(seed: 20_261_123)
        let alphabet = Array("did=&passcode_secret%xyz\u{0}é".utf8)
        for _ in 0..<5_000 {
            let count = Int.random(in: 0..<40, using: &generator)
            let bytes = (0..<count).map { _ in alphabet.randomElement(using: &generator)! }
            if let answer = DeviceRegistrationAnswer(formEncoded: String(decoding: bytes, as: UTF8.self)) {
                #expect(!answer.did.isEmpty)
            }
        }
    }
}
