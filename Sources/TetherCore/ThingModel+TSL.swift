// The Aliyun IoT thing specification language (TSL) JSON: `profile`, `properties`, `events`,
// `services` (`shared/reference/alink-mqtt.md` §7 and `shared/reference/products/lamp-tsl.json`).
//
// Mapping: a property with `accessMode` "rw" is a writable data point, "r" a read-only one.
// Numbers become raw values from 0 with `addition` = min and `ratio` = step, so every TSL product
// can also be carried in P0. TSL has no alert, fault or binary properties: on export, alerts and
// faults become read-only properties and binary becomes hex text of twice its length.

extension ThingModel {
    /// Reads an Aliyun TSL document. `struct`, `array` and `date` types are reported as
    /// `TetherError.Code.unsupportedDataType` with the property's name.
    public init(tslJSON bytes: some Collection<UInt8>) throws(TetherError) {
        let document = JSONReader(try JSONValue.parse(bytes))
        let productKey = try document.optional("profile")?.optional("productKey")?.string() ?? ""
        var points: [DataPoint] = []
        for (index, property) in (try document.optional("properties")?.array() ?? []).enumerated() {
            let identifier = try property.require("identifier").nonEmptyString()
            let access = try property.optional("accessMode")?.string() ?? "rw"
            guard access == "rw" || access == "r" else { throw property.fail("accessMode \"\(access)\" is not rw or r") }
            let (type, unit) = try Self.tslDataType(property.require("dataType"), name: identifier)
            points.append(
                DataPoint(
                    name: identifier,
                    displayName: try property.optional("name")?.string(),
                    description: try property.optional("desc")?.string() ?? "",
                    kind: access == "rw" ? .writable : .readOnly,
                    type: type,
                    id: index,
                    unit: unit
                ))
        }
        var events: [ThingEvent] = []
        for event in try document.optional("events")?.array() ?? [] {
            let typeText = try event.optional("type")?.string() ?? "info"
            guard let type = ThingEvent.EventType(rawValue: typeText) else { throw event.fail("type \"\(typeText)\" is not info, alert or error") }
            events.append(
                ThingEvent(
                    identifier: try event.require("identifier").nonEmptyString(),
                    name: try event.optional("name")?.string(),
                    type: type,
                    outputData: try Self.tslParameters(event.optional("outputData")),
                    required: try event.optional("required")?.bool() ?? false
                ))
        }
        var services: [ThingService] = []
        for service in try document.optional("services")?.array() ?? [] {
            let callText = try service.optional("callType")?.string() ?? "async"
            guard let callType = ThingService.CallType(rawValue: callText) else { throw service.fail("callType \"\(callText)\" is not sync or async") }
            services.append(
                ThingService(
                    identifier: try service.require("identifier").nonEmptyString(),
                    name: try service.optional("name")?.string(),
                    callType: callType,
                    inputData: try Self.tslParameters(service.optional("inputData")),
                    outputData: try Self.tslParameters(service.optional("outputData")),
                    required: try service.optional("required")?.bool() ?? false
                ))
        }
        self.init(productKey: productKey, name: productKey, dataPoints: points, events: events, services: services)
        try validateStructure()
    }

    private static func tslParameters(_ reader: JSONReader?) throws(TetherError) -> [ThingParameter] {
        guard let reader else { return [] }
        var parameters: [ThingParameter] = []
        for item in try reader.array() {
            if case .string(let identifier) = item.value {
                parameters.append(ThingParameter(identifier: identifier, type: nil))
                continue
            }
            let identifier = try item.require("identifier").nonEmptyString()
            let typed = try item.optional("dataType").map { reader throws(TetherError) in try tslDataType(reader, name: identifier) }
            parameters.append(ThingParameter(identifier: identifier, name: try item.optional("name")?.string(), type: typed?.0, unit: typed?.1))
        }
        return parameters
    }

    private static func tslDataType(_ reader: JSONReader, name: String) throws(TetherError) -> (DataType, String?) {
        let typeName = try reader.require("type").string()
        let specs = try reader.optional("specs")
        switch typeName {
        case "bool":
            return (.bool, nil)
        case "enum":
            guard let specs else { throw reader.fail("enum needs specs") }
            let object = try specs.object()
            var labels: [(Int, String)] = []
            for key in object.keys {
                guard let index = Int(key), index >= 0 else { throw specs.fail("enum key \"\(key)\" is not a number") }
                labels.append((index, try JSONReader(object[key]!, path: "\(specs.path).\(key)").string()))
            }
            labels.sort { $0.0 < $1.0 }
            guard !labels.isEmpty, labels.enumerated().allSatisfy({ $0.offset == $0.element.0 }) else {
                throw TetherError(.unsupportedDataType, "enum values must be 0…n-1 without gaps", dataPoint: name)
            }
            return (.enumeration(labels.map(\.1)), nil)
        case "int", "float", "double":
            guard let specs else { throw reader.fail("\(typeName) needs specs with min and max") }
            let minimum = try specs.require("min").number()
            let maximum = try specs.require("max").number()
            let step = try specs.optional("step")?.number() ?? (typeName == "int" ? 1 : 0.01)
            guard maximum >= minimum, step > 0 else { throw specs.fail("needs min ≤ max and step > 0") }
            let steps = ((maximum - minimum) / step + 1e-9).rounded(.down)
            guard steps <= Double(UInt32.max) else {
                throw TetherError(.unsupportedDataType, "\((maximum - minimum) / step) steps do not fit in 32 bits", dataPoint: name)
            }
            let spec = NumberSpec(rawMax: UInt32(steps), ratio: step, addition: minimum, kind: NumberSpec.Kind(rawValue: typeName))
            return (.number(spec), try specs.optional("unit")?.string())
        case "text":
            let length = try specs?.optional("length")?.int() ?? 2048
            guard length > 0 else { throw reader.fail("text length must be greater than 0") }
            return (.text(maxLength: length), nil)
        default:
            throw TetherError(.unsupportedDataType, "TSL type \"\(typeName)\" is not supported (bool, enum, int, float, double, text are)", dataPoint: name)
        }
    }

    /// Writes the Aliyun TSL document.
    public func tslJSON() -> JSONValue {
        let properties: [JSONValue] = dataPoints.map { point in
            .object([
                "identifier": .string(point.name),
                "name": .string(point.displayName),
                "accessMode": point.kind == .writable ? "rw" : "r",
                "required": .bool(false),
                "dataType": Self.tslDataType(point.type, unit: point.unit),
            ])
        }
        let events: [JSONValue] = events.map { event in
            .object([
                "identifier": .string(event.identifier),
                "name": .string(event.name),
                "type": .string(event.type.rawValue),
                "required": .bool(event.required),
                "method": .string("thing.event.\(event.identifier == "post" ? "property" : event.identifier).post"),
                "outputData": .array(event.outputData.map(Self.tslParameter)),
            ])
        }
        let services: [JSONValue] = services.map { service in
            let method: String
            switch service.identifier {
            case "set", "get": method = "thing.service.property.\(service.identifier)"
            default: method = "thing.service.\(service.identifier)"
            }
            return .object([
                "identifier": .string(service.identifier),
                "name": .string(service.name),
                "required": .bool(service.required),
                "callType": .string(service.callType.rawValue),
                "method": .string(method),
                "inputData": .array(service.inputData.map(Self.tslParameter)),
                "outputData": .array(service.outputData.map(Self.tslParameter)),
            ])
        }
        return .object([
            "schema": "https://iotx-tsl.oss-ap-southeast-1.aliyuncs.com/schema.json",
            "profile": .object(["productKey": .string(productKey), "version": "1.0"]),
            "properties": .array(properties),
            "events": .array(events),
            "services": .array(services),
        ])
    }

    private static func tslParameter(_ parameter: ThingParameter) -> JSONValue {
        guard let type = parameter.type else { return .string(parameter.identifier) }
        return .object([
            "identifier": .string(parameter.identifier),
            "name": .string(parameter.name),
            "dataType": tslDataType(type, unit: parameter.unit),
        ])
    }

    private static func tslDataType(_ type: DataType, unit: String?) -> JSONValue {
        switch type {
        case .bool:
            return .object(["type": "bool", "specs": .object(["0": "false", "1": "true"])])
        case .enumeration(let labels):
            var specs = JSONObject()
            for (index, label) in labels.enumerated() { specs[String(index)] = .string(label) }
            return .object(["type": "enum", "specs": .object(specs)])
        case .number(let spec):
            var specs: JSONObject = [
                "min": .string(NumberSpec.format(spec.minimum)),
                "max": .string(NumberSpec.format(spec.maximum)),
                "step": .string(NumberSpec.format(spec.ratio)),
            ]
            if let unit { specs["unit"] = .string(unit) }
            return .object(["type": .string(spec.kind.rawValue), "specs": .object(specs)])
        case .text(let maxLength):
            return .object(["type": "text", "specs": .object(["length": .string(String(maxLength))])])
        case .binary(let length):
            return .object(["type": "text", "specs": .object(["length": .string(String(length * 2))])])
        }
    }
}
