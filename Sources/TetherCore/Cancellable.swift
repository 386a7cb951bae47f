import Synchronization

/// Something to stop (a subscription, a watch): stopped once, explicitly or when the last
/// reference goes, so that dropping it can never leave it running.
public final class Cancellable: Sendable {
    private let onCancel: Mutex<(@Sendable () -> Void)?>

    public init(onCancel: @escaping @Sendable () -> Void) {
        self.onCancel = Mutex(onCancel)
    }

    /// Stops it (once; later calls do nothing).
    public func cancel() {
        let action = onCancel.withLock { action in
            defer { action = nil }
            return action
        }
        action?()
    }

    deinit {
        cancel()
    }
}
