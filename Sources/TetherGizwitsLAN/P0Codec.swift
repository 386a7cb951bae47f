public import NIOCore
public import TetherCore

/// Encodes and decodes P0 payloads for one product.
///
/// Fixed-length products (the Gizwits "standard" protocol) use actions 0x01–0x04: a control
/// carries flags over the writable points and the whole writable section; statuses carry every
/// section. Variable-length products use 0x11–0x14, laid out as the Gizwits generated MCU code
/// does: flags over all points in id order, then a bit region packing the flagged bools and
/// enums, then the flagged numbers and binaries. Both forms are always decoded.
public struct P0Codec: Sendable {
    /// The product model the payloads are read against.
    public let model: ThingModel
    /// Where each data point sits in a fixed-length status, derived from ``model``.
    public let layout: P0Layout

    /// A codec for `model`; throws `TetherError.Code.invalidModel` when its P0 positions are
    /// inconsistent.
    public init(model: ThingModel) throws(TetherError) {
        self.model = model
        self.layout = try P0Layout(model: model)
    }

    // MARK: Encoding

    /// Encodes a message. A fixed-length control fills the writable points it does not set from
    /// `baseline` (the last known status), or zeros, because the device ignores unflagged values.
    public func encode(_ message: P0Message, baseline: [String: DataValue] = [:]) throws(TetherError) -> ByteBuffer {
        var bytes: [UInt8] = []
        let variable = model.p0Format == .variable
        switch message {
        case .control(let values):
            let values = try model.validateWrite(values)
            if variable {
                bytes = [P0Action.controlVariable.rawValue] + (try encodeVariable(values))
            } else {
                let flagged = layout.writableIndices.enumerated().filter { values[layout.fields[$0.element].point.name] != nil }.map(\.offset)
                bytes = [P0Action.control.rawValue] + Self.flags(count: layout.writableIndices.count, set: flagged)
                var section = [UInt8](repeating: 0, count: layout.writableLength)
                for index in layout.writableIndices {
                    let field = layout.fields[index]
                    if let value = values[field.point.name] {
                        try write(value, of: field, into: &section)
                    } else if let value = baseline[field.point.name] {
                        // The device ignores unflagged values; one it reported out of range must not
                        // block writes of other points, so it falls back to zeros.
                        try? write(value, of: field, into: &section)
                    }
                }
                bytes += section
            }
        case .read(let names):
            if !variable, !names.isEmpty {
                throw TetherError(
                    .invalidArgument, "a fixed-length product reads all its points at once; read selected points only on variable-length products")
            }
            if variable {
                let wanted = names.isEmpty ? Set(layout.fields.map(\.point.name)) : Set(names)
                for name in wanted where model.dataPoint(named: name) == nil {
                    throw TetherError(.unknownDataPoint, "product \(model.productKey) has no data point named \"\(name)\"", dataPoint: name)
                }
                let flagged = layout.fields.indices.filter { wanted.contains(layout.fields[$0].point.name) }
                bytes = [P0Action.readVariable.rawValue] + Self.flags(count: layout.fields.count, set: flagged)
            } else {
                bytes = [P0Action.read.rawValue]
            }
        case .readAck(let status), .report(let status):
            let isAck: Bool
            if case .readAck = message { isAck = true } else { isAck = false }
            let values = status.allValues
            if variable {
                bytes = [isAck ? P0Action.readAckVariable.rawValue : P0Action.reportVariable.rawValue] + (try encodeVariable(values))
            } else {
                var section = [UInt8](repeating: 0, count: layout.statusLength)
                for field in layout.fields {
                    guard let value = values[field.point.name] else { continue }
                    try write(value, of: field, into: &section)
                }
                bytes = [isAck ? P0Action.readAck.rawValue : P0Action.report.rawValue] + section
            }
        case .transparentToDevice(let data):
            bytes = [P0Action.transparentToDevice.rawValue] + data
        case .transparentFromDevice(let data):
            bytes = [P0Action.transparentFromDevice.rawValue] + data
        }
        return ByteBuffer(bytes: bytes)
    }

    private func encodeVariable(_ values: [String: DataValue]) throws(TetherError) -> [UInt8] {
        let flagged = layout.fields.indices.filter { values[layout.fields[$0].point.name] != nil }
        var bitFields: [(P0Layout.Field, DataValue)] = []
        var byteFields: [(P0Layout.Field, DataValue)] = []
        for index in flagged {
            let field = layout.fields[index]
            let value = values[field.point.name]!
            if field.point.type.p0BitLength != nil { bitFields.append((field, value)) } else { byteFields.append((field, value)) }
        }
        let totalBits = bitFields.reduce(0) { $0 + $1.0.bitLength }
        var region = [UInt8](repeating: 0, count: (totalBits + 7) / 8)
        var bitOffset = 0
        for (field, value) in bitFields {
            let placed = P0Layout.Field(
                point: field.point, placement: .bits(regionStart: 0, regionLength: region.count, bitOffset: bitOffset, bitLength: field.bitLength))
            try write(value, of: placed, into: &region)
            bitOffset += field.bitLength
        }
        var result = Self.flags(count: layout.fields.count, set: flagged) + region
        for (field, value) in byteFields {
            var slot = [UInt8](repeating: 0, count: field.byteLength)
            try write(value, of: P0Layout.Field(point: field.point, placement: .bytes(offset: 0, length: slot.count)), into: &slot)
            result += slot
        }
        return result
    }

    /// A big-endian bit set of `count` bits: bit i is the least-significant bit counted from the
    /// end, so bit 0 is the lowest bit of the last byte.
    static func flags(count: Int, set indices: [Int]) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: (count + 7) / 8)
        for index in indices { bytes[bytes.count - 1 - index / 8] |= 1 << (index % 8) }
        return bytes
    }

    static func isFlagSet(_ flags: ArraySlice<UInt8>, _ index: Int) -> Bool {
        flags[flags.endIndex - 1 - index / 8] & (1 << (index % 8)) != 0
    }

    private func write(_ value: DataValue, of field: P0Layout.Field, into bytes: inout [UInt8]) throws(TetherError) {
        let value = try field.point.normalize(value)
        switch (field.placement, value) {
        case (.bits(let start, let length, let offset, let bitLength), _):
            let raw: UInt64
            switch value {
            case .bool(let flag): raw = flag ? 1 : 0
            case .int(let index): raw = UInt64(index)
            default: throw TetherError(.wrongValueType, "expected a bool or an enum index", dataPoint: field.point.name)
            }
            for bit in 0..<bitLength {
                let position = offset + bit
                let byte = start + length - 1 - position / 8
                let mask = UInt8(1) << (position % 8)
                if raw & (1 << UInt64(bit)) != 0 { bytes[byte] |= mask } else { bytes[byte] &= ~mask }
            }
        case (.bytes(let offset, let length), .int), (.bytes(let offset, let length), .double):
            guard case .number(let spec) = field.point.type else {
                throw TetherError(.wrongValueType, "a number does not fit this data point", dataPoint: field.point.name)
            }
            let shown: Double
            if case .int(let number) = value { shown = Double(number) } else if case .double(let number) = value { shown = number } else { shown = 0 }
            var raw = try spec.raw(for: shown, dataPoint: field.point.name)
            for index in stride(from: offset + length - 1, through: offset, by: -1) {
                bytes[index] = UInt8(truncatingIfNeeded: raw)
                raw >>= 8
            }
        case (.bytes(let offset, let length), .binary(let data)):
            for index in 0..<length { bytes[offset + index] = index < data.count ? data[index] : 0 }
        case (.bytes(let offset, let length), .string(let text)):
            let data = Array(text.utf8)
            for index in 0..<length { bytes[offset + index] = index < data.count ? data[index] : 0 }
        case (.bytes, .bool):
            throw TetherError(.wrongValueType, "a bool does not fit a byte field", dataPoint: field.point.name)
        }
    }

    // MARK: Decoding

    /// Decodes a P0 payload. Throws `TetherError.Code.malformedPayload` for an unknown action or
    /// a payload shorter than the product's layout requires. Bytes beyond the layout are ignored,
    /// so a device with a newer firmware than the app's model still reports what the app knows.
    public func decode(_ buffer: ByteBuffer) throws(TetherError) -> P0Message {
        let bytes = Array(buffer.readableBytesView)
        guard let first = bytes.first else { throw TetherError(.malformedPayload, "empty P0 payload") }
        let action = P0Action(rawValue: first)
        let body = bytes[1...]
        switch action {
        case .control:
            let flagsLength = layout.writableFlagsLength
            try requireLength(body, flagsLength + layout.writableLength, action)
            let flags = body.prefix(flagsLength)
            let section = Array(body.dropFirst(flagsLength).prefix(layout.writableLength))
            var values: [String: DataValue] = [:]
            for (bit, index) in layout.writableIndices.enumerated() where Self.isFlagSet(flags, bit) {
                let field = layout.fields[index]
                values[field.point.name] = read(field, from: section)
            }
            return .control(values)
        case .read:
            return .read([])
        case .readAck, .report:
            try requireLength(body, layout.statusLength, action)
            let section = Array(body.prefix(layout.statusLength))
            var status = DeviceStatus()
            for field in layout.fields { status[field.point.kind, field.point.name] = read(field, from: section) }
            return action == .readAck ? .readAck(status) : .report(status)
        case .transparentToDevice:
            return .transparentToDevice(Array(body))
        case .transparentFromDevice:
            return .transparentFromDevice(Array(body))
        case .controlVariable, .readAckVariable, .reportVariable:
            let values = try decodeVariable(body, action)
            if action == .controlVariable {
                for name in values.keys where model.dataPoint(named: name)?.kind != .writable {
                    throw TetherError(.malformedPayload, "a control flags the non-writable point \"\(name)\"", dataPoint: name)
                }
                return .control(values)
            }
            let status = DeviceStatus(values: values, model: model)
            return action == .readAckVariable ? .readAck(status) : .report(status)
        case .readVariable:
            try requireLength(body, layout.allFlagsLength, action)
            let flags = body.prefix(layout.allFlagsLength)
            return .read(layout.fields.indices.filter { Self.isFlagSet(flags, $0) }.map { layout.fields[$0].point.name })
        default:
            throw TetherError(.malformedPayload, "unknown P0 action \(action)")
        }
    }

    private func decodeVariable(_ body: ArraySlice<UInt8>, _ action: P0Action) throws(TetherError) -> [String: DataValue] {
        try requireLength(body, layout.allFlagsLength, action)
        let flags = body.prefix(layout.allFlagsLength)
        let flagged = layout.fields.indices.filter { Self.isFlagSet(flags, $0) }.map { layout.fields[$0] }
        let bitFields = flagged.filter { $0.point.type.p0BitLength != nil }
        let byteFields = flagged.filter { $0.point.type.p0BitLength == nil }
        let regionLength = (bitFields.reduce(0) { $0 + $1.bitLength } + 7) / 8
        let needed = layout.allFlagsLength + regionLength + byteFields.reduce(0) { $0 + $1.byteLength }
        try requireLength(body, needed, action)
        let rest = Array(body.dropFirst(layout.allFlagsLength))
        var values: [String: DataValue] = [:]
        var bitOffset = 0
        for field in bitFields {
            let placed = P0Layout.Field(
                point: field.point, placement: .bits(regionStart: 0, regionLength: regionLength, bitOffset: bitOffset, bitLength: field.bitLength))
            values[field.point.name] = read(placed, from: rest)
            bitOffset += field.bitLength
        }
        var offset = regionLength
        for field in byteFields {
            let placed = P0Layout.Field(point: field.point, placement: .bytes(offset: offset, length: field.byteLength))
            values[field.point.name] = read(placed, from: rest)
            offset += field.byteLength
        }
        return values
    }

    private func requireLength(_ body: ArraySlice<UInt8>, _ length: Int, _ action: P0Action) throws(TetherError) {
        guard body.count >= length else {
            throw TetherError(
                .malformedPayload, "\(action.name) (\(action)) for product \(model.productKey) needs \(length) bytes after the action, got \(body.count)")
        }
    }

    /// Reads a field's value leniently: a device that reports a number outside its range or an
    /// enum index without a label still has its value delivered, not dropped.
    private func read(_ field: P0Layout.Field, from bytes: [UInt8]) -> DataValue {
        switch field.placement {
        case .bits(let start, let length, let offset, let bitLength):
            var raw: UInt64 = 0
            for bit in 0..<bitLength {
                let position = offset + bit
                if bytes[start + length - 1 - position / 8] & (1 << (position % 8)) != 0 { raw |= 1 << UInt64(bit) }
            }
            if case .bool = field.point.type { return .bool(raw != 0) }
            return .int(Int64(raw))
        case .bytes(let offset, let length):
            let slice = Array(bytes[offset..<(offset + length)])
            switch field.point.type {
            case .number(let spec):
                let raw = slice.reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
                return spec.value(raw: raw)
            case .text:
                return .string(String(decoding: slice.prefix { $0 != 0 }, as: UTF8.self))
            default:
                return .binary(slice)
            }
        }
    }
}

extension P0Layout.Field {
    var bitLength: Int {
        if case .bits(_, _, _, let length) = placement { return length }
        return 0
    }

    var byteLength: Int {
        if case .bytes(_, let length) = placement { return length }
        return 0
    }
}
