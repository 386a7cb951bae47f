import Synchronization
import TetherCloudClient

/// The client's real-time connection to the cloud, shared by its devices: present while a user
/// is logged in, replaced at every login.
final class RealtimeLink: Sendable {
    let account: TetherAccount
    private let current = Mutex<CloudRealtime?>(nil)
    /// The client's binding refresh, for devices that bind themselves when subscribed on the LAN.
    private let bindingsChanged = Mutex<(@Sendable () async -> Void)?>(nil)

    init(account: TetherAccount) {
        self.account = account
    }

    var realtime: CloudRealtime? { current.withLock { $0 } }

    /// The connection when it is up now.
    var connected: CloudRealtime? {
        guard let realtime, realtime.isConnected else { return nil }
        return realtime
    }

    func set(_ realtime: CloudRealtime?) { current.withLock { $0 = realtime } }

    /// Clears the connection if it is still `realtime`.
    func clear(_ realtime: CloudRealtime) {
        current.withLock { if $0 === realtime { $0 = nil } }
    }

    /// The connection once it is up, waiting up to `timeout` for one that is (re)connecting.
    func connected(within timeout: Duration) async -> CloudRealtime? {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let connected { return connected }
            guard realtime != nil, ContinuousClock.now < deadline else { return nil }
            do { try await Task.sleep(for: .milliseconds(50)) } catch { return nil }
        }
    }

    func onBindingsChanged(_ action: @escaping @Sendable () async -> Void) { bindingsChanged.withLock { $0 = action } }

    func bindingsDidChange() async { await bindingsChanged.withLock { $0 }?() }
}
