/// A strict RFC 8259 parser from UTF-8 bytes straight to ``JSONValue``: what every device post,
/// WebSocket frame and REST body goes through, so it avoids `Codable`'s per-value dynamic
/// dispatch (profiled: Foundation's decoder was a sixth of the gateway's CPU under property posts).
///
/// Objects keep their members in document order (a repeated key keeps its first position and
/// its last value). Integers that fit in `Int64` are `.int`, other numbers `.double`. Nesting is
/// limited to ``maximumDepth`` so that hostile input cannot exhaust the stack.
struct JSONParser {
    static let maximumDepth = 512

    struct Failure: Error {
        var message: String
        var offset: Int
    }

    private let bytes: UnsafeBufferPointer<UInt8>
    private var index = 0
    private var scratch: [UInt8] = []

    private init(_ bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    static func parse(_ bytes: UnsafeBufferPointer<UInt8>) throws(Failure) -> JSONValue {
        var parser = JSONParser(bytes)
        parser.skipWhitespace()
        let value = try parser.value(depth: 0)
        parser.skipWhitespace()
        guard parser.index == bytes.count else { throw parser.fail("unexpected bytes after the document") }
        return value
    }

    private func fail(_ message: String) -> Failure { Failure(message: message, offset: index) }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: " "), UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: "\t"): index += 1
            default: return
            }
        }
    }

    private mutating func value(depth: Int) throws(Failure) -> JSONValue {
        guard index < bytes.count else { throw fail("unexpected end of the document") }
        switch bytes[index] {
        case UInt8(ascii: "{"): return .object(try object(depth: depth + 1))
        case UInt8(ascii: "["): return .array(try array(depth: depth + 1))
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): try literal("true"); return .bool(true)
        case UInt8(ascii: "f"): try literal("false"); return .bool(false)
        case UInt8(ascii: "n"): try literal("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number()
        default: throw fail("unexpected character")
        }
    }

    private mutating func literal(_ word: StaticString) throws(Failure) {
        let count = word.utf8CodeUnitCount
        guard bytes.count - index >= count else { throw fail("unexpected end of the document") }
        for offset in 0..<count where bytes[index + offset] != word.utf8Start[offset] {
            throw fail("unexpected character")
        }
        index += count
    }

    private mutating func object(depth: Int) throws(Failure) -> JSONObject {
        var object = JSONObject()
        guard try open(depth: depth, closing: UInt8(ascii: "}")) else { return object }
        repeat {
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw fail("expected a member name") }
            let key = try string()
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw fail("expected ':'") }
            index += 1
            skipWhitespace()
            object[key] = try value(depth: depth)
        } while try another(closing: UInt8(ascii: "}"))
        return object
    }

    private mutating func array(depth: Int) throws(Failure) -> [JSONValue] {
        var elements: [JSONValue] = []
        guard try open(depth: depth, closing: UInt8(ascii: "]")) else { return elements }
        repeat {
            elements.append(try value(depth: depth))
        } while try another(closing: UInt8(ascii: "]"))
        return elements
    }

    /// Steps over `{` or `[`: false when the container is empty (and closed).
    private mutating func open(depth: Int, closing close: UInt8) throws(Failure) -> Bool {
        guard depth <= Self.maximumDepth else { throw fail("nested deeper than \(Self.maximumDepth) levels") }
        index += 1
        skipWhitespace()
        guard index < bytes.count, bytes[index] == close else { return true }
        index += 1
        return false
    }

    /// After a member or an element: true for `,` (another follows), false for `close`.
    private mutating func another(closing close: UInt8) throws(Failure) -> Bool {
        skipWhitespace()
        guard index < bytes.count else { throw fail("unexpected end of the document") }
        switch bytes[index] {
        case UInt8(ascii: ","):
            index += 1
            skipWhitespace()
            return true
        case close:
            index += 1
            return false
        default:
            throw fail("expected ',' or '\(Character(Unicode.Scalar(close)))'")
        }
    }

    private mutating func string() throws(Failure) -> String {
        index += 1
        let start = index
        // The common case: no escapes, one validation of the bytes as they are.
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                let text = try utf8(UnsafeBufferPointer(rebasing: bytes[start..<index]))
                index += 1
                return text
            }
            if byte == UInt8(ascii: "\\") { break }
            guard byte >= 0x20 else { throw fail("a control character in a string") }
            index += 1
        }
        scratch.removeAll(keepingCapacity: true)
        scratch.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<index]))
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                return try scratch.withUnsafeBufferPointer { buffer throws(Failure) in try utf8(buffer) }
            case UInt8(ascii: "\\"):
                index += 1
                try escape()
            case 0..<0x20:
                throw fail("a control character in a string")
            default:
                scratch.append(byte)
                index += 1
            }
        }
        throw fail("an unterminated string")
    }

    private func utf8(_ buffer: UnsafeBufferPointer<UInt8>) throws(Failure) -> String {
        guard let text = String(validating: buffer, as: UTF8.self) else { throw fail("a string that is not UTF-8") }
        return text
    }

    private mutating func escape() throws(Failure) {
        guard index < bytes.count else { throw fail("an unterminated string") }
        let byte = bytes[index]
        index += 1
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): scratch.append(byte)
        case UInt8(ascii: "b"): scratch.append(0x08)
        case UInt8(ascii: "f"): scratch.append(0x0C)
        case UInt8(ascii: "n"): scratch.append(0x0A)
        case UInt8(ascii: "r"): scratch.append(0x0D)
        case UInt8(ascii: "t"): scratch.append(0x09)
        case UInt8(ascii: "u"):
            var scalar = UInt32(try hex4())
            if (0xD800..<0xDC00).contains(scalar) {
                guard bytes.count - index >= 2, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
                    throw fail("an unpaired surrogate")
                }
                index += 2
                let low = UInt32(try hex4())
                guard (0xDC00..<0xE000).contains(low) else { throw fail("an unpaired surrogate") }
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            } else if (0xDC00..<0xE000).contains(scalar) {
                throw fail("an unpaired surrogate")
            }
            // Every value left is a valid scalar: surrogates were paired or refused above.
            scratch.append(contentsOf: String(Character(Unicode.Scalar(scalar)!)).utf8)
        default:
            throw fail("an invalid escape")
        }
    }

    private mutating func hex4() throws(Failure) -> UInt16 {
        guard bytes.count - index >= 4 else { throw fail("an unterminated string") }
        var value: UInt16 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw fail("an invalid \\u escape")
            }
            value = value << 4 | UInt16(digit)
            index += 1
        }
        return value
    }

    private mutating func number() throws(Failure) -> JSONValue {
        let start = index
        let negative = bytes[index] == UInt8(ascii: "-")
        if negative { index += 1 }
        guard index < bytes.count, isDigit(bytes[index]) else { throw fail("a number without digits") }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
            if index < bytes.count, isDigit(bytes[index]) { throw fail("a number with a leading zero") }
        } else {
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        var integral = true
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            integral = false
            index += 1
            guard index < bytes.count, isDigit(bytes[index]) else { throw fail("a number without digits after '.'") }
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            integral = false
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard index < bytes.count, isDigit(bytes[index]) else { throw fail("a number without digits in its exponent") }
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        let text = UnsafeBufferPointer(rebasing: bytes[start..<index])
        if integral, let value = Self.int64(text, negative: negative) { return .int(value) }
        let literal = String(decoding: text, as: UTF8.self)
        guard let double = Double(literal), double.isFinite else { throw fail("a number out of range") }
        // Integral values written with a fraction or an exponent (1.0, 1e3) are integers, as
        // Foundation's decoder read them.
        if double == double.rounded(), let exact = Int64(exactly: double) { return .int(exact) }
        return .double(double)
    }

    private func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    private static func int64(_ text: UnsafeBufferPointer<UInt8>, negative: Bool) -> Int64? {
        var value: Int64 = 0
        for byte in text.dropFirst(negative ? 1 : 0) {
            let digit = Int64(byte - UInt8(ascii: "0"))
            let (shifted, overflow) = value.multipliedReportingOverflow(by: 10)
            guard !overflow else { return nil }
            let (next, overflowAgain) = negative ? shifted.subtractingReportingOverflow(digit) : shifted.addingReportingOverflow(digit)
            guard !overflowAgain else { return nil }
            value = next
        }
        return value
    }
}
