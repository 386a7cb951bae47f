public import TetherAgent
public import TetherCore
import Logging

/// Runs a virtual device on loopback for the duration of `body`, on system-chosen ports.
public func withVirtualDevice<T: Sendable>(
    model: ThingModel,
    host: String = "127.0.0.1",
    bindable: Bool = true,
    idleTimeout: Duration = .seconds(14),
    seed: UInt64 = 1,
    _ body: (LANDeviceServer, LANDeviceAddresses) async throws -> T
) async throws -> T {
    var generator = SplitMix64(seed: seed)
    let identity = DeviceIdentity.random(productKey: model.productKey, using: &generator)
    let device = try VirtualDevice(model: model, identity: identity, bindable: bindable)
    let configuration = LANDeviceConfiguration(host: host, udpPort: 0, tcpPort: 0, announcementTarget: .some(nil), idleTimeout: idleTimeout)
    let server = LANDeviceServer(device: device, configuration: configuration, logger: Logger(label: "test.agent"))
    return try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask {
            try await server.run()
            return nil
        }
        let addresses = try await server.addresses()
        let result = try await body(server, addresses)
        group.cancelAll()
        while try await group.next() != nil {}
        return result
    }
}

/// Waits until `condition` holds, checking every 20 ms, for at most `timeout`.
public func eventually(timeout: Duration = .seconds(5), _ condition: () async throws -> Bool) async rethrows -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if try await condition() { return true }
        try? await Task.sleep(for: .milliseconds(20))
    }
    return try await condition()
}

/// The next element of `stream` that `predicate` accepts, or nil after `timeout`.
public func next<Element: Sendable>(
    _ stream: AsyncStream<Element>,
    timeout: Duration = .seconds(5),
    where predicate: @escaping @Sendable (Element) -> Bool
) async -> Element? {
    await withTaskGroup(of: Element?.self) { group in
        group.addTask {
            for await element in stream where predicate(element) { return element }
            return nil
        }
        group.addTask {
            try? await Task.sleep(for: timeout)
            return nil
        }
        let first = await group.next() ?? nil
        group.cancelAll()
        return first
    }
}
