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
    public let configuration: Configuration
    let logger: Logger
    private let listBroadcast = Broadcast<[Device]>(bufferSize: 16)

    private struct State {
        var devices: [String: Device] = [:]
        var order: [String] = []
    }

    private let state = Mutex(State())

    /// The user's account with the cloud; nil when the configuration names no cloud.
    public let account: TetherAccount?

    init(configuration: Configuration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
        account = configuration.cloud.map { cloud in
            TetherAccount(
                api: TetherCloudAPI(endpoint: cloud.endpoint, appID: cloud.appID, appSecret: cloud.appSecret, timeout: cloud.requestTimeout),
                store: cloud.sessionStore, renewBefore: cloud.renewBefore, logger: logger
            )
        }
    }

    /// Every device the client knows, in the order it found them.
    public var devices: [Device] {
        state.withLock { state in state.order.compactMap { state.devices[$0] } }
    }

    /// The device list now, then again every time a device appears or its ``NetStatus``
    /// changes. Device objects are the same from one list to the next.
    public func deviceListUpdates() -> AsyncStream<[Device]> {
        let updates = listBroadcast.subscribe()
        let current = devices
        return AsyncStream(bufferingPolicy: .bufferingNewest(16)) { continuation in
            continuation.yield(current)
            let task = Task {
                for await list in updates { continuation.yield(list) }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    /// The product model for a product key, from the configuration.
    public func model(forProductKey productKey: String) -> ThingModel? {
        configuration.products.first { $0.productKey == productKey }
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
            Device(
                id: endpoint.description, did: "", productKey: model?.productKey ?? "", mac: nil, endpoint: endpoint, onLAN: true,
                model: model, lan: configuration.lan, logger: logger, onNetStatusChange: { [weak self] in self?.publishList() }
            )
        }
    }

    private func register(id: String, make: () -> Device) -> Device {
        if let existing = state.withLock({ $0.devices[id] }) { return existing }
        let candidate = make()
        let (device, added) = state.withLock { state -> (Device, Bool) in
            if let existing = state.devices[id] { return (existing, false) }
            let device = candidate
            state.devices[id] = device
            state.order.append(id)
            return (device, true)
        }
        if added { publishList() }
        return device
    }

    private func publishList() {
        listBroadcast.yield(devices)
    }

    // MARK: Discovery

    func runDiscovery() async {
        let lan = configuration.lan
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                do {
                    for try await answer in GizwitsLANDiscovery.responses(targets: lan.discoveryTargets, interval: lan.discoveryInterval) {
                        self.record(answer)
                    }
                } catch {
                    self.logger.error("LAN discovery stopped", metadata: ["tether.error": "\(error)"])
                }
            }
            group.addTask {
                while !Task.isCancelled {
                    do { try await Task.sleep(for: lan.discoveryInterval) } catch { return }
                    let now = ContinuousClock.now
                    for device in self.devices { device.expirePresence(after: lan.presenceTimeout, now: now) }
                }
            }
        }
    }

    func record(_ answer: GizwitsDiscoveredDevice) {
        let info = answer.info
        let mac = info.macString
        let endpoint = LANEndpoint(host: answer.host, port: configuration.lan.tcpPort)
        let device = register(id: mac) {
            Device(
                id: mac, did: info.did, productKey: info.productKey, mac: mac, endpoint: endpoint, onLAN: true,
                model: model(forProductKey: info.productKey), lan: configuration.lan, logger: logger,
                onNetStatusChange: { [weak self] in self?.publishList() }
            )
        }
        device.sawOnLAN(did: info.did, productKey: info.productKey, endpoint: endpoint)
    }

    func shutdown() async {
        for device in devices {
            await device.unsubscribe()
            device.finishEvents()
        }
        listBroadcast.finish()
        account?.finish()
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
    let discovery = configuration.lan.discoveryEnabled ? Task { await client.runDiscovery() } : nil
    do {
        let result = try await body(client)
        discovery?.cancel()
        await discovery?.value
        await client.shutdown()
        return result
    } catch {
        discovery?.cancel()
        await discovery?.value
        await client.shutdown()
        throw error
    }
}
