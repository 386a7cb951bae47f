import Testing
import TetherBluetooth
import TetherCore

/// The device log on `AA05` (ble-profiles.md A6): chunks in, lines out.
@Suite("LW003 log")
struct LW003LogAssemblerTests {
    @Test("chunks cut anywhere, even inside a character, give whole lines")
    func lines() {
        var assembler = LW003LogAssembler()
        let text = Array("boot ok\r\nscan: 3 beacons — 25 °C\nlast".utf8)
        var lines: [String] = []
        for start in stride(from: 0, to: text.count, by: 3) {
            lines += assembler.append(Array(text[start..<min(text.count, start + 3)]))
        }
        #expect(lines == ["boot ok", "scan: 3 beacons — 25 °C"])
        #expect(assembler.flush() == "last")
        #expect(assembler.flush() == nil)
    }

    @Test("a line without a break is handed out at the limit")
    func limit() {
        var assembler = LW003LogAssembler(maximumLineLength: 8)
        #expect(assembler.append(Array("0123456789\n".utf8)) == ["01234567", "89"])
    }

    @Test("the simulator's notifications stay under the limit, cut between characters")
    func notifications() throws {
        let text = "déjà vu — 🚀 launched\n"
        let chunks = try LW003LogAssembler.notifications(for: text, maximumLength: 5)
        #expect(chunks.allSatisfy { $0.count <= 5 && String(validating: $0, as: UTF8.self) != nil })
        var assembler = LW003LogAssembler()
        #expect(chunks.flatMap { assembler.append($0) } == ["déjà vu — 🚀 launched"])
        expectError(.invalidArgument) { try LW003LogAssembler.notifications(for: text, maximumLength: 3) }
    }
}
