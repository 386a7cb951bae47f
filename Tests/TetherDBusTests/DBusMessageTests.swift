import NIOCore
import NIOTestUtils
import TetherCore
import TetherTestSupport
import Testing

@testable import TetherDBus

@Suite("D-Bus wire format")
struct DBusMessageTests {
    /// A BlueZ characteristic write, as dbus-fast 2.x marshals it (serial 7).
    static let writeValueVector =
        "6c0100014000000007000000ad00000001016f003a0000002f6f72672f626c75657a2f686369302f6465765f30305f31315f32325f33335f34345f30322f73657276696365303030612f6368617230303062000000000000020173001d0000006f72672e626c75657a2e47617474436861726163746572697374696331000000030173000a000000577269746556616c756500000000000006017300090000006f72672e626c75657a0000000000000008016700076179617b73767d000000000c000000ed0101084d6f6b6f343332312800000000000000040000007479706500017300070000007265717565737400060000006f6666736574000171000000"
    /// BlueZ's PropertiesChanged of an adapter, as dbus-fast 2.x marshals it (serial 42).
    static let propertiesChangedVector =
        "6c040001600000002a0000006e00000001016f000f0000002f6f72672f626c75657a2f6863693000020173001f0000006f72672e667265656465736b746f702e444275732e50726f7065727469657300030173001100000050726f706572746965734368616e67656400000000000000080167000873617b73767d6173000000120000006f72672e626c75657a2e41646170746572310000300000000000000007000000506f7765726564000162000001000000000000000b000000446973636f766572696e670001620000000000000c000000070000004164647265737300"

    static var writeValue: DBusMessage {
        var message = DBusMessage.methodCall(
            destination: "org.bluez", path: "/org/bluez/hci0/dev_00_11_22_33_44_02/service000a/char000b",
            interface: "org.bluez.GattCharacteristic1", member: "WriteValue",
            body: [
                .bytes([0xED, 0x01, 0x01, 0x08] + Array("Moko4321".utf8)),
                .array(
                    .dictionaryEntry(key: .string, value: .variant),
                    [.dictionaryEntry(.string("type"), .variant(.string("request"))), .dictionaryEntry(.string("offset"), .variant(.uint16(0)))]),
            ])
        message.serial = 7
        return message
    }

    static var propertiesChanged: DBusMessage {
        var message = DBusMessage.signal(
            path: "/org/bluez/hci0", interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged",
            body: [
                .string("org.bluez.Adapter1"),
                .array(
                    .dictionaryEntry(key: .string, value: .variant),
                    [.dictionaryEntry(.string("Powered"), .variant(.boolean(true))), .dictionaryEntry(.string("Discovering"), .variant(.boolean(false)))]),
                .strings(["Address"]),
            ])
        message.serial = 42
        message.flags = []
        return message
    }

    static func hex(_ text: String) -> ByteBuffer {
        var bytes: [UInt8] = []
        var index = text.startIndex
        while index < text.endIndex {
            let next = text.index(index, offsetBy: 2)
            bytes.append(UInt8(text[index..<next], radix: 16)!)
            index = next
        }
        return ByteBuffer(bytes: bytes)
    }

    @Test("messages encode to the bytes dbus-fast writes, and decode from them")
    func knownVectors() throws {
        #expect(try Self.writeValue.bytes() == Self.hex(Self.writeValueVector))
        #expect(try Self.propertiesChanged.bytes() == Self.hex(Self.propertiesChangedVector))
        var buffer = Self.hex(Self.writeValueVector)
        #expect(try DBusMessage.read(from: &buffer) == Self.writeValue)
        #expect(buffer.readableBytes == 0)
        buffer = Self.hex(Self.propertiesChangedVector)
        let signal = try #require(try DBusMessage.read(from: &buffer))
        #expect(signal == Self.propertiesChanged)
        #expect(signal.body[1].propertiesValue == ["Powered": .boolean(true), "Discovering": .boolean(false)])
    }

    @Test("every type survives a round trip, nested and empty containers included")
    func roundTrip() throws {
        var message = DBusMessage.methodCall(
            destination: ":1.7", path: "/a/b_c/D0", interface: "com.example.Test", member: "Everything",
            body: [
                .byte(0xFF), .boolean(true), .int16(-2), .uint16(65535), .int32(.min), .uint32(.max), .int64(.min), .uint64(.max),
                .double(-0.5), .string("héllo"), .objectPath("/"), .signature(try DBusSignature("a{sv}(iy)")),
                .array(.uint64, []), .array(.structure([.byte, .uint64]), [.structure([.byte(1), .uint64(2)])]),
                .variant(.variant(.array(.string, [.string("x")]))),
                .properties(["a": .int32(1), "nested": .properties(["b": .bytes([1, 2, 3])])]),
                .array(.array(.byte), [.bytes([]), .bytes([9])]),
            ])
        message.serial = 99
        var buffer = try message.bytes()
        let decoded = try #require(try DBusMessage.read(from: &buffer))
        #expect(decoded == message)
        #expect(decoded.signature.description == "ybnqiuxtdsogata(yt)va{sv}aay")
    }

    @Test("a message decodes only once it has all arrived, from any split")
    func partialInput() throws {
        let bytes = Array(Self.hex(Self.writeValueVector).readableBytesView)
        for cut in 0..<bytes.count {
            var buffer = ByteBuffer(bytes: bytes[0..<cut])
            #expect(try DBusMessage.read(from: &buffer) == nil)
            #expect(buffer.readerIndex == 0)
        }
    }

    @Test("the channel decoder reads messages however the bytes are split")
    func frameDecoderVerifier() throws {
        try ByteToMessageDecoderVerifier.verifyDecoder(
            inputOutputPairs: [
                (Self.hex(Self.writeValueVector), [.message(Self.writeValue)]),
                (Self.hex(Self.propertiesChangedVector), [.message(Self.propertiesChanged)]),
            ]
        ) { DBusFrameDecoder(maximumMessageLength: 1 << 20, authenticated: true) }
    }

    @Test("the channel decoder reads authentication lines until OK, then messages, from any split")
    func authenticationThenMessages() throws {
        var stream = ByteBuffer(string: "DATA\r\nOK 1234deadbeef\r\n")
        stream.writeImmutableBuffer(Self.hex(Self.writeValueVector))
        let bytes = Array(stream.readableBytesView)
        for cut in 0...bytes.count {
            var decoder = DBusFrameDecoder(maximumMessageLength: 1 << 20)
            var outputs: [DBusInbound] = []
            var buffer = ByteBuffer(bytes: bytes[0..<cut])
            while let next = try decoder.next(&buffer) { outputs.append(next) }
            buffer.writeBytes(bytes[cut...])
            while let next = try decoder.next(&buffer) { outputs.append(next) }
            #expect(outputs == [.authenticationLine("DATA"), .authenticationLine("OK 1234deadbeef"), .message(Self.writeValue)])
        }
        var decoder = DBusFrameDecoder(maximumMessageLength: 1 << 20)
        var endless = ByteBuffer(repeating: UInt8(ascii: "A"), count: 2000)
        #expect(throws: TetherError.self) { try decoder.next(&endless) }
    }

    @Test(
        "malformed messages are refused with a typed error",
        arguments: [
            ("6c", 0, "byte order", UInt8(ascii: "X")),
            ("version", 3, "version", UInt8(2)),
            ("type", 1, "message type", UInt8(9)),
        ])
    func malformedHeader(name: String, offset: Int, what: String, byte: UInt8) throws {
        var bytes = Array(Self.hex(Self.writeValueVector).readableBytesView)
        bytes[offset] = byte
        var buffer = ByteBuffer(bytes: bytes)
        #expect(throws: TetherError.self) { try DBusMessage.read(from: &buffer) }
    }

    @Test("bad values inside a message are refused: serial 0, a boolean of 2, padding, strings, array lengths, limits")
    func malformedValues() throws {
        func refused(_ mutate: (inout [UInt8]) -> Void, code: TetherError.Code = .malformedFrame, vector: String = Self.propertiesChangedVector) {
            var bytes = Array(Self.hex(vector).readableBytesView)
            mutate(&bytes)
            var buffer = ByteBuffer(bytes: bytes)
            let error = #expect(throws: TetherError.self) { try DBusMessage.read(from: &buffer) }
            #expect(error?.code == code)
        }
        // Serial 0.
        refused {
            $0[8] = 0; $0[9] = 0
        }
        // The boolean "Powered" = true is at the first 01 00 00 00 after "Powered\0" and its variant signature.
        let powered = Array(Self.hex(Self.propertiesChangedVector).readableBytesView)
        let booleanIndex = try #require(Self.find([0x01, 0x62, 0x00, 0x00, 0x01], in: powered)) + 4
        refused { $0[booleanIndex] = 2 }
        // Non-zero padding after the member field's string (88 + 17 characters + NUL).
        refused { $0[106] = 0xAA }
        // The path string's terminating NUL replaced.
        refused { $0[16 + 8 + 15] = 0x41 }
        // The body's array length pointing past the message.
        let arrayIndex = try #require(Self.find([0x30, 0x00, 0x00, 0x00], in: powered))
        refused { $0[arrayIndex] = 0xF0 }
        // A declared body longer than the limit.
        refused(
            {
                $0[4] = 0xFF; $0[5] = 0xFF; $0[6] = 0xFF; $0[7] = 0x7F
            }, code: .frameTooLarge)
        // A signal without its member: the member field's code changed to an unknown field (ignored).
        let memberField = try #require(Self.find([0x03, 0x01, 0x73, 0x00], in: powered))
        refused { $0[memberField] = 0x7E }
        // Invalid UTF-8 in the interface string.
        let interfaceText = try #require(Self.find(Array("org.bluez.Adapter1".utf8), in: powered))
        refused { $0[interfaceText + 1] = 0xFF }
    }

    @Test("a message over the reader's limit is refused before it is buffered")
    func limit() throws {
        var buffer = Self.hex(Self.writeValueVector)
        buffer.moveWriterIndex(to: 16)
        #expect(throws: TetherError.self) { try DBusMessage.read(from: &buffer, maximumLength: 64) }
    }

    @Test("a message that breaks D-Bus's rules is refused before it is sent")
    func invalidOutgoing() throws {
        var message = DBusMessage.methodCall(destination: "org.bluez", path: "/bad//path", interface: "org.bluez.X", member: "M")
        message.serial = 1
        #expect(throws: TetherError.self) { try message.bytes() }
        message.path = "/ok"
        message.body = [.array(.string, [.int32(1)])]
        #expect(throws: TetherError.self) { try message.bytes() }
        message.body = [.string("nul\u{0}inside")]
        #expect(throws: TetherError.self) { try message.bytes() }
        message.body = []
        message.member = "1bad"
        #expect(throws: TetherError.self) { try message.bytes() }
        message.member = "Good"
        message.serial = 0
        #expect(throws: TetherError.self) { try message.bytes() }
    }

    @Test("signatures parse as D-Bus defines them", arguments: ["a{sv}", "(oa{sa{sv}})", "aay", "ybnqiuxtdsogvh", "a(yv)", ""])
    func validSignatures(text: String) throws {
        #expect(try DBusSignature(text).description == text)
    }

    @Test(
        "signatures D-Bus refuses are refused",
        arguments: ["a", "(", "()", "{sv}", "a{vs}", "a{ss", "a{sss}", "z", String(repeating: "a", count: 33) + "y", String(repeating: "y", count: 256)])
    func invalidSignatures(text: String) {
        #expect(throws: TetherError.self) { try DBusSignature(text) }
    }

    @Test("decoding survives arbitrary bytes, and what decodes encodes to bytes that decode the same")
    func fuzz() {
        let seed = UInt64.random(in: 0...UInt64.max)
        if let failure = FuzzTargets.run(iterations: 3_000, seed: seed, seeds: FuzzTargets.dbusSeeds, target: FuzzTargets.dbus) {
            Issue.record("seed \(seed): \(failure.problem) for \(failure.input)")
        }
    }

    static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard needle.count <= haystack.count else { return nil }
        for index in 0...(haystack.count - needle.count) where Array(haystack[index..<index + needle.count]) == needle {
            return index
        }
        return nil
    }
}
