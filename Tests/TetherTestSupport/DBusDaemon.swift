public import Foundation

/// A private `dbus-daemon` on a Unix socket in a temporary directory, for tests: never the
/// machine's own buses.
public final class DBusDaemon: @unchecked Sendable {
    // @unchecked: started and stopped by the owning test only.
    public static var available: Bool {
        FileManager.default.isExecutableFile(atPath: executable) && FileManager.default.fileExists(atPath: configuration)
    }
    static let executable = ProcessInfo.processInfo.environment["DBUS_DAEMON"] ?? "/usr/bin/dbus-daemon"
    static let configuration = "/usr/share/dbus-1/session.conf"

    public let directory: URL
    /// The bus's socket path.
    public var socketPath: String { directory.appendingPathComponent("bus.sock").path }
    private var pid: pid_t?

    public init() throws {
        directory = URL(fileURLWithPath: "/tmp").appendingPathComponent("tether-dbus-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        pid = try ChildProcess.spawn(
            [Self.executable, "--config-file=\(Self.configuration)", "--address=unix:path=\(socketPath)", "--nofork", "--nopidfile"],
            what: "dbus-daemon")
        // The socket file appears at bind(), before the daemon listens: wait until it accepts.
        for _ in 0..<100 where !Self.accepts(socketPath) {
            usleep(50_000)
        }
        guard Self.accepts(socketPath) else {
            throw CocoaError(.fileReadUnknown, userInfo: [NSLocalizedDescriptionKey: "dbus-daemon does not accept connections at \(socketPath)"])
        }
    }

    /// Whether a connection to the Unix socket at `path` is accepted (and closed at once).
    private static func accepts(_ path: String) -> Bool {
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return false }
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            buffer.copyBytes(from: bytes)
            buffer[bytes.count] = 0
        }
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        } == 0
    }

    deinit {
        if let pid { ChildProcess.stop(pid) }
        try? FileManager.default.removeItem(at: directory)
    }
}
