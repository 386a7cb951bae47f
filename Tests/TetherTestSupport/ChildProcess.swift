public import Foundation

/// Spawns test peers (mosquitto, dbus-daemon) with POSIX calls: Foundation's
/// `Process.waitUntilExit()` can block forever when called from the concurrency pool on Linux.
public enum ChildProcess {
    /// Starts `arguments[0]` with `arguments`, its output to /dev/null when `quiet` (else to
    /// `output`, a file path), and returns its pid.
    public static func spawn(_ arguments: [String], quiet: Bool = true, output: String? = nil, what: String) throws -> pid_t {
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        let sink = quiet ? "/dev/null" : (output ?? "/dev/null")
        posix_spawn_file_actions_addopen(&actions, 1, sink, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, sink, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        // Spawned from a concurrency-pool thread, the child would inherit that thread's blocked
        // signals and ignore SIGTERM: give it an empty mask and default handlers.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t()
        sigemptyset(&empty)
        var all = sigset_t()
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &empty)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var child: pid_t = 0
        let result = posix_spawn(&child, arguments[0], &actions, &attributes, &argv, environ)
        guard result == 0 else {
            throw CocoaError(.fileReadUnknown, userInfo: [NSLocalizedDescriptionKey: "cannot start \(what): \(String(cString: strerror(result)))"])
        }
        return child
    }

    /// Whether the child has exited (and is reaped), without waiting.
    public static func hasExited(_ pid: pid_t) -> Bool {
        var status: Int32 = 0
        return waitpid(pid, &status, WNOHANG) == pid
    }

    /// SIGTERM, then waits for the child to exit.
    public static func stop(_ pid: pid_t) {
        kill(pid, SIGTERM)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1, errno == EINTR {}
    }
}
