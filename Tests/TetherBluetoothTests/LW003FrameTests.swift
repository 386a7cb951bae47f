import Testing
import TetherBluetooth
import TetherCore

/// LW003-V3 frames on `AA00`, `AA01` and `AA02` (ble-profiles.md A3, A4): test vectors 3–8 and 12,
/// round trips and malformed frames.
@Suite("LW003 frames")
struct LW003FrameTests {
    @Test("vector 3: the login for \"Moko4321\", accepted and rejected")
    func vector3() throws {
        let login = try LW003Login(password: "Moko4321")
        #expect(login.bytes == hex("ED 01 01 08 4D 6F 6B 6F 34 33 32 31"))
        #expect(try LW003Login(decoding: login.bytes).password == "Moko4321")
        #expect(try LW003LoginResult(decoding: hex("ED 01 01 01 01")) == .accepted)
        #expect(try LW003LoginResult(decoding: hex("ED 01 01 01 00")) == .rejected)
        #expect(LW003LoginResult.accepted.bytes == hex("ED 01 01 01 01"))
        #expect(LW003LoginResult.rejected.bytes == hex("ED 01 01 01 00"))
        #expect(!"\(login)".contains("Moko4321"))
    }

    @Test("passwords that are not 8 printable ASCII characters are refused", arguments: ["Moko432", "Moko43210", "Moko432\u{7}", "Mokö432"])
    func badPasswords(password: String) {
        expectError(.invalidArgument) { try LW003Login(password: password) }
    }

    @Test("login frames of the wrong shape are refused")
    func malformedLogin() {
        expectError(.malformedFrame) { try LW003Login(decoding: hex("ED 01 01 07 4D 6F 6B 6F 34 33 32")) }
        expectError(.malformedFrame) { try LW003Login(decoding: hex("ED 01 01 08 4D 6F 6B 6F 34 33 32 00")) }
        expectError(.malformedFrame) { try LW003LoginResult(decoding: hex("ED 01 01 01")) }
        expectError(.malformedFrame) { try LW003LoginResult(decoding: hex("ED 01 01 02 01 00")) }
        expectError(.malformedFrame) { try LW003LoginResult(decoding: hex("ED 00 01 01 01")) }
    }

    @Test("vector 4: disconnect reason 2, no traffic for 3 minutes")
    func vector4() throws {
        let reason = try LW003DisconnectReason(decoding: hex("ED 02 01 01 02"))
        #expect(reason == .idleTimeout)
        #expect(reason.description == "idleTimeout")
        for (value, expected) in [(1, LW003DisconnectReason.loginTimeout), (3, .shutDown), (4, .factoryReset), (5, .passwordChanged)] {
            #expect(try LW003DisconnectReason(decoding: expected.bytes).rawValue == UInt8(value))
        }
        #expect(try LW003DisconnectReason(decoding: hex("ED 02 01 01 09")).description == "reason 0x09")
        expectError(.malformedFrame) { try LW003DisconnectReason(decoding: hex("ED 02 01 02 02 00")) }
        expectError(.malformedFrame) { try LW003DisconnectReason(decoding: hex("ED 02 01 01")) }
    }

    @Test("vector 5: the battery voltage reply, 3600 mV")
    func vector5() throws {
        #expect(LW003Frame.readRequest(.batteryVoltage).bytes == hex("ED 00 06 00"))
        let reply = try LW003Frame(decoding: hex("ED 00 06 02 0E 10"))
        #expect(reply.flag == .read && reply.command == .batteryVoltage && reply.payload.count == 2)
        #expect(try reply.batteryMillivolts() == 3600)
        #expect(try LW003Frame.readReply(.batteryVoltage, value: [0x0E, 0x10]).bytes == hex("ED 00 06 02 0E 10"))
    }

    @Test("vector 6: the battery-use counters")
    func vector6() throws {
        let bytes = hex("ED 00 09 0C 00 00 30 39 00 01 51 80 00 00 27 10")
        let usage = try LW003Frame(decoding: bytes).batteryUsage()
        #expect(usage == LW003BatteryUsage(advertisingCount: 12345, scanningSeconds: 86400, loRaTransmitMilliseconds: 10000))
        #expect(usage.readReply.bytes == bytes)
        expectError(.malformedFrame) { try LW003BatteryUsage(payload: [0, 0, 0]) }
    }

    @Test("vector 7: set the clock, set the time zone to UTC−05:30, ok")
    func vector7() throws {
        #expect(LW003Frame.setDeviceTime(unixSeconds: 1_700_000_000).bytes == hex("ED 01 0B 04 65 53 F1 00"))
        #expect(try LW003Frame(decoding: hex("ED 01 0B 04 65 53 F1 00")).unsignedValue() == 1_700_000_000)
        let zone = try LW003Frame.setTimeZone(halfHours: -11)
        #expect(zone.bytes == hex("ED 01 0C 01 F5"))
        #expect(try LW003Frame(decoding: zone.bytes).timeZoneHalfHours() == -11)
        let reply = try LW003Frame(decoding: hex("ED 01 0C 01 01"))
        #expect(reply.command == .timeZone && reply.writeSucceeded == true)
        #expect(LW003Frame.writeResult(.timeZone, success: true) == reply)
        #expect(try LW003Frame(decoding: hex("ED 01 0C 01 00")).writeSucceeded == false)
        expectError(.invalidArgument) { try LW003Frame.setTimeZone(halfHours: 29) }
        expectError(.invalidArgument) { try LW003Frame.setTimeZone(halfHours: -25) }
    }

    @Test("vector 8: upload the last 7 days, ok")
    func vector8() throws {
        #expect(try LW003Frame.startStorageUpload(days: 7).bytes == hex("ED 01 20 02 00 07"))
        #expect(try LW003Frame(decoding: hex("ED 01 20 01 01")).writeSucceeded == true)
        #expect(LW003Frame.setStorageUploadPaused(true).bytes == hex("ED 01 22 01 00"))
        #expect(LW003Frame.setStorageUploadPaused(false).bytes == hex("ED 01 22 01 01"))
        #expect(LW003Frame.eraseStorage.bytes == hex("ED 01 21 00"))
        #expect(LW003Frame.powerOff.bytes == hex("ED 01 01 00"))
        expectError(.invalidArgument) { try LW003Frame.startStorageUpload(days: 0) }
    }

    @Test("ED frames round-trip and keep unknown commands")
    func roundTrip() throws {
        for flag in LW003Frame.Flag.allCases {
            for payload in [[], [0x01], [UInt8](repeating: 0xAB, count: 255)] as [[UInt8]] {
                let frame = try LW003Frame(flag: flag, command: LW003CommandID(rawValue: 0x7E), payload: payload)
                #expect(try LW003Frame(decoding: frame.bytes) == frame)
            }
        }
        #expect(LW003CommandID.advertisingName.description == "advertisingName")
        #expect(LW003CommandID(rawValue: 0x7E).description == "0x7E")
        #expect(try LW003Frame(decoding: hex("ED 00 30 05 4C 57 30 30 33")).textValue() == "LW003")
        expectError(.invalidArgument) { try LW003Frame(flag: .write, command: .advertisingName, payload: [UInt8](repeating: 0, count: 256)) }
    }

    @Test(
        "malformed ED frames are refused",
        arguments: ["", "ED 00 06", "EE 00 06 00", "ED 03 06 00", "ED 00 06 02 0E", "ED 00 06 01 0E 10", "ED 00 06 00 00"])
    func malformed(text: String) {
        expectError(.malformedFrame) { try LW003Frame(decoding: hex(text)) }
    }

    @Test("reply values of the wrong size are refused")
    func badValues() throws {
        expectError(.malformedFrame) { try LW003Frame(decoding: hex("ED 00 06 00")).unsignedValue() }
        expectError(.malformedFrame) { try LW003Frame(decoding: hex("ED 00 06 09 00 00 00 00 00 00 00 00 01")).unsignedValue() }
        expectError(.malformedFrame) { try LW003Frame(decoding: hex("ED 00 06 03 01 00 00")).batteryMillivolts() }
        expectError(.malformedFrame) { try LW003Frame(decoding: hex("ED 00 0C 02 00 00")).timeZoneHalfHours() }
        expectError(.malformedFrame) { try LW003Frame(decoding: hex("ED 00 30 01 80")).textValue() }
    }

    @Test("vector 12: a one-packet read reply of the name filter list, \"TEST\" and \"BEAC\"")
    func vector12() throws {
        let frame = try LW003MultiPacketFrame(decoding: hex("EE 00 99 01 00 0A 04 54 45 53 54 04 42 45 41 43"))
        guard case .packet(let packet) = frame else {
            Issue.record("not a packet: \(frame)")
            return
        }
        #expect(packet.flag == .read && packet.command == .nameFilterList && packet.total == 1 && packet.index == 0 && packet.data.count == 10)
        var assembler = LW003MultiPacketAssembler()
        let value = try #require(try assembler.append(packet))
        #expect(try LW003NameFilterList(decoding: value).names == ["TEST", "BEAC"])
        #expect(try LW003NameFilterList(names: ["TEST", "BEAC"]).readReplyPackets() == [packet])
        #expect(LW003MultiPacketFrame.readRequest(command: .nameFilterList).bytes == hex("EE 00 99 00"))
    }

    @Test("a long list is cut into packets, written, acknowledged and put together again in any order")
    func multiPacket() throws {
        let names = (0..<10).map { "BEACON-NAME-NUMBER-\($0)" }
        let list = try LW003NameFilterList(names: names)
        let packets = try list.writePackets(maximumDataLength: 100)
        #expect(packets.count == 3)
        #expect(packets.map(\.index) == [0, 1, 2] && packets.allSatisfy { $0.total == 3 && $0.flag == .write && $0.data.count <= 100 })
        for packet in packets {
            #expect(try LW003MultiPacketFrame(decoding: packet.bytes) == .packet(packet))
        }
        var assembler = LW003MultiPacketAssembler()
        #expect(try assembler.append(packets[2]) == nil)
        #expect(try assembler.append(packets[0]) == nil)
        let value = try #require(try assembler.append(packets[1]))
        #expect(try LW003NameFilterList(decoding: value) == list)

        let ack = LW003MultiPacketFrame.acknowledgement(command: .nameFilterList, index: 2, success: true)
        #expect(ack.bytes == hex("EE 01 99 02 01"))
        #expect(try LW003MultiPacketFrame(decoding: ack.bytes) == ack)
        #expect(try LW003NameFilterList(names: []).writePackets().map(\.bytes) == [hex("EE 01 99 01 00 00")])
    }

    @Test("inconsistent packets reset the assembler")
    func assemblerErrors() throws {
        let first = try LW003MultiPacket(flag: .read, command: .nameFilterList, total: 2, index: 0, data: [1])
        var assembler = LW003MultiPacketAssembler()
        _ = try assembler.append(first)
        expectError(.malformedFrame) { try assembler.append(first) }
        _ = try assembler.append(first)
        expectError(.malformedFrame) { try assembler.append(LW003MultiPacket(flag: .read, command: .nameFilterList, total: 3, index: 1, data: [])) }
        expectError(.invalidArgument) { try LW003MultiPacket(flag: .read, command: .nameFilterList, total: 1, index: 1, data: []) }
        expectError(.invalidArgument) {
            try LW003MultiPacket.packets(flag: .write, command: .nameFilterList, value: [UInt8](repeating: 0, count: 256), maximumDataLength: 1)
        }
    }

    @Test(
        "malformed EE frames are refused",
        arguments: [
            "EE", "EE 00 99", "EE 01 99 00", "EE 00 99 00 01", "ED 00 99 00", "EE 02 99 01 00 00", "EE 00 99 00 00 00", "EE 00 99 01 01 00",
            "EE 00 99 01 00 02 04",
        ])
    func malformedMultiPacket(text: String) {
        expectError(.malformedFrame) { try LW003MultiPacketFrame(decoding: hex(text)) }
    }

    @Test("name lists that break the limits are refused")
    func nameListLimits() {
        expectError(.invalidArgument) { try LW003NameFilterList(names: Array(repeating: "A", count: 11)) }
        expectError(.invalidArgument) { try LW003NameFilterList(names: [String(repeating: "A", count: 21)]) }
        expectError(.invalidArgument) { try LW003NameFilterList(names: [""]) }
        expectError(.malformedFrame) { try LW003NameFilterList(decoding: hex("05 54 45 53 54")) }
        expectError(.malformedFrame) { try LW003NameFilterList(decoding: hex("00")) }
        expectError(.malformedFrame) { try LW003NameFilterList(decoding: Array(repeating: [0x01, 0x41], count: 11).flatMap { $0 }) }
    }
}
