/// The syntax of D-Bus names, as the specification defines it.
enum DBusNames {
    /// `/` or `/a/b_c/D0`: elements of `[A-Za-z0-9_]`, no empty element, no trailing `/`.
    static func isObjectPath(_ path: String) -> Bool {
        let bytes = Array(path.utf8)
        guard bytes.first == UInt8(ascii: "/") else { return false }
        if bytes.count == 1 { return true }
        guard bytes.last != UInt8(ascii: "/") else { return false }
        var previousSlash = false
        for byte in bytes.dropFirst() {
            if byte == UInt8(ascii: "/") {
                if previousSlash { return false }
                previousSlash = true
            } else {
                guard isWordByte(byte) else { return false }
                previousSlash = false
            }
        }
        return true
    }

    /// An interface or error name: two or more dot-separated elements of `[A-Za-z_][A-Za-z0-9_]*`.
    static func isInterfaceName(_ name: String) -> Bool {
        let elements = name.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard name.utf8.count <= 255, elements.count >= 2 else { return false }
        return elements.allSatisfy { element in
            guard let first = element.first, !isDigit(first) else { return false }
            return element.allSatisfy(isWordByte)
        }
    }

    /// A member (method or signal) name: `[A-Za-z_][A-Za-z0-9_]*`, at most 255 bytes.
    static func isMemberName(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard let first = bytes.first, bytes.count <= 255, !isDigit(first) else { return false }
        return bytes.allSatisfy(isWordByte)
    }

    /// A unique (`:1.42`) or well-known (`org.bluez`) bus name.
    static func isBusName(_ name: String) -> Bool {
        var bytes = Array(name.utf8)
        guard bytes.count <= 255 else { return false }
        let unique = bytes.first == UInt8(ascii: ":")
        if unique { bytes.removeFirst() }
        let elements = bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard elements.count >= 2 else { return false }
        return elements.allSatisfy { element in
            guard let first = element.first, unique || !isDigit(first) else { return false }
            return element.allSatisfy { isWordByte($0) || $0 == UInt8(ascii: "-") }
        }
    }

    private static func isDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }

    private static func isWordByte(_ byte: UInt8) -> Bool {
        isDigit(byte) || (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")) || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
            || byte == UInt8(ascii: "_")
    }
}
