import Synchronization
public import TetherCore

/// The steps of putting a device on the user's Wi-Fi, as progress and in errors.
public enum OnboardingStep: String, Sendable, Hashable, CaseIterable {
    /// Opening the sockets the mode needs.
    case preparing
    /// Reaching the device (ESP-IDF: its HTTP server on the access point).
    case connectingToDevice = "connecting_to_device"
    /// The security handshake (ESP-IDF: `prov-session`).
    case establishingSession = "establishing_session"
    /// Asking the device which networks it hears (ESP-IDF: `prov-scan`).
    case scanningNetworks = "scanning_networks"
    /// Sending the credentials (smart config: the datagram lengths, over and over).
    case sendingCredentials = "sending_credentials"
    /// The device answered: it has the credentials.
    case deviceAcknowledged = "device_acknowledged"
    /// The device is joining the network (ESP-IDF: polling `prov-config` status).
    case joiningNetwork = "joining_network"
    /// Waiting for the device to announce itself on the router's network.
    case seenOnLAN = "seen_on_lan"
    /// Waiting for the device to reach the cloud and present the pairing token.
    case activatedInCloud = "activated_in_cloud"
    /// The cloud bound the device to the user.
    case bound
}

/// An onboarding attempt that failed: at which step, and why (a typed error with its code).
public struct OnboardingFailure: Error, Sendable, CustomStringConvertible {
    public var step: OnboardingStep
    public var error: TetherError
    /// What happened until the failure, for a support ticket.
    public var trace: OnboardingTrace

    public var description: String { "onboarding failed at \(step.rawValue): \(error)" }
}

/// The flight recorder of one onboarding attempt: every step, every batch of datagrams sent and
/// every answer received, with times from the attempt's start (monotonic), and the outcome. The
/// app can attach its JSON to a support ticket: passwords, keys and tokens never go into it (only
/// their lengths).
public struct OnboardingTrace: Sendable, Hashable {
    public struct Entry: Sendable, Hashable {
        /// Milliseconds since the attempt started.
        public var milliseconds: Int64
        public var event: String
        public var detail: JSONObject
    }

    public var mode: String
    public private(set) var entries: [Entry] = []
    public private(set) var outcome: String?
    /// Entries left out past ``maximumEntries`` (a flood of datagrams must not grow it without end).
    public private(set) var dropped = 0
    public static let maximumEntries = 1000

    public init(mode: String) { self.mode = mode }

    mutating func record(_ event: String, at milliseconds: Int64, _ detail: JSONObject = [:]) {
        guard entries.count < Self.maximumEntries || event == "outcome" else {
            dropped += 1
            return
        }
        entries.append(Entry(milliseconds: milliseconds, event: event, detail: detail))
    }

    mutating func finish(_ outcome: String, at milliseconds: Int64, _ detail: JSONObject = [:]) {
        record("outcome", at: milliseconds, detail.merging(["result": .string(outcome)]))
        self.outcome = outcome
    }

    /// `{"mode", "outcome", "entries": [{"t_ms", "event", ...}]}`.
    public var json: JSONValue {
        .object([
            "mode": .string(mode), "outcome": outcome.map(JSONValue.string) ?? .null, "dropped_entries": .int(Int64(dropped)),
            "entries": .array(entries.map { entry in .object(entry.detail.merging(["t_ms": .int(entry.milliseconds), "event": .string(entry.event)])) }),
        ])
    }
}

/// Records into a trace from the tasks of one attempt, timed from its start.
final class OnboardingRecorder: Sendable {
    private let start = ContinuousClock.now
    private let trace: Mutex<OnboardingTrace>
    /// A mode run inside a session that goes on after it (to the cloud's binding): the mode's
    /// outcome is an entry, and the session gives the trace its outcome.
    private let nested: Bool

    init(mode: String, nested: Bool = false) {
        trace = Mutex(OnboardingTrace(mode: mode))
        self.nested = nested
    }

    private var elapsed: Int64 {
        let (seconds, attoseconds) = (ContinuousClock.now - start).components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }

    func record(_ event: String, _ detail: JSONObject = [:]) {
        let at = elapsed
        trace.withLock { $0.record(event, at: at, detail) }
    }

    func finish(_ outcome: String, _ detail: JSONObject = [:]) -> OnboardingTrace {
        if nested {
            record("mode_outcome", detail.merging(["result": .string(outcome)]))
            return trace.withLock { $0 }
        }
        return complete(outcome, detail)
    }

    /// The attempt's outcome, nested or not.
    func complete(_ outcome: String, _ detail: JSONObject = [:]) -> OnboardingTrace {
        let at = elapsed
        return trace.withLock { trace in
            trace.finish(outcome, at: at, detail)
            return trace
        }
    }
}

extension JSONObject {
    fileprivate func merging(_ other: JSONObject) -> JSONObject {
        var merged = self
        for key in other.keys { merged[key] = other[key] }
        return merged
    }
}
