import Synchronization

/// The devices this node sent data-point writes to whose reports may show them applied: a
/// report of any other device needs no look at the ledger.
///
/// A device leaves when the ledger shows nothing of it left to apply. A write sent while that
/// was being read must keep it in, so each send stamps the device, and a device only leaves
/// if no send stamped it after the read began.
final class ApplicationWatch: Sendable {
    private struct State {
        var stamps: [String: UInt64] = [:]
        var nextStamp: UInt64 = 1
    }

    private let state = Mutex(State())

    /// A write was sent to `did`.
    func sent(to did: String) {
        state.withLock { state in
            state.stamps[did] = state.nextStamp
            state.nextStamp += 1
        }
    }

    /// Of `dids`, the ones watched.
    func watched(among dids: some Sequence<String>) -> [String] {
        state.withLock { state in dids.filter { state.stamps[$0] != nil } }
    }

    /// What to hand ``leave(_:since:)`` after reading the ledger: taken before the read.
    func stamp(of did: String) -> UInt64? {
        state.withLock { $0.stamps[did] }
    }

    /// `did` had nothing left to apply when its ledger was read after `stamp`: it leaves, unless
    /// a write was sent to it since.
    func leave(_ did: String, since stamp: UInt64?) {
        state.withLock { state in
            if state.stamps[did] == stamp { state.stamps[did] = nil }
        }
    }
}
