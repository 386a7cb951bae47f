import NIOCore
import Testing
import TetherCore
import TetherGizwitsLAN
import TetherTestSupport

@Suite("P0 codec")
struct P0CodecTests {
    static let reportP0 = [UInt8].hex("04 05 0a 14 1e 03 01 26 3c 02 0a")
    static let controlP0 = [UInt8].hex("01 05 05 0a 14 1e 03")

    private func codec() throws -> P0Codec { try P0Codec(model: Fixtures.petHouse()) }

    @Test("the pet-house layout is the reference's 10 bytes with 6 writable points")
    func layout() throws {
        let layout = try codec().layout
        #expect(layout.statusLength == 10)
        #expect(layout.writableLength == 5)
        #expect(layout.writableIndices.count == 6 && layout.writableFlagsLength == 1)
    }

    @Test("the worked-example report decodes to the reference state and encodes back byte for byte")
    func report() throws {
        let codec = try codec()
        let message = try codec.decode(ByteBuffer(bytes: Self.reportP0))
        let expected = DeviceStatus(values: Fixtures.petHouseState, model: codec.model)
        #expect(message == .report(expected))
        #expect(expected.alerts == ["Alert_1": .bool(false), "Alert_2": .bool(true)])
        #expect(expected.faults.count == 4 && expected.data.count == 9)
        #expect(Array(try codec.encode(.report(expected)).readableBytesView) == Self.reportP0)
        var ack = Self.reportP0
        ack[0] = 0x03
        #expect(try codec.decode(ByteBuffer(bytes: ack)) == .readAck(expected))
    }

    @Test("the worked-example control (LED_OnOff and LED_R over the known state) encodes byte for byte")
    func control() throws {
        let codec = try codec()
        let encoded = try codec.encode(.control(["LED_OnOff": .bool(true), "LED_R": .int(10)]), baseline: Fixtures.petHouseState)
        #expect(Array(encoded.readableBytesView) == Self.controlP0)
        #expect(try codec.decode(encoded) == .control(["LED_OnOff": .bool(true), "LED_R": .int(10)]))
        // The LAN frame with sn 7 of the reference.
        let frame = GizwitsLANMessage.p0WithAck(sn: 7, p0: encoded).frame
        #expect(Array(frame.bytes.readableBytesView) == [UInt8].hex("00 00 00 03 0e 00 00 93 00 00 00 07 01 05 05 0a 14 1e 03"))
    }

    @Test("a control without a baseline zeroes the unflagged points")
    func controlWithoutBaseline() throws {
        let encoded = try codec().encode(.control(["Motor_Speed": .int(5)]))
        #expect(Array(encoded.readableBytesView) == [UInt8].hex("01 20 00 00 00 00 0a"))
    }

    @Test("read is the single byte 02")
    func read() throws {
        #expect(Array(try codec().encode(.read([])).readableBytesView) == [0x02])
        #expect(try codec().decode(ByteBuffer(bytes: [0x02])) == .read([]))
    }

    @Test("writes are validated before they are encoded")
    func validation() throws {
        let codec = try codec()
        #expect { _ = try codec.encode(.control(["Temperature": .int(3)])) } throws: { ($0 as? TetherError)?.code == .readOnlyDataPoint }
        #expect { _ = try codec.encode(.control(["LED_R": .int(300)])) } throws: { ($0 as? TetherError)?.code == .valueOutOfRange }
    }

    @Test("transparent data passes through untouched")
    func transparent() throws {
        let codec = try codec()
        #expect(Array(try codec.encode(.transparentToDevice([1, 2, 3])).readableBytesView) == [5, 1, 2, 3])
        #expect(try codec.decode(ByteBuffer(bytes: [6, 9, 8])) == .transparentFromDevice([9, 8]))
    }

    @Test("short payloads and unknown actions are refused with a typed error", arguments: ["04 05 0a", "01 05", "07", "", "13", "14 ff"])
    func malformed(hex: String) throws {
        let codec = try codec()
        #expect { _ = try codec.decode(ByteBuffer(bytes: [UInt8].hex(hex))) } throws: { ($0 as? TetherError)?.code == .malformedPayload }
    }

    @Test("a device reporting more bytes than the model knows still reports what is known")
    func trailingBytes() throws {
        let message = try codec().decode(ByteBuffer(bytes: Self.reportP0 + [0xFF, 0xFF]))
        #expect(message.status?.data["Humidity"] == .int(60))
    }

    @Test("a 2-byte bit region is a big-endian integer (the reference's synthetic B0…B9 example)")
    func twoByteRegion() throws {
        let attrs = (0..<10).map { index in
            #"{"id":\#(index),"name":"B\#(index)","type":"status_readonly","data_type":"bool"}"#
        }.joined(separator: ",")
        let model = try ThingModel(gizwitsJSON: Array(#"{"entities":[{"attrs":[\#(attrs)]}]}"#.utf8))
        let codec = try P0Codec(model: model)
        let status = DeviceStatus(values: Dictionary(uniqueKeysWithValues: (0..<10).map { ("B\($0)", DataValue.bool([0, 8, 9].contains($0))) }), model: model)
        #expect(Array(try codec.encode(.report(status)).readableBytesView) == [0x04, 0x03, 0x01])
        #expect(try codec.decode(ByteBuffer(bytes: [0x04, 0x03, 0x01])) == .report(status))
    }

    @Test("more than 8 writable points use a multi-byte attr_flags, bit 0 in the last byte")
    func wideFlags() throws {
        let attrs = (0..<10).map { index in
            #"{"id":\#(index),"name":"S\#(index)","type":"status_writable","data_type":"uint8","uint_spec":{"min":0,"max":200}}"#
        }.joined(separator: ",")
        let model = try ThingModel(gizwitsJSON: Array(#"{"entities":[{"attrs":[\#(attrs)]}]}"#.utf8))
        let codec = try P0Codec(model: model)
        let encoded = Array(try codec.encode(.control(["S0": .int(1), "S9": .int(9)])).readableBytesView)
        #expect(Array(encoded.prefix(3)) == [0x01, 0x02, 0x01])
        #expect(encoded[3] == 1 && encoded[12] == 9)
        #expect(try codec.decode(ByteBuffer(bytes: encoded)) == .control(["S0": .int(1), "S9": .int(9)]))
    }

    @Test("numbers are big-endian with ratio and addition; binaries are zero-padded")
    func numbersAndBinary() throws {
        let document = #"""
            {"entities":[{"attrs":[
            {"id":0,"name":"Power","type":"status_readonly","data_type":"uint32","uint_spec":{"min":0,"max":4000000000,"ratio":0.01,"addition":-100},"position":{"byte_offset":0,"unit":"byte","len":4}},
            {"id":1,"name":"Temp","type":"status_readonly","data_type":"uint16","uint_spec":{"min":0,"max":2000,"ratio":0.1,"addition":-40},"position":{"byte_offset":4,"unit":"byte","len":2}},
            {"id":2,"name":"Blob","type":"status_readonly","data_type":"binary","position":{"byte_offset":6,"unit":"byte","len":4}}
            ]}]}
            """#
        let model = try ThingModel(gizwitsJSON: Array(document.utf8))
        let codec = try P0Codec(model: model)
        let status = DeviceStatus(data: ["Power": .double(12.34), "Temp": .double(21.5), "Blob": .binary([0xAA, 0xBB])])
        let encoded = Array(try codec.encode(.report(status)).readableBytesView)
        // Power raw = (12.34 + 100) / 0.01 = 11234 = 0x00002BE2; Temp raw = 615 = 0x0267.
        #expect(encoded == [UInt8].hex("04 00 00 2b e2 02 67 aa bb 00 00"))
        let decoded = try codec.decode(ByteBuffer(bytes: encoded)).status
        #expect(decoded?.data["Power"] == .double(12.34))
        #expect(decoded?.data["Temp"] == .double(21.5))
        #expect(decoded?.data["Blob"] == .binary([0xAA, 0xBB, 0, 0]))
    }

    @Test("positions that overlap are refused when the layout is built")
    func overlappingPositions() throws {
        let document = #"{"entities":[{"attrs":[{"name":"A","type":"status_writable","data_type":"uint8","uint_spec":{"min":0,"max":9},"position":{"byte_offset":0,"unit":"byte","len":1}},{"name":"B","type":"status_writable","data_type":"uint8","uint_spec":{"min":0,"max":9},"position":{"byte_offset":0,"unit":"byte","len":1}}]}]}"#
        let model = try ThingModel(gizwitsJSON: Array(document.utf8))
        #expect { _ = try P0Layout(model: model) } throws: { ($0 as? TetherError)?.dataPoint == "B" }
    }

    @Test("variable-length products send only the flagged points, both ways")
    func variableLength() throws {
        var model = try Fixtures.petHouse()
        model.p0Format = .variable
        for index in model.dataPoints.indices { model.dataPoints[index].position = nil }
        let codec = try P0Codec(model: model)
        let control = try codec.encode(.control(["LED_Color": .int(3), "LED_B": .int(200)]))
        // flags over 15 points: ids 1 and 4 → 0x0012; bit region: LED_Color (2 bits) = 3; then LED_B.
        #expect(Array(control.readableBytesView) == [UInt8].hex("11 00 12 03 c8"))
        #expect(try codec.decode(control) == .control(["LED_Color": .int(3), "LED_B": .int(200)]))
        let status = DeviceStatus(values: ["Temperature": .int(25), "Alert_2": .bool(true), "Infrared": .bool(true)], model: model)
        let report = try codec.encode(.report(status))
        // ids 6, 7, 10 → 0x04c0; bits Infrared, Alert_2 → 0b11; Temperature raw 38.
        #expect(Array(report.readableBytesView) == [UInt8].hex("14 04 c0 03 26"))
        #expect(try codec.decode(report) == .report(status))
        let read = try codec.encode(.read(["Humidity"]))
        #expect(Array(read.readableBytesView) == [UInt8].hex("12 01 00"))
        #expect(try codec.decode(read) == .read(["Humidity"]))
    }
}

@Suite("P0 codec edge cases")
struct P0CodecEdgeCaseTests {
    @Test("a value the device reported out of range does not block writes of other points")
    func outOfRangeBaseline() throws {
        let codec = try P0Codec(model: Fixtures.petHouse())
        // Motor_Speed raw 11 (shown 6) is above its max of 10, as a faulty device may report.
        let reported = try #require(codec.decode(ByteBuffer(bytes: [UInt8].hex("04 01 00 00 00 0b 00 00 00 00 00"))).status)
        #expect(reported.data["Motor_Speed"] == .int(6))
        let control = try codec.encode(.control(["LED_R": .int(5)]), baseline: reported.allValues)
        #expect(Array(control.readableBytesView) == [UInt8].hex("01 04 01 05 00 00 00"))
    }

    @Test("a fixed-length product refuses a read of selected points")
    func fixedReadWithNames() throws {
        let codec = try P0Codec(model: Fixtures.petHouse())
        #expect { _ = try codec.encode(.read(["Humidity"])) } throws: { ($0 as? TetherError)?.code == .invalidArgument }
    }
}
