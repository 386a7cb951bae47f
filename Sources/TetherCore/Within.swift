/// The result of `operation`, or nil if it has none within `duration` (the operation is then
/// cancelled): for waits on BlueZ's signals that a timeout bounds.
public func within<Value: Sendable>(_ duration: Duration, _ operation: @escaping @Sendable () async -> Value?) async -> Value? {
    await withTaskGroup(of: Value?.self) { group in
        group.addTask { await operation() }
        group.addTask {
            try? await Task.sleep(for: duration)
            return nil
        }
        let first = await group.next() ?? nil
        group.cancelAll()
        return first
    }
}
