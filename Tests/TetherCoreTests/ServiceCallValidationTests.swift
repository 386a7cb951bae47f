import Testing
import TetherCore

@Suite("Service calls against the model's inputs")
struct ServiceCallValidationTests {
    static let reboot = ThingService(identifier: "Reboot", inputData: [
        ThingParameter(identifier: "delay", type: .number(NumberSpec(rawMin: 0, rawMax: 60))),
        ThingParameter(identifier: "mode", type: .enumeration(["soft", "hard"])),
        ThingParameter(identifier: "note", type: nil),
    ])

    @Test("good parameters are normalized")
    func accepted() throws {
        let call = try Self.reboot.validateCall(["delay": .int(3), "mode": .string("hard"), "note": .string("anything")])
        #expect(call == ["delay": .int(3), "mode": .int(1), "note": .string("anything")])
    }

    @Test("each fault names the parameter", arguments: [
        (["delay": DataValue.int(61), "mode": .int(0), "note": .int(0)], "delay"),
        (["delay": .string("soon"), "mode": .int(0), "note": .int(0)], "delay"),
        (["delay": .int(1), "mode": .string("warm"), "note": .int(0)], "mode"),
        (["delay": .int(1), "mode": .int(0), "note": .int(0), "extra": .int(1)], "extra"),
        (["delay": .int(1), "note": .int(0)], "mode"),
    ] as [([String: DataValue], String)])
    func refused(params: [String: DataValue], parameter: String) {
        do {
            _ = try Self.reboot.validateCall(params)
            Issue.record("accepted \(params)")
        } catch {
            #expect(error.dataPoint == parameter, "\(error)")
        }
    }
}
