// The Gizwits data-point JSON (`GET /app/datapoint`): `entities[0].attrs[]`, see
// `shared/reference/gizwits-lan.md` §8.2.

extension ThingModel {
    /// Reads a Gizwits data-point document. The model is validated: duplicate names, unknown
    /// types, inconsistent positions and impossible ranges are reported with the path of the field.
    public init(gizwitsJSON bytes: some Collection<UInt8>) throws(TetherError) {
        let document = JSONReader(try JSONValue.parse(bytes))
        let protocolType = try document.optional("protocolType")?.string() ?? "standard"
        let packetVersion = try document.optional("packetVersion")?.string() ?? "0x00000004"
        let format: P0Format = protocolType == "var_len" ? .variable : .fixed
        let entities = try document.require("entities").array()
        guard let entity = entities.first else { throw document.fail("entities: needs one entity") }
        var points: [DataPoint] = []
        for (index, attr) in try entity.require("attrs").array().enumerated() {
            points.append(try Self.gizwitsDataPoint(attr, index: index, keepPosition: format == .fixed))
        }
        self.init(
            productKey: try document.optional("product_key")?.string() ?? "",
            name: try document.optional("name")?.string() ?? "",
            dataPoints: points,
            p0Format: format,
            packetVersion: packetVersion
        )
        try validateStructure()
        if format == .fixed, dataPoints.contains(where: { $0.position != nil }) {
            guard dataPoints.allSatisfy({ $0.position != nil }) else {
                let missing = dataPoints.first { $0.position == nil }!.name
                throw TetherError(.invalidModel, "\"\(missing)\" has no position while others do", dataPoint: missing)
            }
        }
    }

    private static func gizwitsDataPoint(_ attr: JSONReader, index: Int, keepPosition: Bool) throws(TetherError) -> DataPoint {
        let name = try attr.require("name").nonEmptyString()
        let kindText = try attr.require("type").string()
        guard let kind = DataPoint.Kind(rawValue: kindText) else {
            throw attr.fail("type \"\(kindText)\" is not status_writable, status_readonly, alert or fault")
        }
        let dataType = try attr.require("data_type").string()
        let position = try attr.optional("position").map { reader throws(TetherError) in try gizwitsPosition(reader) }
        let type: DataType
        switch dataType {
        case "bool":
            type = .bool
        case "enum":
            let labels = try attr.require("enum").array().map { label throws(TetherError) in try label.string() }
            guard !labels.isEmpty else { throw attr.fail("enum: needs at least one label") }
            type = .enumeration(labels)
        case "uint8", "uint16", "uint32":
            let width = NumberSpec.Width(rawValue: dataType)!
            let spec = try attr.require("uint_spec")
            let minimum = try spec.require("min").number()
            let maximum = try spec.require("max").number()
            let ratio = try spec.optional("ratio")?.number() ?? 1
            let addition = try spec.optional("addition")?.number() ?? 0
            guard minimum >= 0, minimum.isIntegral, maximum.isIntegral, minimum <= maximum, maximum <= Double(width.maxRaw) else {
                throw spec.fail("min \(minimum) and max \(maximum) must be whole numbers with 0 ≤ min ≤ max ≤ \(width.maxRaw) for \(dataType)")
            }
            guard ratio > 0 else { throw spec.fail("ratio must be greater than 0") }
            type = .number(NumberSpec(rawMin: UInt32(minimum), rawMax: UInt32(maximum), ratio: ratio, addition: addition, width: width))
        case "binary":
            guard let position, position.unit == .byte, position.length > 0 else {
                throw attr.fail("binary data points need a position with unit byte and a length")
            }
            type = .binary(length: position.length)
        default:
            throw attr.fail("data_type \"\(dataType)\" is not bool, enum, uint8, uint16, uint32 or binary")
        }
        return DataPoint(
            name: name,
            displayName: try attr.optional("display_name")?.string(),
            description: try attr.optional("desc")?.string() ?? "",
            kind: kind,
            type: type,
            id: try attr.optional("id")?.int() ?? index,
            position: keepPosition ? position : nil
        )
    }

    private static func gizwitsPosition(_ reader: JSONReader) throws(TetherError) -> P0Position {
        let unitText = try reader.require("unit").string()
        guard let unit = P0Position.Unit(rawValue: unitText) else { throw reader.fail("unit \"\(unitText)\" is not bit or byte") }
        let position = P0Position(
            byteOffset: try reader.require("byte_offset").int(),
            bitOffset: try reader.optional("bit_offset")?.int() ?? 0,
            length: try reader.require("len").int(),
            unit: unit
        )
        guard position.byteOffset >= 0, position.bitOffset >= 0, position.length > 0 else {
            throw reader.fail("byte_offset and bit_offset must be ≥ 0 and len > 0")
        }
        return position
    }

    /// Writes the Gizwits data-point document. Positions are included (derived by the Gizwits
    /// rules when the model has none) for fixed-length products; variable-length products get
    /// zero offsets, as Gizwits publishes them.
    public func gizwitsJSON() throws(TetherError) -> JSONValue {
        let positioned = try withDerivedPositions()
        var attrs: [JSONValue] = []
        for point in positioned.dataPoints {
            var attr: JSONObject = [:]
            attr["id"] = .int(Int64(point.id))
            attr["name"] = .string(point.name)
            attr["display_name"] = .string(point.displayName)
            attr["desc"] = .string(point.description)
            attr["type"] = .string(point.kind.rawValue)
            let position = point.position!
            switch point.type {
            case .bool:
                attr["data_type"] = "bool"
            case .enumeration(let labels):
                attr["data_type"] = "enum"
                attr["enum"] = .array(labels.map { .string($0) })
            case .number(let spec):
                attr["data_type"] = .string(spec.effectiveWidth.rawValue)
                attr["uint_spec"] = .object([
                    "min": .int(Int64(spec.rawMin)), "max": .int(Int64(spec.rawMax)),
                    "ratio": .double(spec.ratio), "addition": .double(spec.addition),
                ])
            case .binary, .text:
                attr["data_type"] = "binary"
            }
            let offsets = p0Format == .fixed
            attr["position"] = .object([
                "byte_offset": .int(offsets ? Int64(position.byteOffset) : 0),
                "bit_offset": .int(offsets ? Int64(position.bitOffset) : 0),
                "len": .int(Int64(position.length)),
                "unit": .string(position.unit.rawValue),
            ])
            attrs.append(.object(attr))
        }
        return .object([
            "name": .string(name),
            "product_key": .string(productKey),
            "protocolType": .string(p0Format == .variable ? "var_len" : "standard"),
            "packetVersion": .string(packetVersion),
            "entities": .array([.object(["id": 0, "name": "entity0", "attrs": .array(attrs)])]),
        ])
    }

    /// Checks what every model must satisfy whatever its source: unique, non-empty names and ids,
    /// non-empty enums, positive lengths.
    func validateStructure() throws(TetherError) {
        var names = Set<String>()
        var ids = Set<Int>()
        for point in dataPoints {
            guard !point.name.isEmpty else { throw TetherError(.invalidModel, "a data point has an empty name") }
            guard names.insert(point.name).inserted else {
                throw TetherError(.invalidModel, "the name \"\(point.name)\" is used twice", dataPoint: point.name)
            }
            guard ids.insert(point.id).inserted else {
                throw TetherError(.invalidModel, "the id \(point.id) is used twice", dataPoint: point.name)
            }
            switch point.type {
            case .enumeration(let labels) where labels.isEmpty:
                throw TetherError(.invalidModel, "an enum needs at least one label", dataPoint: point.name)
            case .text(let length) where length <= 0, .binary(let length) where length <= 0:
                throw TetherError(.invalidModel, "a length must be greater than 0", dataPoint: point.name)
            case .number(let spec) where spec.rawMin > spec.rawMax || spec.ratio <= 0 || spec.rawMax > spec.effectiveWidth.maxRaw:
                throw TetherError(.invalidModel, "the number range or ratio is impossible", dataPoint: point.name)
            default:
                break
            }
        }
    }
}
