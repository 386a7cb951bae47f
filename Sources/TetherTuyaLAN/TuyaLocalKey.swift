public import TetherCore

/// A Tuya device's 16-byte local key: checked when made, and never shown (descriptions, dumps and
/// logs see `<redacted>`).
public struct TuyaLocalKey: Sendable, Hashable, CustomStringConvertible, CustomReflectable {
    public let bytes: [UInt8]

    public init(bytes: [UInt8]) throws(TetherError) {
        try TuyaCrypto.checkKey(bytes)
        self.bytes = bytes
    }

    /// The key as the vendor's tools print it: 16 characters.
    public init(_ text: String) throws(TetherError) {
        try self.init(bytes: Array(text.utf8))
    }

    public var description: String { "<redacted>" }
    public var customMirror: Mirror { Mirror(self, children: ["bytes": "<redacted>"]) }
}
