public import TetherCore

/// One notification of the stored-data upload on `AA04` (ble-profiles.md A5): either some
/// ``LW003BeaconRecord``s, or the summary that ends the upload.
///
/// ```
/// ED 02 01 <LEN> <N> <N records>     N ≥ 1, LEN = the bytes after it
/// ED 02 01 03 00 <count u16 BE>      the summary: how many records this upload sent
/// ```
///
/// A frame is at most 176 bytes (so the link needs an ATT MTU of at least 179).
public enum LW003StorageFrame: Hashable, Sendable {
    /// The largest frame a device sends.
    public static let maximumLength = 176

    /// Records, oldest first (never empty).
    case records([LW003BeaconRecord])
    /// The last frame of an upload: the number of records sent for the request.
    case summary(total: UInt16)

    /// Decodes one `AA04` notification.
    ///
    /// - Throws: `TetherError(.frameTooLarge)` above 176 bytes; `TetherError(.malformedFrame)` for
    ///   another header, a LEN that does not match, a summary whose count is not 2 bytes, records
    ///   that run past the end or leave bytes over.
    public init(decoding bytes: [UInt8]) throws(TetherError) {
        guard bytes.count <= Self.maximumLength else {
            throw TetherError(.frameTooLarge, "an LW003 storage frame of \(bytes.count) bytes is above 176")
        }
        guard bytes.count >= 5, bytes[0..<3] == [0xED, 0x02, 0x01] else {
            throw TetherError(.malformedFrame, "an LW003 storage frame is ED 02 01 <LEN> <N> …, not \(BluetoothProfileBytes.hexPrefix(bytes))")
        }
        guard Int(bytes[3]) == bytes.count - 4 else {
            throw TetherError(.malformedFrame, "an LW003 storage frame's LEN says \(bytes[3]) bytes but \(bytes.count - 4) follow")
        }
        let count = Int(bytes[4])
        guard count > 0 else {
            guard bytes.count == 7 else {
                throw TetherError(.malformedFrame, "an LW003 storage summary has \(bytes.count - 5) count bytes, not 2")
            }
            self = .summary(total: UInt16(bytes[5]) << 8 | UInt16(bytes[6]))
            return
        }
        var records: [LW003BeaconRecord] = []
        records.reserveCapacity(count)
        var rest = bytes[5...]
        for _ in 0..<count {
            let (record, length) = try LW003BeaconRecord.decode(rest)
            records.append(record)
            rest = rest.dropFirst(length)
        }
        guard rest.isEmpty else {
            throw TetherError(.malformedFrame, "an LW003 storage frame has \(rest.count) bytes after its \(count) records")
        }
        self = .records(records)
    }

    /// The frame as a device notifies it.
    ///
    /// - Throws: `TetherError(.invalidArgument)` for no records, a record that cannot be encoded,
    ///   or records that do not fit 176 bytes together (``frames(for:maximumLength:)`` splits them).
    public func bytes() throws(TetherError) -> [UInt8] {
        switch self {
        case .summary(let total):
            return [0xED, 0x02, 0x01, 0x03, 0x00, UInt8(total >> 8), UInt8(total & 0xFF)]
        case .records(let records):
            guard !records.isEmpty else { throw TetherError(.invalidArgument, "an LW003 storage frame needs at least one record") }
            var body: [UInt8] = [UInt8(truncatingIfNeeded: records.count)]
            for record in records { body += try record.bytes() }
            guard 4 + body.count <= Self.maximumLength, records.count <= 255 else {
                throw TetherError(.invalidArgument, "\(records.count) LW003 records take \(4 + body.count) bytes, above one 176-byte storage frame")
            }
            return [0xED, 0x02, 0x01, UInt8(body.count)] + body
        }
    }

    /// Packs records, in order, into as few frames as fit `maximumLength` bytes each (176, or
    /// less on a link whose ATT MTU − 3 is smaller). Without records there are no frames; the
    /// summary is for the caller to send after them.
    ///
    /// - Throws: `TetherError(.invalidArgument)` when `maximumLength` is not 19…176 or a record
    ///   does not fit a frame alone.
    public static func frames(for records: [LW003BeaconRecord], maximumLength: Int = maximumLength) throws(TetherError) -> [LW003StorageFrame] {
        guard (5 + LW003BeaconRecord.headerLength...Self.maximumLength).contains(maximumLength) else {
            throw TetherError(.invalidArgument, "an LW003 storage frame limit of \(maximumLength) bytes is outside 19...176")
        }
        var frames: [LW003StorageFrame] = []
        var current: [LW003BeaconRecord] = []
        var length = 5
        for record in records {
            guard 5 + record.encodedLength <= maximumLength else {
                throw TetherError(.invalidArgument, "an LW003 record of \(record.encodedLength) bytes does not fit a \(maximumLength)-byte storage frame")
            }
            if length + record.encodedLength > maximumLength {
                frames.append(.records(current))
                current = []
                length = 5
            }
            current.append(record)
            length += record.encodedLength
        }
        if !current.isEmpty { frames.append(.records(current)) }
        return frames
    }
}
