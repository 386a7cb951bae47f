import TetherCore

/// Gathers a DIoT list reply (a fetch-all or clean-all on `C001`–`C003`) that the device may cut
/// across several notifications, and says when it is complete: a value tested without Bluetooth.
///
/// The replies carry no header and no count (ble-profiles.md B4), and a list longer than
/// MTU − 3 bytes is cut at record boundaries (Tether convention 3). A device fills each notification
/// but the last, so a notification shorter than a full one ends the list:
///
/// 1. shorter than the longest notification of this reply (the tail after full ones), or
/// 2. shorter than a notification can be at the smallest ATT MTU (23: 20 bytes, rounded down to
///    whole records), which no device would send unless it was the last.
///
/// Otherwise (the last notification was full, or the list filled one notification exactly) the
/// caller waits for a short pause without a further notification and then takes ``records``
/// (``DIoTDevice`` waits 150 ms). The central's own idea of the MTU is not used: a device may keep
/// its notifications shorter than the link allows, and ending after the first of those would cut
/// the list.
struct DIoTListAssembler<Record: DIoTRecord>: Sendable {
    /// What to do after a notification.
    enum Step: Hashable, Sendable {
        /// The list is complete.
        case complete([Record])
        /// More may follow: wait for the next notification, or a pause.
        case needMore
    }

    /// The most records one list can hold: keys (feature codes, channel numbers) are single bytes.
    static var maximumRecords: Int { 256 }

    /// The bytes of a full notification at the smallest ATT MTU (23 − 3 = 20 bytes of whole records).
    static var shortestFullNotification: Int { 20 / Record.encodedLength * Record.encodedLength }

    /// The records gathered so far, in order.
    private(set) var records: [Record] = []
    private var longest = 0

    init() {}

    /// Adds a notification of the reply.
    ///
    /// - Throws: the codec's error for a malformed notification (`malformedFrame`, `frameTooLarge`);
    ///   `unexpectedResponse` once more records arrive than a list can hold.
    mutating func append(_ notification: [UInt8]) throws(TetherError) -> Step {
        records += try Record.decodeList(notification)
        guard records.count <= Self.maximumRecords else {
            throw TetherError(.unexpectedResponse, "a DIoT list reply went on past \(Self.maximumRecords) records")
        }
        defer { longest = max(longest, notification.count) }
        if notification.count < longest || notification.count < Self.shortestFullNotification { return .complete(records) }
        return .needMore
    }
}
