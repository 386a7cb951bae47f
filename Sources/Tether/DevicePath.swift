/// How a device is reached: where it is present (the LAN, the cloud), whether the client's
/// real-time connection is up, and which paths its subscription holds. A value that takes
/// events and returns what to announce; ``netStatus``, ``controlPath`` and ``reachability`` are
/// derived from it, never stored, so they cannot disagree with the facts.
///
/// `Device` keeps one under its lock; the connections (the LAN session, the cloud attachment)
/// report what happened to them as events.
struct DevicePath: Hashable, Sendable {
    /// The paths a subscription holds.
    struct Hold: Hashable, Sendable {
        /// Logged in on the LAN.
        var lan = false
        /// Subscribed on the cloud's real-time connection.
        var cloud = false
    }

    /// The device answers discovery (or was added by address).
    private(set) var onLAN: Bool
    /// What the cloud says, when the user is bound to the device.
    private(set) var binding: CloudPresence?
    /// The client's real-time connection to the cloud is up.
    private(set) var cloudLinkUp: Bool
    /// Nil when the device is not subscribed.
    private(set) var subscription: Hold?

    enum Event: Hashable, Sendable {
        case seenOnLAN
        case goneFromLAN
        case cloudLink(up: Bool)
        /// The bindings list (nil: not bound any more).
        case binding(CloudPresence?)
        /// The cloud pushed the device's connection state.
        case cloudPresence(online: Bool)
        case customInfo(remark: String?, alias: String?)
        case subscribed
        case unsubscribed
        case lanSession(up: Bool)
        case cloudSubscription(carried: Bool)
    }

    enum Action: Hashable, Sendable {
        /// ``netStatus`` changed: tell the device's and the client's listeners.
        case announce(NetStatus)
        /// Something the device list shows changed, other than the net status.
        case publishList
    }

    init(onLAN: Bool, cloudLinkUp: Bool = false) {
        self.onLAN = onLAN
        self.cloudLinkUp = cloudLinkUp
    }

    /// Applies `events` in order and says what to announce: the net status when it ends up
    /// different, the list when only what it shows changed.
    mutating func handle(_ events: [Event]) -> Action? {
        let before = self
        for event in events { apply(event) }
        if netStatus != before.netStatus { return .announce(netStatus) }
        return binding != before.binding ? .publishList : nil
    }

    private mutating func apply(_ event: Event) {
        switch event {
        case .seenOnLAN:
            onLAN = true
        case .goneFromLAN:
            onLAN = false
        case .cloudLink(let up):
            cloudLinkUp = up
        case .binding(let presence):
            binding = presence
            // Not bound any more: the cloud no longer carries the subscription.
            if presence == nil { subscription?.cloud = false }
        case .cloudPresence(let online):
            binding?.isOnline = online
        case .customInfo(let remark, let alias):
            if let remark { binding?.remark = remark }
            if let alias { binding?.alias = alias }
        case .subscribed:
            if subscription == nil { subscription = Hold() }
        case .unsubscribed:
            subscription = nil
        case .lanSession(let up):
            subscription?.lan = up
        case .cloudSubscription(let carried):
            // The cloud carries only what the user is bound to.
            subscription?.cloud = carried && binding != nil
        }
    }

    // MARK: Derived

    var netStatus: NetStatus {
        if controlPath != nil { return .controllable }
        return onLAN || isOnlineInCloud ? .online : .offline
    }

    /// LAN first; the cloud when it carries the subscription, its connection is up and the
    /// device is connected to it.
    var controlPath: ControlPath? {
        if subscription?.lan == true { return .lan }
        if isCarriedByCloud, cloudLinkUp, isOnlineInCloud { return .cloud }
        return nil
    }

    var reachability: Reachability {
        switch (onLAN, isOnlineInCloud) {
        case (true, true): .both
        case (true, false): .lan
        case (false, true): .cloud
        case (false, false): .none
        }
    }

    var isBound: Bool { binding != nil }
    var isOnlineInCloud: Bool { binding?.isOnline == true }
    var isSubscribed: Bool { subscription != nil }
    var isConnectedOnLAN: Bool { subscription?.lan == true }
    var isCarriedByCloud: Bool { subscription?.cloud == true }

    /// With the cloud carrying the subscription and the device gone from the LAN, the session
    /// waits for it to be discovered again rather than dialling.
    var waitsForLAN: Bool { isCarriedByCloud && !onLAN }

    /// The status must be read through the cloud (after a change of path): the cloud carries the
    /// subscription, its connection is up, and the LAN does not.
    var readsThroughCloud: Bool { isCarriedByCloud && cloudLinkUp && !isConnectedOnLAN }
}
