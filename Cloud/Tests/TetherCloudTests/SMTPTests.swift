import Foundation
import NIOCore
import NIOTestUtils
import Testing
@testable import TetherCloud

@Suite("SMTP")
struct SMTPTests {
    @Test("replies: single and multi-line, partial input waits")
    func replies() throws {
        let decoder = SMTPReplyDecoder()
        var buffer = ByteBuffer(string: "250-mail.example greets you\r\n250-STARTTLS\r\n250 AUTH PLAIN LOGIN\r\n220 ")
        #expect(try decoder.decode(buffer: &buffer) == SMTPReply(code: 250, lines: ["mail.example greets you", "STARTTLS", "AUTH PLAIN LOGIN"]))
        #expect(try decoder.decode(buffer: &buffer) == nil)
        buffer.writeString("ready\n")
        #expect(try decoder.decode(buffer: &buffer) == SMTPReply(code: 220, lines: ["ready"]))
        var bare = ByteBuffer(string: "354\r\n")
        #expect(try decoder.decode(buffer: &bare)?.code == 354)
    }

    @Test("malformed replies are refused with a typed error")
    func malformed() {
        for text in ["hello\r\n", "25 x\r\n", "250x\r\n", "250-a\r\n251 b\r\n", "999 no\r\n", String(repeating: "2", count: 3000)] {
            let decoder = SMTPReplyDecoder()
            var buffer = ByteBuffer(string: text)
            #expect(throws: SMTPReplyDecoder.DecodingError.self, "\(text.prefix(20))") { try decoder.decode(buffer: &buffer) }
        }
    }

    @Test("every split of the input decodes the same")
    func verifier() throws {
        try ByteToMessageDecoderVerifier.verifyDecoder(
            stringInputOutputPairs: [
                ("220 ready\r\n", [SMTPReply(code: 220, lines: ["ready"])]),
                ("250-a\r\n250 b\r\n", [SMTPReply(code: 250, lines: ["a", "b"])]),
            ],
            decoderFactory: { SMTPReplyDecoder() }
        )
    }

    @Test("arbitrary bytes never crash the decoder (bounded fuzz)")
    func fuzz() {
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("0123456789 -\r\nabcSTARTTLS".utf8) + [0, 255]
        for _ in 0..<5_000 {
            let count = Int.random(in: 0..<64, using: &generator)
            var buffer = ByteBuffer(bytes: (0..<count).map { _ in alphabet.randomElement(using: &generator)! })
            let decoder = SMTPReplyDecoder()
            while let _ = try? decoder.decode(buffer: &buffer) {}
        }
    }

    @Test("messages have a base64 body, an encoded subject and end with the lone dot")
    func format() throws {
        let text = SMTPSender.format(
            OutgoingMessage(channel: .email, recipient: "ivy@example.org", subject: "Bestätigung", body: ".\nline starting with a dot\n"),
            from: "cloud@example.org"
        )
        #expect(text.contains("To: <ivy@example.org>\r\n"))
        #expect(text.contains("Subject: =?UTF-8?B?"))
        #expect(text.hasSuffix("\r\n.\r\n"))
        let body = try #require(text.components(separatedBy: "\r\n\r\n").last?.replacingOccurrences(of: "\r\n.\r\n", with: ""))
        let decoded = try #require(Data(base64Encoded: body.replacingOccurrences(of: "\r\n", with: "")))
        #expect(String(decoding: decoded, as: UTF8.self) == ".\nline starting with a dot\n")
    }

    @Test("SMTP URLs")
    func urls() throws {
        let plain = try SMTPConfiguration(url: "smtp://mail.example", from: "a@b.c")
        #expect(plain.port == 25)
        #expect(plain.security == .opportunisticSTARTTLS)
        let secured = try SMTPConfiguration(url: "smtps://user%40x:p%3Ass@mail.example", from: "a@b.c")
        #expect(secured.port == 465)
        #expect(secured.username == "user@x")
        #expect(secured.password == "p:ss")
        #expect(try SMTPConfiguration(url: "smtp://m:2525?starttls=require", from: "a@b.c").security == .requireSTARTTLS)
        #expect(throws: CloudAPIError.self) { try SMTPConfiguration(url: "http://m", from: "a@b.c") }
        #expect(throws: CloudAPIError.self) { try SMTPConfiguration(url: "smtp://m", from: "a\r\nBcc: x@y") }
    }
}
