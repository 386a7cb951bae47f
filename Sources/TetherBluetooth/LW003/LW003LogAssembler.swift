public import TetherCore

/// Turns the device log an LW003-V3 notifies on `AA05` (ble-profiles.md A6) into lines.
///
/// Notifications are pieces of UTF-8 text with no header, cut anywhere (even inside a character);
/// the assembler joins them and hands out each line when its `\n` arrives (a `\r` before it is
/// dropped). A line that grows past ``maximumLineLength`` bytes without a line break is handed out
/// at that length, so a device that never sends `\n` cannot make it grow without bound.
public struct LW003LogAssembler: Hashable, Sendable {
    /// The longest line kept, in bytes.
    public let maximumLineLength: Int
    private var pending: [UInt8] = []

    /// An assembler that cuts lines longer than `maximumLineLength` bytes (at least 1).
    public init(maximumLineLength: Int = 4096) {
        self.maximumLineLength = max(1, maximumLineLength)
    }

    /// Adds one notification; returns the lines it completed, without their line breaks. Invalid
    /// UTF-8 shows as U+FFFD.
    public mutating func append(_ chunk: [UInt8]) -> [String] {
        var lines: [String] = []
        for byte in chunk {
            if byte == UInt8(ascii: "\n") {
                if pending.last == UInt8(ascii: "\r") { pending.removeLast() }
                lines.append(String(decoding: pending, as: UTF8.self))
                pending.removeAll(keepingCapacity: true)
                continue
            }
            pending.append(byte)
            if pending.count >= maximumLineLength {
                lines.append(String(decoding: pending, as: UTF8.self))
                pending.removeAll(keepingCapacity: true)
            }
        }
        return lines
    }

    /// The text after the last line break, when logging stops (notify off, disconnect); nil when
    /// there is none. The assembler is empty afterwards.
    public mutating func flush() -> String? {
        guard !pending.isEmpty else { return nil }
        defer { pending.removeAll() }
        return String(decoding: pending, as: UTF8.self)
    }

    /// The notifications a device sends for `text` (the Tether convention: UTF-8 cut at
    /// `maximumLength` = ATT MTU − 3 bytes), cut between characters so that a client that decodes
    /// each notification alone (as the iOS one does) sees whole characters.
    ///
    /// - Throws: `TetherError(.invalidArgument)` when `maximumLength` is below 4 (the longest
    ///   UTF-8 character).
    public static func notifications(for text: String, maximumLength: Int) throws(TetherError) -> [[UInt8]] {
        guard maximumLength >= 4 else {
            throw TetherError(.invalidArgument, "LW003 log notifications of \(maximumLength) bytes cannot hold every character (at least 4)")
        }
        var chunks: [[UInt8]] = []
        var current: [UInt8] = []
        for scalar in text.unicodeScalars {
            let encoded = Array(String(scalar).utf8)
            if current.count + encoded.count > maximumLength {
                chunks.append(current)
                current = []
            }
            current += encoded
        }
        if !current.isEmpty { chunks.append(current) }
        return chunks
    }
}
