import Testing
import TetherCore
import TetherTestSupport

@Suite("Validation of values against the model")
struct ValidationTests {
    private func expectError(_ code: TetherError.Code, point: String, _ body: () throws -> Void) {
        do {
            try body()
            Issue.record("expected \(code) for \(point)")
        } catch let error as TetherError {
            #expect(error.code == code, "\(error)")
            #expect(error.dataPoint == point)
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test("each broken rule has its own code and names the data point")
    func rules() throws {
        let model = try Fixtures.petHouse()
        expectError(.unknownDataPoint, point: "Nope") { _ = try model.validateWrite(["Nope": .bool(true)]) }
        expectError(.readOnlyDataPoint, point: "Temperature") { _ = try model.validateWrite(["Temperature": .int(20)]) }
        expectError(.readOnlyDataPoint, point: "Alert_1") { _ = try model.validateWrite(["Alert_1": .bool(true)]) }
        expectError(.valueOutOfRange, point: "Motor_Speed") { _ = try model.validateWrite(["Motor_Speed": .int(6)]) }
        expectError(.valueOutOfRange, point: "Motor_Speed") { _ = try model.validateWrite(["Motor_Speed": .int(-6)]) }
        expectError(.valueOutOfRange, point: "LED_R") { _ = try model.validateWrite(["LED_R": .int(255)]) }
        expectError(.valueOutOfRange, point: "LED_Color") { _ = try model.validateWrite(["LED_Color": .int(4)]) }
        expectError(.valueOutOfRange, point: "LED_Color") { _ = try model.validateWrite(["LED_Color": .string("Green")]) }
        expectError(.wrongValueType, point: "LED_OnOff") { _ = try model.validateWrite(["LED_OnOff": .string("yes")]) }
        expectError(.wrongValueType, point: "LED_R") { _ = try model.validateWrite(["LED_R": .bool(true)]) }
        expectError(.notMultipleOfStep, point: "LED_R") { _ = try model.validateWrite(["LED_R": .double(2.5)]) }
    }

    @Test("steps are checked from the offset, with floating-point tolerance")
    func fractionalSteps() throws {
        let lamp = try Fixtures.lamp()
        #expect(try lamp.normalize(.double(0.3), for: "PowerConsumption") == .double(0.3))
        #expect(try lamp.normalize(.int(3000), for: "ColorTemperature") == .int(3000))
        expectError(.notMultipleOfStep, point: "ColorTemperature") { _ = try lamp.normalize(.int(3050), for: "ColorTemperature") }
        expectError(.notMultipleOfStep, point: "PowerConsumption") { _ = try lamp.normalize(.double(0.35), for: "PowerConsumption") }
        expectError(.valueOutOfRange, point: "Label") { _ = try lamp.normalize(.string(String(repeating: "x", count: 65)), for: "Label") }
    }

    @Test("lenient forms are normalized")
    func normalization() throws {
        let model = try Fixtures.petHouse()
        let normalized = try model.validateWrite(["LED_OnOff": .int(1), "LED_Color": .string("Pink"), "LED_G": .double(7)])
        #expect(normalized == ["LED_OnOff": .bool(true), "LED_Color": .int(3), "LED_G": .int(7)])
    }

    @Test("an empty write is refused")
    func emptyWrite() throws {
        let model = try Fixtures.petHouse()
        #expect(throws: TetherError.self) { _ = try model.validateWrite([:]) }
    }

    @Test("error codes are unique and stable")
    func codes() {
        let values = TetherError.Code.all.map(\.rawValue)
        #expect(Set(values).count == values.count)
        #expect(TetherError.Code.unknownDataPoint.rawValue == 1002)
        #expect(TetherError.Code.timeout.rawValue == 3003)
    }

    @Test("JSON output keeps insertion order and escapes text")
    func jsonOutput() throws {
        let value: JSONValue = .object(["b": 1, "a": .string("x\"y\n"), "c": .array([.double(0.5), .bool(true), .null])])
        #expect(value.serialized() == #"{"b":1,"a":"x\"y\n","c":[0.5,true,null]}"#)
        #expect(try JSONValue.parse(value.serialized()) == value)
    }
}

@Suite("Validation edge cases")
struct ValidationEdgeCaseTests {
    @Test("large raw values still need to be whole steps")
    func largeRawValues() throws {
        let spec = NumberSpec(rawMax: 4_000_000_000, ratio: 1)
        #expect(try spec.raw(for: 600_000, dataPoint: "E") == 600_000)
        #expect { _ = try spec.raw(for: 600_000.5, dataPoint: "E") } throws: { ($0 as? TetherError)?.code == .notMultipleOfStep }
        #expect { _ = try spec.raw(for: 1_000_000.4, dataPoint: "E") } throws: { ($0 as? TetherError)?.code == .notMultipleOfStep }
        let fine = NumberSpec(rawMax: 4_000_000_000, ratio: 0.001)
        #expect(try fine.raw(for: 1234.567, dataPoint: "E") == 1_234_567)
    }

    @Test("huge numbers for an enum are out of range, not a crash")
    func hugeEnumIndex() throws {
        let model = try Fixtures.petHouse()
        #expect { _ = try model.normalize(.double(1e300), for: "LED_Color") } throws: { ($0 as? TetherError)?.code == .valueOutOfRange }
        #expect { _ = try model.normalize(.double(-.infinity), for: "LED_R") } throws: { ($0 as? TetherError)?.code == .wrongValueType }
    }
}
