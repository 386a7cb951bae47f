import NIOCore
import NIOTestUtils
import Testing
import TetherCore
import TetherGizwitsLAN
import TetherTestSupport

@Suite("GAgent LAN frame decoder")
struct FrameDecoderTests {
    @Test("every split of a stream of frames decodes to the same frames")
    func verifier() throws {
        let messages = FrameVectorTests.vectors.map(\.0)
        let pairs = messages.map { message in
            (message.frame.bytes, [message.frame])
        }
        try ByteToMessageDecoderVerifier.verifyDecoder(inputOutputPairs: pairs) { GizwitsLANFrameDecoder() }
    }

    @Test("partial input returns nil and leaves the buffer untouched")
    func partialInput() throws {
        let bytes = Array(GizwitsLANMessage.passcodeResponse("ABCDEFGHIJ").frame.bytes.readableBytesView)
        for cut in 0..<bytes.count {
            var buffer = ByteBuffer(bytes: bytes[0..<cut])
            #expect(try GizwitsLANFrame.read(from: &buffer) == nil, "cut at \(cut)")
            #expect(buffer.readableBytes == cut)
        }
    }

    @Test(
        "malformed frames are refused with a typed error",
        arguments: [
            ("01 00 00 03 03 00 00 15", TetherError.Code.unsupportedVersion),
            ("00 00 00 02 03 00 00 15", .unsupportedVersion),
            ("ff", .unsupportedVersion),
            ("00 00 00 03 02 00 00", .malformedFrame),
            ("00 00 00 03 00", .malformedFrame),
            ("00 00 00 03 80 80 80 80 01", .malformedFrame),
            ("00 00 00 03 ff ff ff 7f", .frameTooLarge),
            ("00 00 00 03 81 80 04", .frameTooLarge),
        ]
    )
    func malformed(hex: String, code: TetherError.Code) {
        var buffer = ByteBuffer(bytes: [UInt8].hex(hex))
        #expect {
            _ = try GizwitsLANFrame.read(from: &buffer)
        } throws: { error in
            (error as? TetherError)?.code == code
        }
    }

    @Test("the maximum frame length is configurable")
    func maximumLength() throws {
        let frame = GizwitsLANMessage.p0FromDevice(ByteBuffer(bytes: [UInt8](repeating: 1, count: 100))).frame.bytes
        var small = frame
        #expect(throws: TetherError.self) { _ = try GizwitsLANFrame.read(from: &small, maximumLength: 50) }
        var large = frame
        #expect(try GizwitsLANFrame.read(from: &large, maximumLength: 103) != nil)
    }

    @Test(
        "datagrams must hold exactly one complete frame",
        arguments: ["00 00 00 03 03 00 00 03 00", "00 00 00 03 04 00 00 90", "00 00 00 03 03 00 00 15 00 00 00 03 03 00 00 15"]
    )
    func datagrams(hex: String) {
        #expect(throws: TetherError.self) { _ = try GizwitsLANFrame.read(datagram: ByteBuffer(bytes: [UInt8].hex(hex))) }
    }

    @Test(
        "payloads that do not have their command's shape are refused",
        arguments: [
            "00 00 00 03 05 00 00 08 00 0a",
            "00 00 00 03 04 00 00 07 00",
            "00 00 00 03 05 00 00 04 00 16",
            "00 00 00 03 05 00 00 93 00 00",
            "00 00 00 03 03 00 00 09",
            "00 00 00 03 07 00 00 0d 00 08 48 6f",
            "00 00 00 03 06 00 00 01 00 08 48",
        ]
    )
    func malformedPayloads(hex: String) throws {
        var buffer = ByteBuffer(bytes: [UInt8].hex(hex))
        let frame = try #require(try GizwitsLANFrame.read(from: &buffer))
        #expect { _ = try GizwitsLANMessage(frame: frame) } throws: { ($0 as? TetherError)?.code == .malformedFrame }
    }
}
