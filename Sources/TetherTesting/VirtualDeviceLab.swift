public import Logging
import Synchronization
public import Tether
public import TetherAgent
public import TetherAlink

/// Virtual devices for an app's own tests, in the test's process: each speaks the Gizwits LAN
/// protocol on loopback (and, with cloud credentials, connects to a Tether cloud), so the app's
/// `TetherClient` finds and controls them exactly as it would real ones.
///
/// ```swift
/// import Testing
/// import Tether
/// import TetherTesting
///
/// @Test func switchesTheLightOn() async throws {
///     try await VirtualDeviceLab.withDevices(model: lamp, count: 2) { lab in
///         try await withTetherClient(configuration: .init(products: [lamp], lan: lab.lanConfiguration())) { client in
///             // … the app's code under test, then:
///             #expect(lab.devices[0].status.data["LED_OnOff"] == .bool(true))
///         }
///     }
/// }
/// ```
///
/// Device `i` listens on `127.0.0.(i+1)` (one address per device, as on a real LAN; on macOS add
/// the addresses beyond 127.0.0.1 with `ifconfig lo0 alias`), on ports the system picks for the
/// first device and shares with the others.
public final class VirtualDeviceLab: Sendable {
    /// The devices: read their `VirtualDevice/status`, change values, watch their events.
    public let devices: [VirtualDevice]
    /// Where each device listens.
    public let addresses: [LANDeviceAddresses]
    private let logger: Logger
    /// Where the devices' servers and cloud links run: ended with ``withDevices``.
    private let scope: TaskScope
    /// Each device's LAN server, while it is on the LAN.
    private let lanServers: Mutex<[TaskScope.Handle?]>

    private init(devices: [VirtualDevice], addresses: [LANDeviceAddresses], servers: [TaskScope.Handle?], scope: TaskScope, logger: Logger) {
        self.devices = devices
        self.addresses = addresses
        self.lanServers = Mutex(servers)
        self.scope = scope
        self.logger = logger
    }

    /// Starts `count` devices of `model` on loopback, runs `body`, and stops them.
    ///
    /// - Parameters:
    ///   - identities: the devices' did, MAC and passcode (random when nil; pass the cloud's to
    ///     have a device appear under the identity the cloud registered).
    ///   - cloud: one device-gateway configuration per device, to connect each to a Tether cloud
    ///     as well (Alink over MQTT); nil keeps them on the LAN.
    ///   - bindable: whether the devices hand out their passcode (the binding window).
    public static func withDevices<Result: Sendable>(
        model: ThingModel,
        count: Int = 1,
        identities: [DeviceIdentity]? = nil,
        cloud: [AlinkDeviceConfiguration]? = nil,
        bindable: Bool = true,
        logger: Logger = Logger(label: "tether.testing"),
        _ body: (VirtualDeviceLab) async throws -> Result
    ) async throws -> Result {
        guard (1...250).contains(count) else { throw TetherError(.invalidArgument, "a lab holds 1 to 250 devices") }
        if let identities, identities.count < count { throw TetherError(.invalidArgument, "\(count) devices need \(count) identities") }
        if let cloud, cloud.count < count { throw TetherError(.invalidArgument, "\(count) devices need \(count) cloud configurations") }
        var generator = SystemRandomNumberGenerator()
        let devices = try (0..<count).map { index in
            try VirtualDevice(
                model: model, identity: identities?[index] ?? .random(productKey: model.productKey, using: &generator), bindable: bindable
            )
        }
        let scope = TaskScope()
        // Every server and link is a child of this call: all have ended when it returns.
        let outcome = await withDiscardingTaskGroup { group -> Swift.Result<Result, any Error> in
            group.addTask { await scope.run() }
            defer { group.cancelAll() }
            do {
                var servers: [TaskScope.Handle?] = []
                var addresses: [LANDeviceAddresses] = []
                for (index, device) in devices.enumerated() {
                    let ports = addresses.first.map { ($0.udpPort, $0.tcpPort) } ?? (0, 0)
                    let server = Self.server(device, host: "127.0.0.\(index + 1)", ports: ports, logger: logger)
                    servers.append(scope.start { try? await server.run() })
                    addresses.append(try await server.addresses())
                }
                for (index, device) in devices.enumerated() {
                    if let configuration = cloud?[index] {
                        let link = CloudLink(device: device, configuration: configuration, logger: logger)
                        scope.start { await link.run() }
                    }
                }
                let lab = VirtualDeviceLab(devices: devices, addresses: addresses, servers: servers, scope: scope, logger: logger)
                return .success(try await body(lab))
            } catch {
                return .failure(error)
            }
        }
        return try outcome.get()
    }

    /// A LAN configuration that discovers exactly these devices, quickly.
    public func lanConfiguration(discoveryInterval: Duration = .milliseconds(200)) -> LANConfiguration {
        LANConfiguration(
            discoveryTargets: addresses.map { LANEndpoint(host: $0.host, port: $0.udpPort) },
            discoveryInterval: discoveryInterval, presenceTimeout: discoveryInterval * 5,
            tcpPort: addresses[0].tcpPort
        )
    }

    /// Takes device `index` off the LAN (its sockets close; its cloud connection stays), to test
    /// how the app behaves when the LAN path goes.
    public func stopLAN(_ index: Int) async {
        let server = lanServers.withLock { servers -> TaskScope.Handle? in
            defer { servers[index] = nil }
            return servers[index]
        }
        server?.cancel()
        await server?.wait()
    }

    /// Puts device `index` back on the LAN, on the address and ports it had (tried for a few
    /// seconds if a reconnecting client holds one for a moment).
    public func startLAN(_ index: Int) async throws {
        guard lanServers.withLock({ $0[index] == nil }) else { return }
        let address = addresses[index]
        let server = Self.server(devices[index], host: address.host, ports: (address.udpPort, address.tcpPort), bindRetry: .seconds(8), logger: logger)
        let handle = scope.start { try? await server.run() }
        lanServers.withLock { $0[index] = handle }
        _ = try await server.addresses()
    }

    private static func server(_ device: VirtualDevice, host: String, ports: (Int, Int), bindRetry: Duration = .zero, logger: Logger) -> LANDeviceServer {
        LANDeviceServer(
            device: device,
            configuration: LANDeviceConfiguration(host: host, udpPort: ports.0, tcpPort: ports.1, announcementTarget: .some(nil), bindRetry: bindRetry),
            logger: logger
        )
    }

}
