public import TetherCore

/// A device to register, one of many (`tether-cloud admin device create --count`, `… import`).
public struct DeviceEntry: Sendable, Hashable {
    public var productKey: String
    public var name: String
    /// Any spelling of 12 hex digits.
    public var mac: String?
    /// The device's own secret, when it already has one (a fleet flashed elsewhere); nil draws one.
    public var secret: String?

    public init(productKey: String, name: String, mac: String? = nil, secret: String? = nil) {
        self.productKey = productKey
        self.name = name
        self.mac = mac
        self.secret = secret
    }
}

/// Reading a fleet to register: numbered names, or a CSV file.
public enum DeviceImport {
    /// At most this many devices in one registration (a million rows is about 200 MB of secrets
    /// and names in memory).
    public static let maximumDevices = 1_000_000

    /// `prefix1` … `prefixN`, the numbers zero-padded to the width of N (`lamp-001` … `lamp-100`),
    /// so that the names sort as they were made.
    public static func numbered(productKey: String, count: Int, prefix: String) -> [DeviceEntry] {
        let width = String(count).count
        return (0..<max(count, 0)).map { offset in
            let digits = String(offset + 1)
            return DeviceEntry(productKey: productKey, name: prefix + String(repeating: "0", count: width - digits.count) + digits)
        }
    }

    /// `productKey,deviceName,mac[,deviceSecret]` per line (an empty MAC allowed), with an
    /// optional header line naming those columns; blank lines and `#` comments are skipped, CRLF
    /// is fine. Fields are not quoted (none of them may hold a comma).
    ///
    /// - Throws: `invalidArgument` naming the line of the first row that is not of this shape.
    public static func parseCSV(_ text: String) throws(TetherError) -> [DeviceEntry] {
        var entries: [DeviceEntry] = []
        // Spreadsheets start their CSV with a byte-order mark.
        let text = text.hasPrefix("\u{FEFF}") ? String(text.dropFirst()) : text
        // "\r\n" is one Character in Swift: split on it as well as on "\n".
        for (index, line) in text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" }).enumerated() {
            let trimmed = line.trimmingCharacters(in: " \t\r")
            if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
            let fields = trimmed.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: " \t") }
            if entries.isEmpty, fields.first?.lowercased() == "productkey" { continue }
            guard (3...4).contains(fields.count), !fields[0].isEmpty, !fields[1].isEmpty else {
                throw TetherError(.invalidArgument, "line \(index + 1): expected productKey,deviceName,mac[,deviceSecret]")
            }
            guard entries.count < maximumDevices else { throw TetherError(.invalidArgument, "more than \(maximumDevices) devices") }
            entries.append(
                DeviceEntry(
                    productKey: fields[0], name: fields[1], mac: fields[2].isEmpty ? nil : fields[2],
                    secret: fields.count == 4 && !fields[3].isEmpty ? fields[3] : nil))
        }
        return entries
    }
}

extension Substring {
    fileprivate func trimmingCharacters(in set: String) -> String {
        String(drop { set.contains($0) }.reversed().drop { set.contains($0) }.reversed())
    }
}

extension String {
    fileprivate func trimmingCharacters(in set: String) -> String { self[...].trimmingCharacters(in: set) }
}
