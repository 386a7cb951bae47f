public import TetherCore

/// Where every data point of a product sits in a fixed-length P0 `dev_status`, checked for
/// consistency (`shared/reference/gizwits-lan.md` §8.3–8.5).
public struct P0Layout: Hashable, Sendable {
    /// A data point and where its value sits in `dev_status`.
    public struct Field: Hashable, Sendable {
        /// The data point, with its position filled in.
        public let point: DataPoint
        /// Where the value sits in `dev_status`.
        public let placement: Placement
    }

    /// Where a value sits: bits of its section's bit region, or whole bytes.
    public enum Placement: Hashable, Sendable {
        /// `bitLength` bits at `bitOffset` of the big-endian integer formed by the region bytes.
        case bits(regionStart: Int, regionLength: Int, bitOffset: Int, bitLength: Int)
        /// `length` bytes at the absolute `offset`.
        case bytes(offset: Int, length: Int)

        var end: Int {
            switch self {
            case .bits(let start, let length, _, _): return start + length
            case .bytes(let offset, let length): return offset + length
            }
        }
    }

    /// Every data point, in id order (the order of `attr_flags` bits).
    public let fields: [Field]
    /// Bytes of `dev_status` (all sections).
    public let statusLength: Int
    /// Bytes of the writable section, which a fixed-length control carries as `attr_vals`.
    public let writableLength: Int
    /// Indices into `fields` of the writable points, in id order.
    public let writableIndices: [Int]

    /// Bytes of the fixed-length control `attr_flags` (one bit per writable point).
    public var writableFlagsLength: Int { (writableIndices.count + 7) / 8 }
    /// Bytes of the variable-length `attr_flags` (one bit per data point).
    public var allFlagsLength: Int { (fields.count + 7) / 8 }

    /// Derives any missing positions and checks them. Throws `TetherError.Code.invalidModel` when a
    /// section's bools and enums do not share one bit region, a length does not fit its type, or
    /// points overlap.
    public init(model: ThingModel) throws(TetherError) {
        let positioned = try model.withDerivedPositions()
        let points = positioned.dataPoints.sorted { $0.id < $1.id }
        var fields: [Field] = []
        var previousEnd = 0
        var writableEnd = 0
        for kind in DataPoint.Kind.allCases {
            let members = points.filter { $0.kind == kind }
            guard !members.isEmpty else { continue }
            let bitMembers = members.filter { $0.type.p0BitLength != nil }
            var sectionFields: [Field] = []
            if let regionStart = bitMembers.first?.position?.byteOffset {
                var bitsUsed = 0
                for point in bitMembers {
                    let position = point.position!
                    guard position.unit == .bit, position.byteOffset == regionStart else {
                        throw TetherError(
                            .invalidModel, "bool and enum points of a section must share their region's byte_offset (\(regionStart)) with unit bit",
                            dataPoint: point.name)
                    }
                    guard position.length >= point.type.p0BitLength!, position.length <= 32 else {
                        throw TetherError(
                            .invalidModel, "len \(position.length) bits cannot hold the values of this \(point.type.p0BitLength == 1 ? "bool" : "enum")",
                            dataPoint: point.name)
                    }
                    bitsUsed = max(bitsUsed, position.bitOffset + position.length)
                }
                let regionLength = (bitsUsed + 7) / 8
                for point in bitMembers {
                    let position = point.position!
                    sectionFields.append(
                        Field(
                            point: point,
                            placement: .bits(regionStart: regionStart, regionLength: regionLength, bitOffset: position.bitOffset, bitLength: position.length)))
                }
            }
            for point in members where point.type.p0BitLength == nil {
                let position = point.position!
                guard position.unit == .byte else {
                    throw TetherError(.invalidModel, "numbers and binaries need a position with unit byte", dataPoint: point.name)
                }
                if case .number(let spec) = point.type, position.length != spec.effectiveWidth.byteCount {
                    throw TetherError(.invalidModel, "len \(position.length) does not match \(spec.effectiveWidth.rawValue)", dataPoint: point.name)
                }
                sectionFields.append(Field(point: point, placement: .bytes(offset: position.byteOffset, length: position.length)))
            }
            try Self.checkNoOverlap(sectionFields, from: previousEnd)
            previousEnd = sectionFields.map(\.placement.end).max()!
            if kind == .writable { writableEnd = previousEnd }
            fields += sectionFields
        }
        fields.sort { $0.point.id < $1.point.id }
        self.fields = fields
        self.statusLength = previousEnd
        self.writableLength = writableEnd
        self.writableIndices = fields.indices.filter { fields[$0].point.kind == .writable }
    }

    /// Fields of a section must lie at or after `start` (sections come in order and the writable
    /// one starts at 0) and must not share bytes, except bit fields of one region, whose bits
    /// must not overlap.
    private static func checkNoOverlap(_ fields: [Field], from start: Int) throws(TetherError) {
        var claimed: [Int: String] = [:]
        var bitsClaimed: [Int: String] = [:]
        for field in fields {
            switch field.placement {
            case .bits(let regionStart, let regionLength, let bitOffset, let bitLength):
                guard regionStart >= start else {
                    throw TetherError(
                        .invalidModel, "byte_offset \(regionStart) lies inside the previous section, which ends at \(start)", dataPoint: field.point.name)
                }
                for bit in bitOffset..<(bitOffset + bitLength) {
                    if let other = bitsClaimed[regionStart * 8 + bit] {
                        throw TetherError(
                            .invalidModel, "bit \(bit) of the region at byte \(regionStart) is also used by \"\(other)\"", dataPoint: field.point.name)
                    }
                    bitsClaimed[regionStart * 8 + bit] = field.point.name
                }
                for byte in regionStart..<(regionStart + regionLength) where claimed[byte] == nil {
                    claimed[byte] = field.point.name
                }
            case .bytes(let offset, let length):
                guard offset >= start else {
                    throw TetherError(
                        .invalidModel, "byte_offset \(offset) lies inside the previous section, which ends at \(start)", dataPoint: field.point.name)
                }
                for byte in offset..<(offset + length) {
                    if let other = claimed[byte] {
                        throw TetherError(.invalidModel, "byte \(byte) is also used by \"\(other)\"", dataPoint: field.point.name)
                    }
                    claimed[byte] = field.point.name
                }
            }
        }
    }
}
