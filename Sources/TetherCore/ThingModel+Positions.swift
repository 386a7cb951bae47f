extension ThingModel {
    /// The model with a P0 position for every data point.
    ///
    /// Positions the model already has are kept. When any is missing, all are derived by the
    /// Gizwits rules (`shared/reference/gizwits-lan.md` §8.3): sections in the order writable,
    /// read-only, alert, fault; in each, a bit region holding the section's bools (1 bit) and enums
    /// (the fewest bits that hold the largest index) in id order, then its numbers and binaries in
    /// id order. Text is carried as binary of its maximum length.
    public func withDerivedPositions() throws(TetherError) -> ThingModel {
        if dataPoints.allSatisfy({ $0.position != nil }) { return self }
        var result = self
        let order = dataPoints.indices.sorted { dataPoints[$0].id < dataPoints[$1].id }
        var offset = 0
        for kind in DataPoint.Kind.allCases {
            let members = order.filter { dataPoints[$0].kind == kind }
            var bit = 0
            for index in members {
                guard let bits = dataPoints[index].type.p0BitLength else { continue }
                result.dataPoints[index].position = P0Position(byteOffset: offset, bitOffset: bit, length: bits, unit: .bit)
                bit += bits
            }
            offset += (bit + 7) / 8
            for index in members {
                guard let bytes = dataPoints[index].type.p0ByteLength else { continue }
                result.dataPoints[index].position = P0Position(byteOffset: offset, length: bytes, unit: .byte)
                offset += bytes
            }
        }
        return result
    }
}

extension DataType {
    /// Bits used in a bit region, for types that live in one (bool, enum).
    public var p0BitLength: Int? {
        switch self {
        case .bool: return 1
        case .enumeration(let labels):
            var bits = 1
            while (1 << bits) < labels.count { bits += 1 }
            return bits
        case .number, .text, .binary: return nil
        }
    }

    /// Bytes used after the bit region, for types that are byte-aligned (numbers, binary, text).
    public var p0ByteLength: Int? {
        switch self {
        case .bool, .enumeration: return nil
        case .number(let spec): return spec.effectiveWidth.byteCount
        case .text(let maxLength): return maxLength
        case .binary(let length): return length
        }
    }
}
