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
        for _ in 0..<100 where !FileManager.default.fileExists(atPath: socketPath) {
            usleep(50_000)
        }
        guard FileManager.default.fileExists(atPath: socketPath) else {
            throw CocoaError(.fileReadUnknown, userInfo: [NSLocalizedDescriptionKey: "dbus-daemon did not create \(socketPath)"])
        }
    }

    deinit {
        if let pid { ChildProcess.stop(pid) }
        try? FileManager.default.removeItem(at: directory)
    }
}
