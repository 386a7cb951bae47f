/// A product's thing model: its data points, events and services.
///
/// One model serves every protocol. It is read from and written to the Gizwits data-point JSON
/// (``init(gizwitsJSON:)``, ``gizwitsJSON()``) and the Aliyun TSL JSON (``init(tslJSON:)``,
/// ``tslJSON()``). Data points keep the Gizwits P0 byte positions when the source had them;
/// ``withDerivedPositions()`` fills them in by the Gizwits rules when it did not.
public struct ThingModel: Hashable, Sendable {
    /// The product key that identifies the product; empty when the source document has none.
    public var productKey: String
    /// The product's name (Gizwits `name`); a TSL document has none, so it is the product key.
    public var name: String
    /// The data points, in the order of the source document.
    public var dataPoints: [DataPoint]
    /// The events the device raises; only TSL documents declare them.
    public var events: [ThingEvent]
    /// The services the device offers; only TSL documents declare them.
    public var services: [ThingService]
    /// How status travels in P0: fixed-length (actions 0x01–0x04) or variable-length (0x11–0x14).
    public var p0Format: P0Format
    /// The Gizwits `packetVersion`, kept for export.
    public var packetVersion: String

    /// Builds a model from its parts without validating them; the initialisers that read a document
    /// validate.
    public init(
        productKey: String,
        name: String,
        dataPoints: [DataPoint],
        events: [ThingEvent] = [],
        services: [ThingService] = [],
        p0Format: P0Format = .fixed,
        packetVersion: String = "0x00000004"
    ) {
        self.productKey = productKey
        self.name = name
        self.dataPoints = dataPoints
        self.events = events
        self.services = services
        self.p0Format = p0Format
        self.packetVersion = packetVersion
    }

    /// The data point with this wire name, or nil when the product has none.
    public func dataPoint(named name: String) -> DataPoint? {
        dataPoints.first { $0.name == name }
    }

    /// Which P0 actions a product uses; the Gizwits `protocolType` (`standard` or `var_len`).
    public enum P0Format: String, Hashable, Sendable {
        /// Actions 0x01–0x04: statuses carry every data point at its fixed position.
        case fixed
        /// Actions 0x11–0x14: messages carry `attr_flags` and only the flagged data points.
        case variable
    }
}

/// One data point of a product.
public struct DataPoint: Hashable, Sendable {
    /// The identifier used on the wire and in the SDK (`LED_OnOff`).
    public var name: String
    /// The name shown to people (Gizwits `display_name`, TSL `name`); ``name`` when the source has none.
    public var displayName: String
    /// Free text about the data point (Gizwits and TSL `desc`); empty when absent.
    public var description: String
    /// Who may change the value and which P0 section carries it.
    public var kind: Kind
    /// The value's type, which decides its wire encoding and the values a write accepts.
    public var type: DataType
    /// Declaration order; `attr_flags` bit positions in P0 follow it.
    public var id: Int
    /// Where the value sits in a fixed-length P0 status, when known.
    public var position: P0Position?
    /// Unit label for numbers (`%`, `°C`), when known.
    public var unit: String?

    /// Builds a data point as given, without validation; `displayName` defaults to `name`.
    public init(
        name: String,
        displayName: String? = nil,
        description: String = "",
        kind: Kind,
        type: DataType,
        id: Int,
        position: P0Position? = nil,
        unit: String? = nil
    ) {
        self.name = name
        self.displayName = displayName ?? name
        self.description = description
        self.kind = kind
        self.type = type
        self.id = id
        self.position = position
        self.unit = unit
    }

    /// What role a data point plays; the Gizwits `type` field.
    public enum Kind: String, Hashable, Sendable, CaseIterable {
        /// Status the app may write (`status_writable`).
        case writable = "status_writable"
        /// Status only the device changes (`status_readonly`).
        case readOnly = "status_readonly"
        /// An alarm condition reported by the device (`alert`).
        case alert = "alert"
        /// A fault condition reported by the device (`fault`).
        case fault = "fault"
    }
}

/// The type of a data point's value.
public enum DataType: Hashable, Sendable {
    /// True or false; one bit of a P0 bit region.
    case bool
    /// An enumeration; the wire value is the index of the label.
    case enumeration([String])
    /// A number carried as an unsigned raw value; the spec gives its range, step and width.
    case number(NumberSpec)
    /// UTF-8 text of at most `maxLength` bytes.
    case text(maxLength: Int)
    /// Raw bytes, exactly `length` on the fixed-length wire (shorter values are zero-padded).
    case binary(length: Int)
}

/// A number as the Gizwits protocol carries it: an unsigned raw value `x` on the wire, shown to
/// people as `y = x · ratio + addition`.
public struct NumberSpec: Hashable, Sendable {
    /// Smallest raw value (inclusive).
    public var rawMin: UInt32
    /// Largest raw value (inclusive).
    public var rawMax: UInt32
    /// The step between two shown values (Gizwits `ratio`, TSL `step`).
    public var ratio: Double
    /// The shown value of raw 0 (Gizwits `addition`).
    public var addition: Double
    /// The wire width. Nil when the source did not say; ``ThingModel/withDerivedPositions()``
    /// then picks the smallest width that holds `rawMax`.
    public var width: Width?
    /// Integer or floating point, as the source declared (TSL `int`/`float`/`double`).
    public var kind: Kind

    /// Builds a spec without validating it; `kind` defaults to `.int` when `ratio` and `addition` are
    /// whole numbers, otherwise `.double`.
    public init(rawMin: UInt32 = 0, rawMax: UInt32, ratio: Double = 1, addition: Double = 0, width: Width? = nil, kind: Kind? = nil) {
        self.rawMin = rawMin
        self.rawMax = rawMax
        self.ratio = ratio
        self.addition = addition
        self.width = width
        self.kind = kind ?? (ratio.isIntegral && addition.isIntegral ? .int : .double)
    }

    /// The smallest and largest shown values.
    public var minimum: Double { display(raw: rawMin) }
    /// The largest shown value, that of `rawMax`.
    public var maximum: Double { display(raw: rawMax) }

    /// The width that is given, or the smallest that holds `rawMax`.
    public var effectiveWidth: Width {
        if let width { return width }
        if rawMax <= UInt32(UInt8.max) { return .uint8 }
        if rawMax <= UInt32(UInt16.max) { return .uint16 }
        return .uint32
    }

    /// The shown value of a raw value, rounded to the precision of `ratio` so that
    /// 3 · 0.1 reads as 0.3.
    public func display(raw: UInt32) -> Double {
        let value = Double(raw) * ratio + addition
        return Self.round(value, toPrecisionOf: ratio, addition)
    }

    /// The shown value of a raw value: `.int` when ``kind`` is `.int` and the value is whole,
    /// otherwise `.double`.
    public func value(raw: UInt32) -> DataValue {
        let shown = display(raw: raw)
        if kind == .int, shown.isIntegral, abs(shown) < 9.0e15 { return .int(Int64(shown)) }
        return .double(shown)
    }

    static func round(_ value: Double, toPrecisionOf numbers: Double...) -> Double {
        let digits = numbers.map(\.decimalDigits).max() ?? 0
        guard digits > 0 else { return value.rounded() }
        var scale = 1.0
        for _ in 0..<digits { scale *= 10 }
        return (value * scale).rounded() / scale
    }

    /// The unsigned integer a number occupies on the wire, big-endian (Gizwits `data_type`).
    public enum Width: String, Hashable, Sendable {
        /// Gizwits `uint8`, `uint16` and `uint32`.
        case uint8, uint16, uint32

        /// Bytes the value takes in P0: 1, 2 or 4.
        public var byteCount: Int {
            switch self {
            case .uint8: return 1
            case .uint16: return 2
            case .uint32: return 4
            }
        }

        /// The largest raw value the width can hold.
        public var maxRaw: UInt32 {
            switch self {
            case .uint8: return UInt32(UInt8.max)
            case .uint16: return UInt32(UInt16.max)
            case .uint32: return UInt32.max
            }
        }
    }

    /// Whether the source declared an integer or a floating-point number; it decides whether values
    /// read as `.int` and the TSL type written on export.
    public enum Kind: String, Hashable, Sendable {
        case int
        case float
        case double
    }
}

/// Where a data point sits in a fixed-length P0 status (the Gizwits `position` object).
public struct P0Position: Hashable, Sendable {
    /// Absolute byte offset within `dev_status`; for bit fields, the first byte of the region.
    public var byteOffset: Int
    /// Bit offset within the section's bit region (bit fields only).
    public var bitOffset: Int
    /// Length in bits (unit `bit`) or bytes (unit `byte`).
    public var length: Int
    /// Whether ``length`` counts bits (bools and enums in a bit region) or bytes (numbers, binary).
    public var unit: Unit

    /// Builds a position as given; the P0 layout checks it against the type and the other points.
    public init(byteOffset: Int, bitOffset: Int = 0, length: Int, unit: Unit) {
        self.byteOffset = byteOffset
        self.bitOffset = bitOffset
        self.length = length
        self.unit = unit
    }

    /// The Gizwits `position.unit`.
    public enum Unit: String, Hashable, Sendable {
        case bit
        case byte
    }
}

/// An event a device raises (TSL `events`).
public struct ThingEvent: Hashable, Sendable {
    /// The TSL `identifier` that names the event on the wire.
    public var identifier: String
    /// The name shown to people; ``identifier`` when the source has none.
    public var name: String
    /// How serious the event is (TSL `type`).
    public var type: EventType
    /// The parameters the event carries.
    public var outputData: [ThingParameter]
    /// The TSL `required` flag, kept for export.
    public var required: Bool

    /// Builds an event without validation; `name` defaults to `identifier`.
    public init(identifier: String, name: String? = nil, type: EventType, outputData: [ThingParameter] = [], required: Bool = false) {
        self.identifier = identifier
        self.name = name ?? identifier
        self.type = type
        self.outputData = outputData
        self.required = required
    }

    /// The TSL event `type`: `info`, `alert` or `error`.
    public enum EventType: String, Hashable, Sendable {
        case info
        case alert
        case error
    }
}

/// A service a device offers (TSL `services`).
public struct ThingService: Hashable, Sendable {
    /// The TSL `identifier` that names the service on the wire.
    public var identifier: String
    /// The name shown to people; ``identifier`` when the source has none.
    public var name: String
    /// Whether the caller waits for the answer (TSL `callType`).
    public var callType: CallType
    /// The parameters the caller sends.
    public var inputData: [ThingParameter]
    /// The parameters the device answers with.
    public var outputData: [ThingParameter]
    /// The TSL `required` flag, kept for export.
    public var required: Bool

    /// Builds a service without validation; `name` defaults to `identifier`.
    public init(
        identifier: String,
        name: String? = nil,
        callType: CallType = .async,
        inputData: [ThingParameter] = [],
        outputData: [ThingParameter] = [],
        required: Bool = false
    ) {
        self.identifier = identifier
        self.name = name ?? identifier
        self.callType = callType
        self.inputData = inputData
        self.outputData = outputData
        self.required = required
    }

    /// The TSL service `callType`: `sync` (the caller waits for the answer) or `async`.
    public enum CallType: String, Hashable, Sendable {
        case sync
        case async
    }
}

/// An input or output of an event or service. `type` is nil when the model names the
/// parameter only (the TSL `get` service lists bare property identifiers).
public struct ThingParameter: Hashable, Sendable {
    /// The TSL `identifier` that names the parameter in messages.
    public var identifier: String
    /// The name shown to people; ``identifier`` when the source has none.
    public var name: String
    /// The parameter's type; nil when the model only names it.
    public var type: DataType?
    /// Unit label for numbers (`%`, `°C`), when given.
    public var unit: String?

    /// Builds a parameter without validation; `name` defaults to `identifier`.
    public init(identifier: String, name: String? = nil, type: DataType?, unit: String? = nil) {
        self.identifier = identifier
        self.name = name ?? identifier
        self.type = type
        self.unit = unit
    }
}

extension Double {
    var isIntegral: Bool { isFinite && self == rounded() }

    /// Decimal digits needed to write the number exactly (0.25 → 2), at most 9.
    var decimalDigits: Int {
        var value = abs(self)
        var digits = 0
        while digits < 9, !(abs(value - value.rounded()) < 1e-9) {
            value *= 10
            digits += 1
        }
        return digits
    }
}

extension ThingModel {
    /// Reads a product model in either format: a Gizwits data-point document (it has `entities`)
    /// or an Aliyun TSL document (it has `properties`, `events` or `services`).
    public init(productJSON bytes: some Collection<UInt8>) throws(TetherError) {
        let document = try JSONValue.parse(bytes)
        guard case .object(let object) = document else {
            throw TetherError(.invalidModel, "a product model must be a JSON object")
        }
        if object["entities"] != nil {
            try self.init(gizwitsJSON: bytes)
        } else if object["properties"] != nil || object["events"] != nil || object["services"] != nil {
            try self.init(tslJSON: bytes)
        } else {
            throw TetherError(.invalidModel, "neither a Gizwits data-point document (entities) nor an Aliyun TSL document (properties)")
        }
    }
}
