import Testing
import TetherCore
import TetherTestSupport

@Suite("Gizwits data-point JSON")
struct GizwitsModelTests {
    @Test("the pet-house document reads into 15 typed data points")
    func readsPetHouse() throws {
        let model = try Fixtures.petHouse()
        #expect(model.productKey == "de9e8d18d9394cce9081b25a531e552b")
        #expect(model.p0Format == .fixed)
        #expect(model.dataPoints.count == 15)
        let color = try #require(model.dataPoint(named: "LED_Color"))
        #expect(color.type == .enumeration(["Customize", "Yellow", "Purple", "Pink"]))
        #expect(color.position == P0Position(byteOffset: 0, bitOffset: 1, length: 2, unit: .bit))
        let motor = try #require(model.dataPoint(named: "Motor_Speed"))
        guard case .number(let spec) = motor.type else { Issue.record("Motor_Speed is not a number"); return }
        #expect(spec.rawMin == 0 && spec.rawMax == 10 && spec.addition == -5 && spec.ratio == 1 && spec.width == .uint8)
        #expect(spec.minimum == -5 && spec.maximum == 5)
        #expect(model.dataPoint(named: "Fault_IR")?.kind == .fault)
        #expect(model.dataPoint(named: "Infrared")?.kind == .readOnly)
    }

    @Test("export then import gives the same model")
    func roundTrip() throws {
        let model = try Fixtures.petHouse()
        let exported = try model.gizwitsJSON().serialized()
        let again = try ThingModel(gizwitsJSON: Array(exported.utf8))
        #expect(again == model)
    }

    @Test("positions derived by the Gizwits rules equal the published ones")
    func derivesPositions() throws {
        let model = try Fixtures.petHouse()
        var stripped = model
        for index in stripped.dataPoints.indices { stripped.dataPoints[index].position = nil }
        let derived = try stripped.withDerivedPositions()
        for (original, computed) in zip(model.dataPoints, derived.dataPoints) {
            #expect(original.position == computed.position, "\(original.name)")
        }
    }

    @Test("enums get the fewest bits that hold their largest index")
    func enumBits() {
        #expect(DataType.enumeration(["a"]).p0BitLength == 1)
        #expect(DataType.enumeration(["a", "b"]).p0BitLength == 1)
        #expect(DataType.enumeration(["a", "b", "c"]).p0BitLength == 2)
        #expect(DataType.enumeration(Array(repeating: "x", count: 5)).p0BitLength == 3)
        #expect(DataType.enumeration(Array(repeating: "x", count: 256)).p0BitLength == 8)
    }

    @Test(
        "bad documents are refused with the path of the bad field",
        arguments: [
            (#"{"entities":[{"attrs":[{"name":"A","type":"status_writable","data_type":"float"}]}]}"#, "data_type \"float\""),
            (#"{"entities":[{"attrs":[{"name":"A","type":"writable","data_type":"bool"}]}]}"#, "type \"writable\""),
            (#"{"entities":[{"attrs":[{"type":"status_writable","data_type":"bool"}]}]}"#, "entities[0].attrs[0].name: missing"),
            (#"{"entities":[{"attrs":[{"name":"A","type":"alert","data_type":"uint8","uint_spec":{"min":5,"max":300}}]}]}"#, "uint_spec"),
            (#"{"entities":[{"attrs":[{"name":"A","type":"alert","data_type":"uint16","uint_spec":{"min":0,"max":3,"ratio":0}}]}]}"#, "ratio"),
            (#"{"entities":[{"attrs":[{"name":"A","type":"alert","data_type":"enum","enum":[]}]}]}"#, "at least one label"),
            (#"{"entities":[{"attrs":[{"name":"A","type":"alert","data_type":"bool"},{"name":"A","type":"alert","data_type":"bool"}]}]}"#, "used twice"),
            (#"{"entities":[]}"#, "needs one entity"),
            (#"[1,2]"#, "JSON object"),
            (#"{"entities":[{"attrs":[{"name":"A","type":"alert","data_type":"bool""#, "JSON"),
        ]
    )
    func refusesBadDocuments(document: String, expected: String) {
        do {
            _ = try ThingModel(productJSON: Array(document.utf8))
            Issue.record("accepted: \(document)")
        } catch {
            #expect([.invalidModel, .invalidArgument].contains(error.code))
            #expect(error.message.contains(expected) || error.description.contains(expected), "\(error)")
        }
    }
}
