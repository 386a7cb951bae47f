public import Foundation

/// A real mosquitto broker on a free loopback port, for tests. Its configuration and
/// persistence live in a temporary directory so that it can be restarted with its state.
public final class Mosquitto: @unchecked Sendable {
    // @unchecked: the process is started and stopped by the owning test only.
    public static var available: Bool { FileManager.default.isExecutableFile(atPath: executable) }
    static let executable = ProcessInfo.processInfo.environment["MOSQUITTO"] ?? "/usr/sbin/mosquitto"

    /// Chosen free when the broker is made; kept across restarts.
    public private(set) var port: Int
    public let directory: URL
    private let extraConfiguration: String
    /// Spawned and reaped with POSIX calls: Foundation's `Process.waitUntilExit()` can block
    /// forever when called from the concurrency pool on Linux.
    private var pid: pid_t?

    /// - Parameter extraConfiguration: lines added to mosquitto.conf (listeners are set here).
    public init(extraConfiguration: String = "", files: [String: String] = [:]) throws {
        port = Self.freePort()
        self.extraConfiguration = extraConfiguration
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("tether-mosquitto-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        // Started as root, mosquitto drops to its own user, which must be able to write its database.
        chmod(directory.path, 0o777)
        for (name, content) in files {
            try content.write(to: directory.appendingPathComponent(name), atomically: true, encoding: .utf8)
        }
        // A free port can be taken by another process before mosquitto binds it (a busy
        // machine's outgoing connections use the same range): mosquitto then exits, and
        // another port is tried.
        for attempt in 1...5 {
            try writeConfiguration()
            do {
                try start()
                return
            } catch is ExitedEarly where attempt < 5 {
                port = Self.freePort()
            }
        }
    }

    private func writeConfiguration() throws {
        let configuration = """
            listener \(port) 127.0.0.1
            allow_anonymous true
            persistence true
            persistence_location \(directory.path)/
            autosave_interval 1
            \(extraConfiguration.replacingOccurrences(of: "$DIR", with: directory.path))
            """
        try configuration.write(to: directory.appendingPathComponent("mosquitto.conf"), atomically: true, encoding: .utf8)
    }

    /// mosquitto exited before it listened (its port taken, or a configuration it refused).
    struct ExitedEarly: Error, CustomStringConvertible {
        let port: Int
        var description: String { "mosquitto exited before it listened on port \(port)" }
    }

    public func start() throws {
        let arguments = [Self.executable, "-c", directory.appendingPathComponent("mosquitto.conf").path]
        let child = try ChildProcess.spawn(arguments, quiet: true, what: "mosquitto")
        pid = child
        do {
            try Self.waitForPort(port, unless: child)
        } catch let error as ExitedEarly {
            pid = nil
            throw error
        }
    }

    /// SIGTERM: mosquitto saves its persistence file and exits.
    public func stop() {
        guard let pid else { return }
        ChildProcess.stop(pid)
        self.pid = nil
    }

    public func restart() throws {
        stop()
        try start()
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(at: directory)
    }

    public static func freePort() -> Int {
        let socketFD = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(socketFD) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socketFD, $0, length) } }
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socketFD, $0, &length) } }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Waits until `port` accepts a connection; fails at once when `child` exits first.
    static func waitForPort(_ port: Int, unless child: pid_t, timeout: TimeInterval = 10) throws {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if ChildProcess.hasExited(child) { throw ExitedEarly(port: port) }
            let socketFD = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = UInt16(port).bigEndian
            let result = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socketFD, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
            close(socketFD)
            if result == 0 { return }
            usleep(20_000)
        }
        throw CocoaError(.fileReadUnknown, userInfo: [NSLocalizedDescriptionKey: "nothing listens on port \(port)"])
    }
}
