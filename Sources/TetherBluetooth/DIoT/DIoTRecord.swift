public import TetherCore

/// A fixed-size record of a DIoT table (ble-profiles.md B4): the replies on `C001`–`C003` and
/// the values of `D001`–`D009` are nothing but such records back to back, with no header.
public protocol DIoTRecord: Hashable, Sendable {
    /// The bytes one record takes.
    static var encodedLength: Int { get }
    /// Decodes one record from exactly ``encodedLength`` bytes.
    init(recordBytes: ArraySlice<UInt8>) throws(TetherError)
    /// The record on the wire, ``encodedLength`` bytes.
    var bytes: [UInt8] { get }
}

extension DIoTRecord {
    /// Decodes a notification holding a list of records.
    ///
    /// - Throws: `TetherError(.frameTooLarge)` above 512 bytes; `TetherError(.malformedFrame)` when
    ///   it is empty or its length is not a multiple of the record size (both vendor clients refuse
    ///   those too), or a record is invalid.
    public static func decodeList(_ notification: [UInt8]) throws(TetherError) -> [Self] {
        guard notification.count <= DIoTGATT.maximumAttributeLength else {
            throw TetherError(.frameTooLarge, "a DIoT notification of \(notification.count) bytes is above 512")
        }
        guard !notification.isEmpty, notification.count % encodedLength == 0 else {
            throw TetherError(.malformedFrame, "a DIoT list of \(notification.count) bytes is not a whole number of \(encodedLength)-byte records")
        }
        var records: [Self] = []
        records.reserveCapacity(notification.count / encodedLength)
        for start in stride(from: 0, to: notification.count, by: encodedLength) {
            records.append(try Self(recordBytes: notification[start..<start + encodedLength]))
        }
        return records
    }

    /// The notifications a device sends for a list: cut at record boundaries so that none is
    /// longer than `maximumLength` (ATT MTU − 3). No records, no notifications.
    ///
    /// - Throws: `TetherError(.invalidArgument)` when `maximumLength` cannot hold one record.
    public static func notifications(for records: [Self], maximumLength: Int) throws(TetherError) -> [[UInt8]] {
        guard maximumLength >= encodedLength else {
            throw TetherError(.invalidArgument, "DIoT notifications of \(maximumLength) bytes cannot hold a \(encodedLength)-byte record")
        }
        let perNotification = min(maximumLength, DIoTGATT.maximumAttributeLength) / encodedLength
        return stride(from: 0, to: records.count, by: perNotification).map { start in
            records[start..<min(records.count, start + perNotification)].flatMap(\.bytes)
        }
    }
}
