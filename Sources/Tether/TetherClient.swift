public import Logging
import NIOCore
import Synchronization

/// The Tether SDK client: finds devices on the LAN, keeps one ``Device`` object per device, and
/// controls them.
///
/// ```swift
/// try await withTetherClient(configuration: .init(products: [model])) { client in
///     for await devices in client.deviceListUpdates() {
///         guard let device = devices.first else { continue }
///         try await device.subscribe()
///         try await device.write(["LED_OnOff": true], sn: 5)
///         break
///     }
/// }
/// ```
public final class TetherClient: Sendable {
    /// What the client was started with.
    public let configuration: Configuration
    let logger: Logger
    private let listBroadcast = Broadcast<[Device]>(bufferSize: 16)
    let eventBroadcast = Broadcast<TetherClientEvent>(bufferSize: 256)

    private struct State {
        var devices: [String: Device] = [:]
        var order: [String] = []
        /// Other names of a device (its did, its MAC as lowercase hex) → its id, so that the
        /// LAN and the cloud find the same object.
        var aliases: [String: String] = [:]
    }

    private let state = Mutex(State())

    /// The user's account with the cloud; nil when the configuration names no cloud.
    public let account: TetherAccount?
    /// The real-time connection the devices share, while a user is logged in.
    let link: RealtimeLink?
    let productModels: ProductModels
    /// Where the client's background work runs, ended with the client.
    let tasks = TaskScope()

    init(configuration: Configuration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
        account = configuration.cloud.map { cloud in
            TetherAccount(
                api: TetherCloudAPI(endpoint: cloud.endpoint, appID: cloud.appID, appSecret: cloud.appSecret, timeout: cloud.requestTimeout),
                store: cloud.sessionStore, renewBefore: cloud.renewBefore, logger: logger
            )
        }
        link = account.map(RealtimeLink.init(account:))
        productModels = ProductModels(
            configured: configuration.products, api: configuration.cloud?.fetchesProductModels == true ? account?.api : nil, logger: logger
        )
        link?.onBindingsChanged { [weak self] in _ = try? await self?.refreshBindings() }
    }

    /// Every device the client knows, in the order it found them: found on the LAN, added by
    /// address, or bound to the user in the cloud. A device that only the cloud listed leaves
    /// the list when the user is no longer bound to it.
    public var devices: [Device] {
        state.withLock { state in state.order.compactMap { state.devices[$0] } }.filter(\.isListed)
    }

    /// The device list now, then again every time a device appears or leaves, or its
    /// ``NetStatus`` or binding changes. Device objects are the same from one list to the next.
    ///
    /// - Parameter productKeys: only devices of these products (nil: all).
    public func deviceListUpdates(productKeys: Set<String>? = nil) -> AsyncStream<[Device]> {
        let filter: @Sendable ([Device]) -> [Device] = { list in
            guard let productKeys else { return list }
            return list.filter { productKeys.contains($0.productKey) }
        }
        return listBroadcast.subscribe(startingWith: [filter(devices)], transform: filter)
    }

    /// What happens to the client from now on: the user's session, the cloud connection, device
    /// reachability, and failures of the client's own background work (the Gizwits SDK's
    /// `GizEventSDK`, `GizEventDevice`, `GizEventM2MService` and `GizEventToken`). Each call gives
    /// a new, independent stream; it ends when the client shuts down.
    public func events() -> AsyncStream<TetherClientEvent> { eventBroadcast.subscribe() }

    /// The product model for a product key: from the configuration, or fetched from the cloud
    /// earlier.
    public func model(forProductKey productKey: String) -> ThingModel? {
        productModels.known(productKey)
    }

    /// A device at a known address, without discovery (a device on another subnet, or one whose
    /// UDP discovery is blocked). The same address gives the same object.
    ///
    /// - Parameter model: the device's product model; when nil, the only model in the
    ///   configuration is used if there is exactly one.
    public func device(host: String, port: Int = 12416, model: ThingModel? = nil) -> Device {
        let endpoint = LANEndpoint(host: host, port: port)
        let model = model ?? (configuration.products.count == 1 ? configuration.products[0] : nil)
        return register(id: endpoint.description) {
            makeDevice(id: endpoint.description, did: "", productKey: model?.productKey ?? "", mac: nil, endpoint: endpoint, onLAN: true, model: model)
        }
    }

    /// The device with this did, when the client knows it.
    public func device(did: String) -> Device? {
        guard !did.isEmpty else { return nil }
        return state.withLock { state in state.devices[did] ?? state.aliases[did].flatMap { state.devices[$0] } }
    }

    func makeDevice(
        id: String, did: String, productKey: String, mac: String?, endpoint: LANEndpoint?, onLAN: Bool, model: ThingModel?, tuya: TuyaLink? = nil
    ) -> Device {
        let models = productModels
        let device = Device(
            id: id, did: did, productKey: productKey, mac: mac, endpoint: endpoint, onLAN: onLAN, model: model,
            lan: configuration.lan, link: tuya == nil ? link : nil, tasks: tasks, logger: logger, modelSource: { await models.model(for: $0) }, tuya: tuya,
            tuyaConfiguration: configuration.tuya,
            onNetStatusChange: { [weak self] device, status in
                if let status { self?.eventBroadcast.yield(.deviceNetStatus(device, status)) }
                self?.publishList()
            }
        )
        return device
    }

    /// Fetches a device's model in the background when the client does not know its product, so
    /// that it is there before the app subscribes.
    func fetchModelIfMissing(_ device: Device) {
        guard device.model == nil, device.modelSource != nil, !device.productKey.isEmpty else { return }
        tasks.start { await device.ensureModel() }
    }

    /// Every device, listed or not.
    var allDevices: [Device] {
        state.withLock { state in state.order.compactMap { state.devices[$0] } }
    }

    /// The device known by `id` or by any of `aliases` (a did, a MAC), or a new one from `make`.
    func register(id: String, aliases: [String] = [], make: () -> Device) -> Device {
        let keys = [id] + aliases.filter { !$0.isEmpty }
        let lookup = { (state: State) -> Device? in
            for key in keys {
                if let device = state.devices[key] ?? state.aliases[key].flatMap({ state.devices[$0] }) { return device }
            }
            return nil
        }
        if let existing = state.withLock({ lookup($0) }) {
            state.withLock { state in for key in keys where state.devices[key] == nil { state.aliases[key] = existing.id } }
            return existing
        }
        let candidate = make()
        let (device, added) = state.withLock { state -> (Device, Bool) in
            if let existing = lookup(state) { return (existing, false) }
            let device = candidate
            state.devices[id] = device
            state.order.append(id)
            for key in keys.dropFirst() { state.aliases[key] = id }
            return (device, true)
        }
        if added {
            // The connection may have come up while the device was made, before the client's
            // handler could see it.
            device.apply(.cloudLink(up: link?.connected != nil))
            publishList()
        }
        return device
    }

    func publishList() {
        listBroadcast.yield(devices)
    }

    // MARK: Discovery

    func runDiscovery() async {
        let lan = configuration.lan
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                do {
                    try await GizwitsLANDiscovery.withResponses(targets: lan.discoveryTargets, interval: lan.discoveryInterval) { answers in
                        for try await answer in answers { self.record(answer) }
                    }
                } catch is CancellationError {
                    return
                } catch {
                    self.logger.error("LAN discovery stopped", metadata: ["tether.error": "\(error)"])
                    self.eventBroadcast.yield(.error((error as? TetherError) ?? TetherError(.bindFailed, "LAN discovery stopped: \(error)")))
                }
            }
            group.addTask {
                while !Task.isCancelled {
                    do { try await Task.sleep(for: lan.discoveryInterval) } catch { return }
                    let now = ContinuousClock.now
                    for device in self.devices where device.lanProtocol == .gizwits { device.expirePresence(after: lan.presenceTimeout, now: now) }
                }
            }
        }
    }

    func record(_ answer: GizwitsDiscoveredDevice) {
        let info = answer.info
        let mac = info.macString
        let endpoint = LANEndpoint(host: answer.host, port: configuration.lan.tcpPort)
        let device = register(id: mac, aliases: [info.did, Device.normalizedMAC(mac)]) {
            makeDevice(
                id: mac, did: info.did, productKey: info.productKey, mac: mac, endpoint: endpoint, onLAN: true, model: model(forProductKey: info.productKey))
        }
        device.sawOnLAN(did: info.did, productKey: info.productKey, endpoint: endpoint)
        fetchModelIfMissing(device)
    }

    func shutdown() async {
        // Every device, listed or not: one unbound after subscribing still has a session.
        for device in allDevices {
            await device.unsubscribe()
            device.finishEvents()
        }
        listBroadcast.finish()
        account?.finish()
        eventBroadcast.finish()
    }
}

/// Runs `body` with a started client, and shuts the client down when `body` returns or throws:
/// discovery stops, subscriptions end, connections close, event streams finish.
public func withTetherClient<Result: Sendable>(
    configuration: TetherClient.Configuration = .init(),
    logger: Logger = Logger(label: "tether"),
    _ body: (TetherClient) async throws -> Result
) async throws -> Result {
    let client = TetherClient(configuration: configuration, logger: logger)
    let outcome = await withDiscardingTaskGroup { group -> Swift.Result<Result, any Error> in
        if configuration.lan.discoveryEnabled { group.addTask { await client.runDiscovery() } }
        if configuration.tuya.listensForAnnouncements { group.addTask { await client.runTuyaDiscovery() } }
        if let cloud = configuration.cloud {
            group.addTask { await client.runCloudRefresh(interval: cloud.bindingsRefreshInterval) }
            group.addTask { await client.runRealtime(configuration: cloud.realtimeConfiguration) }
        }
        group.addTask { await client.tasks.run() }
        let outcome: Swift.Result<Result, any Error>
        do { outcome = .success(try await body(client)) } catch { outcome = .failure(error) }
        group.cancelAll()
        return outcome
    }
    await client.shutdown()
    return try outcome.get()
}
