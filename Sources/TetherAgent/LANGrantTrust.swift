import Foundation
public import TetherGizwitsLAN
import Synchronization

/// What a device trusts on its LAN login: the cloud's grant keys (received when it activates with
/// the cloud) and whether a plain passcode still logs in (README, "LAN grants").
///
/// Until the device holds a key, it behaves as GAgent: the passcode logs in. Once it holds one,
/// a passcode logs in only while the binding window is open (the person at the device is binding
/// it); at any other time a client presents a grant the cloud signed, so that a user the cloud
/// no longer entitles (a revoked guest) is refused when their last grant expires.
public final class LANGrantTrust: Sendable {
    /// When a plain passcode logs in.
    public enum PasscodeLogins: String, Sendable, CaseIterable {
        /// Always, as GAgent: for LAN-only setups, at the cost of revocation on the LAN.
        case always
        /// Until the device holds a grant key; after that only in the binding window.
        case untilActivated = "until-activated"
    }

    /// A device keeps at most this many keys (the newest), so that the cloud can rotate its key.
    public static let maximumKeys = 4

    private struct State {
        var keys: [LANGrantKey] = []
    }

    private let state = Mutex(State())
    public let passcodeLogins: PasscodeLogins
    /// Unix seconds, as the device's clock says; tests move it.
    public let now: @Sendable () -> Int64
    /// Where the keys are kept across restarts (a module keeps them in flash): one Base64 key per
    /// line. Nil keeps them in memory only, and a restarted device takes passcodes again until it
    /// reaches the cloud.
    public let keyFile: String?

    public init(passcodeLogins: PasscodeLogins = .untilActivated, keyFile: String? = nil, now: (@Sendable () -> Int64)? = nil) {
        self.passcodeLogins = passcodeLogins
        self.keyFile = keyFile
        self.now = now ?? { Int64(Date().timeIntervalSince1970) }
        if let keyFile, let text = try? String(contentsOfFile: keyFile, encoding: .utf8) {
            let keys = text.split(separator: "\n").compactMap { LANGrantKey(base64: String($0)) }
            state.withLock { $0.keys = Array(keys.suffix(Self.maximumKeys)) }
        }
    }

    /// The cloud's keys the device holds, oldest first.
    public var keys: [LANGrantKey] { state.withLock { $0.keys } }

    /// Whether the device holds a key, and so checks grants.
    public var isActivated: Bool { state.withLock { !$0.keys.isEmpty } }

    /// Adds a key from the cloud (known keys are kept once; the oldest go past ``maximumKeys``).
    public func trust(_ key: LANGrantKey) {
        let changed = state.withLock { state -> [LANGrantKey]? in
            guard !state.keys.contains(key) else { return nil }
            state.keys.append(key)
            if state.keys.count > Self.maximumKeys { state.keys.removeFirst(state.keys.count - Self.maximumKeys) }
            return state.keys
        }
        if let changed { store(changed) }
    }

    /// The cloud's current list replaces the device's, so that a key the cloud dropped (rotated,
    /// or leaked) stops being trusted. An empty list changes nothing: the device stays activated.
    public func replace(with keys: [LANGrantKey]) {
        guard !keys.isEmpty else { return }
        let kept = Array(keys.suffix(Self.maximumKeys))
        let changed = state.withLock { state -> Bool in
            guard state.keys != kept else { return false }
            state.keys = kept
            return true
        }
        if changed { store(kept) }
    }

    private func store(_ keys: [LANGrantKey]) {
        guard let keyFile else { return }
        let text = keys.map(\.base64).joined(separator: "\n") + "\n"
        // Written aside and renamed: a device that loses power mid-write keeps the old list.
        let temporary = keyFile + ".new"
        do {
            try text.write(toFile: temporary, atomically: false, encoding: .utf8)
            _ = rename(temporary, keyFile)
        } catch {
            // The keys stay in memory; the next fetch tries again.
        }
    }

    /// Whether a plain passcode logs in now.
    func acceptsPasscode(bindingWindowOpen: Bool) -> Bool {
        passcodeLogins == .always || bindingWindowOpen || !isActivated
    }

    /// Checks a grant presented at login against the keys and the clock.
    func verify(_ text: String, did: String) -> Result<LANGrant, LANGrantRefusal> {
        let keys = self.keys
        guard !keys.isEmpty else { return .failure(.invalid) }
        return LANGrantVerifier(keys: keys).verify(text, did: did, now: now())
    }
}
