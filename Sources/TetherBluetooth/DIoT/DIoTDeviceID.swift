public import TetherCore

/// The 16-byte identifier a DIoT sensor advertises (and serves on `FFD1`), shown as a UUID:
/// `0F1E2D3C-4B5A-6978-8796-A5B4C3D2E1F0`. Byte 0 is the first two hex digits.
public struct DIoTDeviceID: Hashable, Sendable, CustomStringConvertible {
    /// The 16 bytes, in string order.
    public let bytes: [UInt8]

    /// The identifier made of `bytes`.
    ///
    /// - Throws: `TetherError(.malformedFrame)` unless there are exactly 16 bytes.
    public init(bytes: [UInt8]) throws(TetherError) {
        guard bytes.count == 16 else {
            throw TetherError(.malformedFrame, "a DIoT device id has \(bytes.count) bytes, not 16")
        }
        self.bytes = bytes
    }

    /// Parses the canonical form (`0F1E2D3C-4B5A-6978-8796-A5B4C3D2E1F0`, any case) or 32 hex digits.
    ///
    /// - Throws: `TetherError(.invalidArgument)` for anything else.
    public init(_ text: String) throws(TetherError) {
        let groups = text.split(separator: "-", omittingEmptySubsequences: false).map(\.utf8.count)
        guard groups == [8, 4, 4, 4, 12] || groups == [32], let bytes = [UInt8](tetherHex: text.filter { $0 != "-" }), bytes.count == 16 else {
            throw TetherError(.invalidArgument, "\"\(text.prefix(48))\" is not a DIoT device id (a UUID)")
        }
        self.bytes = bytes
    }

    /// The canonical upper-case UUID form.
    public var uuidString: String {
        var text = ""
        for (index, byte) in bytes.enumerated() {
            if [4, 6, 8, 10].contains(index) { text += "-" }
            text += [byte].tetherHex.uppercased()
        }
        return text
    }

    public var description: String { uuidString }
}
