import Logging
import Synchronization

/// A device the app can see: found on the LAN, added by address, or bound to the user in the
/// cloud. The same object stands for the same device for the client's whole lifetime, and the
/// app never has to know which path a command takes: LAN when the device answers there, the
/// cloud otherwise.
///
/// ```swift
/// try await device.subscribe()
/// let result = try await device.write(["LED_OnOff": true], sn: 5)
/// for await event in device.events() { … }
/// ```
public final class Device: Sendable, Identifiable, Hashable, CustomStringConvertible {
    /// The MAC address (`ac:cf:23:50:d4:46`) for discovered devices; `host:port` for devices
    /// added by address.
    public let id: String
    /// The product model, when the client knows the device's product: from the configuration,
    /// or fetched from the cloud (``TetherClient/CloudOptions/fetchesProductModels``).
    public var model: ThingModel? { modelState.withLock { $0.model } }

    var codec: P0Codec? { modelState.withLock { $0.codec } }
    private let modelState: Mutex<(model: ThingModel?, codec: P0Codec?)>
    /// Where a missing model comes from (the client's models, the cloud).
    let modelSource: (@Sendable (String) async -> ThingModel?)?
    let lan: LANConfiguration
    let tuyaConfiguration: TuyaConfiguration
    /// The cloud's real-time connection, when the client has a cloud.
    let link: RealtimeLink?
    let logger: Logger
    /// The client's scope, where the device's background work runs.
    let tasks: TaskScope
    private let eventBroadcast = Broadcast<DeviceEvent>()
    /// Called when the list shows something new about the device; with its new net status when
    /// that changed.
    private let onNetStatusChange: @Sendable (Device, NetStatus?) -> Void

    struct State {
        var did: String
        var productKey: String
        var mac: String?
        var endpoint: LANEndpoint?
        /// Presence on each path and the subscription's hold on them: what the net status and
        /// the control path are derived from.
        var path: DevicePath
        var lastSeen: ContinuousClock.Instant?
        var status = DeviceStatus()
        var passcode: String?
        /// How to reach the device on the Tuya protocol; nil for a GAgent device.
        var tuya: TuyaLink?
        /// The LAN grant last obtained from the cloud, and whether the device asked for one.
        var lanGrant: HeldLANGrant?
        var requiresLANGrant = false
        var session: Subscription?
        var nextSN: UInt32 = 1
        var snInFlight: Set<UInt32> = []
        /// Writes through the cloud waiting for the report that answers their sn.
        var cloudWrites: [UInt32: AsyncPromise<DeviceStatus?, TetherError>] = [:]
    }

    /// A subscription: the work that keeps the LAN connection up (a child of the client's
    /// scope) and the connection when it is. Which paths it holds is in ``State/path``.
    struct Subscription {
        var work: TaskScope.Handle?
        var connection: GizwitsLANClient?
        /// The connection of a Tuya device (which never has a GAgent one).
        var tuyaSession: TuyaLANSession?
        /// Resolved when the subscription is established on either path, or has failed.
        let firstLogin: AsyncPromise<Void, TetherError>
    }

    let state: Mutex<State>

    init(
        id: String, did: String, productKey: String, mac: String?, endpoint: LANEndpoint?, onLAN: Bool, model: ThingModel?, lan: LANConfiguration,
        link: RealtimeLink?, tasks: TaskScope, logger: Logger, modelSource: (@Sendable (String) async -> ThingModel?)? = nil, tuya: TuyaLink? = nil,
        tuyaConfiguration: TuyaConfiguration = .init(), onNetStatusChange: @escaping @Sendable (Device, NetStatus?) -> Void
    ) {
        self.id = id
        self.tuyaConfiguration = tuyaConfiguration
        self.modelState = Mutex((model, model.flatMap { try? P0Codec(model: $0) }))
        self.modelSource = modelSource
        self.lan = lan
        self.link = link
        self.tasks = tasks
        self.logger = logger
        self.onNetStatusChange = onNetStatusChange
        self.state = Mutex(
            State(
                did: did, productKey: productKey, mac: mac, endpoint: endpoint,
                path: DevicePath(onLAN: onLAN, cloudLinkUp: link?.connected != nil), lastSeen: onLAN ? .now : nil, tuya: tuya
            ))
    }

    /// Takes `model` when the device has none and it is the device's product's; true when it did.
    @discardableResult
    func adopt(_ model: ThingModel) -> Bool {
        // A Tuya device needs no P0 layout: its points travel by DP id.
        let codec = try? P0Codec(model: model)
        guard model.productKey == productKey, codec != nil || lanProtocol == .tuya else { return false }
        return modelState.withLock { state in
            guard state.model == nil else { return false }
            state = (model, codec)
            return true
        }
    }

    /// Uses `model` from now on, whatever the device had (the app said which product it is).
    func replaceModel(_ model: ThingModel) {
        let codec = try? P0Codec(model: model)
        modelState.withLock { $0 = (model, codec) }
    }

    /// Fetches the model when the device has none and a source can give it. A subscribed device
    /// that gets its model only now reads its status again: without a model, the reports so
    /// far could not be read.
    func ensureModel() async {
        guard model == nil, let modelSource, !productKey.isEmpty else { return }
        guard let model = await modelSource(productKey), adopt(model), isSubscribed else { return }
        if let session = state.withLock({ $0.session?.tuyaSession }) {
            _ = try? await readTuyaStatus(on: session)
        } else if let connection = state.withLock({ $0.path.isConnectedOnLAN ? $0.session?.connection : nil }), let codec {
            _ = try? await readStatus(codec: codec, on: connection)
        } else {
            await resyncThroughCloud()
        }
    }

    /// The device's id in the cloud and on the LAN (22 characters); empty for a device added by
    /// address until it is known.
    public var did: String { state.withLock { $0.did } }
    /// The product the device belongs to.
    public var productKey: String { state.withLock { $0.productKey } }
    /// The MAC address, `ac:cf:23:50:d4:46`, when known (from discovery or the cloud).
    public var mac: String? { state.withLock { $0.mac } }
    /// Where the device's TCP control channel is, when known.
    public var lanEndpoint: LANEndpoint? { state.withLock { $0.endpoint } }
    /// Whether the device answered discovery recently (or was added by address).
    public var isOnLAN: Bool { state.withLock { $0.path.onLAN } }
    /// Whether the device can be reached and controlled now; changes arrive as
    /// ``DeviceEvent/netStatus(_:)`` events.
    public var netStatus: NetStatus { state.withLock { $0.path.netStatus } }
    /// Whether ``subscribe(passcode:)`` succeeded and ``unsubscribe()`` has not been called since.
    public var isSubscribed: Bool { state.withLock { $0.path.isSubscribed } }
    /// The latest known value of every data point the device has reported.
    public var status: DeviceStatus { state.withLock { $0.status } }

    public var description: String { "Device(\(id), did \(did), \(netStatus))" }

    public static func == (lhs: Device, rhs: Device) -> Bool { lhs === rhs }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }

    /// Everything that happens to the device from now on: status reports, transparent data,
    /// changes of ``netStatus``. Each call gives a new, independent stream; it ends when the
    /// client shuts down.
    public func events() -> AsyncStream<DeviceEvent> {
        eventBroadcast.subscribe()
    }

    func emit(_ event: DeviceEvent) {
        eventBroadcast.yield(event)
    }

    func finishEvents() {
        eventBroadcast.finish()
    }

    // MARK: Presence

    /// Records a discovery answer.
    func sawOnLAN(did: String, productKey: String, endpoint: LANEndpoint) {
        updatePath { state in
            state.did = did
            state.productKey = productKey
            state.endpoint = endpoint
            state.lastSeen = .now
            return [.seenOnLAN]
        }
    }

    /// Marks the device as gone from the LAN when it has not answered for `timeout`. A device
    /// added by address is not discovered, so it never expires.
    func expirePresence(after timeout: Duration, now: ContinuousClock.Instant) {
        guard state.withLock({ $0.tuya.map(\.addressFromAnnouncements) ?? ($0.mac != nil) }) else { return }
        updatePath { state in
            guard state.path.onLAN, let lastSeen = state.lastSeen, now - lastSeen > timeout else { return [] }
            return [.goneFromLAN]
        }
    }

    /// Changes the state with `body` and applies the path events it returns, under the lock;
    /// then says what changed: a new net status to the device's listeners (under the lock, so
    /// that two changes racing each other are reported in order) and the client, or only the
    /// client when the list shows something else new (the binding).
    func updatePath(_ body: (inout State) -> [DevicePath.Event]) {
        let action = state.withLock { state -> DevicePath.Action? in
            let action = state.path.handle(body(&state))
            if case .announce(let status) = action { emit(.netStatus(status)) }
            return action
        }
        switch action {
        case .announce(let status):
            logger.debug("device net status changed", metadata: ["tether.device": "\(id)", "tether.netStatus": "\(status)"])
            onNetStatusChange(self, status)
        case .publishList:
            onNetStatusChange(self, nil)
        case nil:
            break
        }
    }

    func apply(_ events: DevicePath.Event...) {
        updatePath { _ in events }
    }
}
