import Testing
import TetherCore
import TetherTestSupport

@Suite("Aliyun TSL JSON")
struct TSLModelTests {
    @Test("the lamp TSL reads properties, events and services")
    func readsLamp() throws {
        let model = try Fixtures.lamp()
        #expect(model.productKey == "a1LampDemo01")
        #expect(model.dataPoints.map(\.name) == ["LightSwitch", "Brightness", "ColorTemperature", "WorkMode", "PowerConsumption", "Label"])
        #expect(model.dataPoint(named: "PowerConsumption")?.kind == .readOnly)
        guard case .number(let kelvin) = model.dataPoint(named: "ColorTemperature")?.type else {
            Issue.record("ColorTemperature is not a number"); return
        }
        #expect(kelvin.minimum == 2700 && kelvin.maximum == 6500 && kelvin.ratio == 100 && kelvin.kind == .int)
        guard case .number(let power) = model.dataPoint(named: "PowerConsumption")?.type else {
            Issue.record("PowerConsumption is not a number"); return
        }
        #expect(power.kind == .float && power.ratio == 0.1 && power.rawMax == 1000)
        #expect(model.dataPoint(named: "WorkMode")?.type == .enumeration(["manual", "reading", "night"]))
        #expect(model.dataPoint(named: "Label")?.type == .text(maxLength: 64))
        #expect(model.events.map(\.identifier) == ["post", "Overheat", "LampFailure"])
        #expect(model.events[1].type == .alert && model.events[2].type == .error)
        let reboot = try #require(model.services.first { $0.identifier == "Reboot" })
        #expect(reboot.inputData.first?.identifier == "delay")
        #expect(reboot.outputData.first?.type == .bool)
        let get = try #require(model.services.first { $0.identifier == "get" })
        #expect(get.inputData.count == 6 && get.inputData.allSatisfy { $0.type == nil })
    }

    @Test("export then import gives the same model")
    func roundTrip() throws {
        let model = try Fixtures.lamp()
        let again = try ThingModel(tslJSON: Array(model.tslJSON().serialized(pretty: true).utf8))
        #expect(again == model)
    }

    @Test("a TSL product gets P0 positions too")
    func derivesPositions() throws {
        let model = try Fixtures.lamp().withDerivedPositions()
        // Writable: LightSwitch (1 bit) + WorkMode (2 bits) share byte 0; Brightness u8 at 1;
        // ColorTemperature (38 steps) u8 at 2; Label (64 bytes) at 3…66; read-only Power (1000 steps) u16 at 67.
        #expect(model.dataPoint(named: "LightSwitch")?.position == P0Position(byteOffset: 0, bitOffset: 0, length: 1, unit: .bit))
        #expect(model.dataPoint(named: "WorkMode")?.position == P0Position(byteOffset: 0, bitOffset: 1, length: 2, unit: .bit))
        #expect(model.dataPoint(named: "Brightness")?.position == P0Position(byteOffset: 1, length: 1, unit: .byte))
        #expect(model.dataPoint(named: "ColorTemperature")?.position == P0Position(byteOffset: 2, length: 1, unit: .byte))
        #expect(model.dataPoint(named: "Label")?.position == P0Position(byteOffset: 3, length: 64, unit: .byte))
        #expect(model.dataPoint(named: "PowerConsumption")?.position == P0Position(byteOffset: 67, length: 2, unit: .byte))
    }

    @Test("a Gizwits model exports to TSL that reads back with the same values")
    func gizwitsToTSL() throws {
        let petHouse = try Fixtures.petHouse()
        let tsl = try ThingModel(tslJSON: Array(petHouse.tslJSON().serialized().utf8))
        #expect(tsl.dataPoints.map(\.name) == petHouse.dataPoints.map(\.name))
        guard case .number(let motor) = tsl.dataPoint(named: "Motor_Speed")?.type else { Issue.record("not a number"); return }
        #expect(motor.minimum == -5 && motor.maximum == 5)
        #expect(try tsl.normalize(.int(-5), for: "Motor_Speed") == .int(-5))
    }

    @Test("unsupported TSL types are named")
    func unsupportedType() {
        let document = #"{"properties":[{"identifier":"Pos","accessMode":"r","dataType":{"type":"struct","specs":[]}}]}"#
        #expect {
            _ = try ThingModel(tslJSON: Array(document.utf8))
        } throws: { error in
            (error as? TetherError)?.code == .unsupportedDataType && (error as? TetherError)?.dataPoint == "Pos"
        }
    }

    @Test("enums with gaps are refused")
    func enumGaps() {
        let document = #"{"properties":[{"identifier":"M","accessMode":"rw","dataType":{"type":"enum","specs":{"0":"a","2":"c"}}}]}"#
        #expect(throws: TetherError.self) { _ = try ThingModel(tslJSON: Array(document.utf8)) }
    }
}
