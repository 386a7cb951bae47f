public import TetherCore

/// Where a bus listens, from a D-Bus address string (`unix:path=/run/dbus/system_bus_socket`).
/// Tether speaks to Unix sockets by path, which is how `dbus-daemon` and `bluetoothd` are found
/// on Linux.
public struct DBusAddress: Hashable, Sendable, CustomStringConvertible {
    /// The socket's path.
    public var path: String

    public init(path: String) {
        self.path = path
    }

    /// The first `unix:path=` address of a `;`-separated list, with `%XX` escapes decoded.
    public init(_ text: String) throws(TetherError) {
        for candidate in text.split(separator: ";") {
            guard candidate.hasPrefix("unix:") else { continue }
            for pair in candidate.dropFirst(5).split(separator: ",") {
                let parts = pair.split(separator: "=", maxSplits: 1)
                if parts.count == 2, parts[0] == "path", let path = Self.unescape(parts[1]), !path.isEmpty {
                    self.path = path
                    return
                }
            }
        }
        throw TetherError(
            .invalidArgument, "no unix:path= address in \"\(text.prefix(200))\" (abstract sockets and TCP buses are not supported)")
    }

    /// The system bus (where BlueZ lives): `DBUS_SYSTEM_BUS_ADDRESS` or the standard socket.
    public static func system(environment: [String: String]) throws(TetherError) -> DBusAddress {
        if let text = environment["DBUS_SYSTEM_BUS_ADDRESS"], !text.isEmpty { return try DBusAddress(text) }
        return DBusAddress(path: "/var/run/dbus/system_bus_socket")
    }

    public var description: String { "unix:path=\(path)" }

    private static func unescape(_ text: Substring) -> String? {
        var bytes: [UInt8] = []
        var iterator = text.utf8.makeIterator()
        while let byte = iterator.next() {
            if byte == UInt8(ascii: "%") {
                guard let high = iterator.next(), let low = iterator.next(), let value = UInt8(String(decoding: [high, low], as: UTF8.self), radix: 16) else {
                    return nil
                }
                bytes.append(value)
            } else {
                bytes.append(byte)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }
}
