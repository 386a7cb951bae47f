import Foundation
import HTTPTypes
import HummingbirdWSClient
import Logging
import NIOCore
import NIOWebSocket
import Synchronization
import Testing
import TetherAlink
import TetherCore
import TetherMQTT
@testable import TetherCloud

/// A lamp product (the Aliyun TSL example), devices of it with their own secrets, users bound
/// to them, and the clients that play devices (Alink over MQTT) and apps (WebSocket M2M).
enum GatewayFixtures {
    static let lampURL = DeviceFixtures.petHouseURL.deletingLastPathComponent().appendingPathComponent("lamp-tsl.json")

    static func lampProduct(_ cloud: CloudHarness) async throws -> Administration.CreatedProduct {
        try await cloud.admin.createProduct(name: "Lamp", modelFile: Array(try Data(contentsOf: lampURL)), format: .tsl)
    }

    static func device(_ cloud: CloudHarness, product: Administration.CreatedProduct, name: String = "lamp-\(UInt32.random(in: 0...UInt32.max))") async throws -> Administration.CreatedDevice {
        try await cloud.admin.createDevice(productKey: product.productKey, name: name, mac: nil)
    }

    /// A new user bound to `device` by did and passcode.
    static func user(_ cloud: CloudHarness, boundTo devices: [Administration.CreatedDevice], name: String = "user\(UInt32.random(in: 0...UInt32.max))") async throws -> UserSession {
        let session = try await cloud.register(name)
        let answer = try await cloud.call(.post, "/app/bindings", token: session.token, json: [
            "devices": .array(devices.map { ["did": .string($0.did), "passcode": .string($0.passcode)] }),
        ])
        #expect(answer["success"]?.arrayValue?.count == devices.count, "\(answer.text)")
        return session
    }

    /// The lamp product, one device of it, and a user bound to that device.
    static func boundLamp(_ cloud: CloudHarness) async throws -> (product: Administration.CreatedProduct, device: Administration.CreatedDevice, user: UserSession) {
        let product = try await lampProduct(cloud)
        let device = try await self.device(cloud, product: product)
        return (product, device, try await user(cloud, boundTo: [device]))
    }

    static func configuration(_ cloud: CloudHarness, _ device: Administration.CreatedDevice, secret: String? = nil, now: (@Sendable () -> Int64)? = nil) throws -> AlinkDeviceConfiguration {
        AlinkDeviceConfiguration(
            host: "127.0.0.1", port: cloud.mqttPort!,
            device: try AlinkDeviceIdentity(productKey: device.productKey, deviceName: device.deviceName),
            deviceSecret: secret ?? device.deviceSecret, replyTimeout: .seconds(5),
            reconnect: nil, now: now ?? { AlinkClock.now() }
        )
    }

    static let quietLogger: Logger = {
        var logger = Logger(label: "tether-cloud-tests.device")
        logger.logLevel = .critical
        return logger
    }()

    /// Runs `body` with a connected device.
    static func withDevice<Result: Sendable>(_ cloud: CloudHarness, _ device: Administration.CreatedDevice, _ body: (AlinkDeviceClient) async throws -> Result) async throws -> Result {
        try await AlinkDeviceClient.withClient(configuration: configuration(cloud, device), logger: quietLogger, body)
    }

    /// The next downlink of `device`, or a failure after `timeout`.
    static func nextDownlink(_ downlinks: AsyncStream<AlinkDownlink>, timeout: Duration = .seconds(5)) async throws -> AlinkDownlink {
        try await withThrowingTaskGroup(of: AlinkDownlink?.self) { group in
            group.addTask {
                for await downlink in downlinks { return downlink }
                return nil
            }
            group.addTask {
                try await Task.sleep(for: timeout)
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let downlink = first else { throw TestFailure("no downlink within \(timeout)") }
            return downlink
        }
    }

    /// Polls the ledger until command `id` is in `state`.
    static func waitForCommand(_ cloud: CloudHarness, _ id: Int64, state: CommandState, timeout: Duration = .seconds(5)) async throws -> CommandRecord {
        let deadline = ContinuousClock.now + timeout
        let ledger = CommandLedger(database: cloud.database)
        while true {
            if let record = try await ledger.find(id), record.state == state { return record }
            guard ContinuousClock.now < deadline else {
                throw TestFailure("command \(id) is \(try await ledger.find(id)?.state.rawValue ?? "missing"), not \(state.rawValue)")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// Polls until `condition` holds.
    static func waitUntil(timeout: Duration = .seconds(5), _ what: String, _ condition: () async throws -> Bool) async throws {
        let deadline = ContinuousClock.now + timeout
        while try await !condition() {
            guard ContinuousClock.now < deadline else { throw TestFailure("timed out waiting until \(what)") }
            try await Task.sleep(for: .milliseconds(20))
        }
    }
}

/// An app on the WebSocket M2M API: sends frames, and waits for the frames it expects.
final class M2MTestClient: Sendable {
    private let outbound: WebSocketOutboundWriter
    private let received = Mutex<[JSONValue]>([])
    private let ended = Mutex(false)

    init(outbound: WebSocketOutboundWriter) { self.outbound = outbound }

    func send(_ frame: JSONValue) async throws {
        try await outbound.write(.text(frame.serialized()))
    }

    fileprivate func append(_ frame: JSONValue) { received.withLock { $0.append(frame) } }

    /// The first frame received (and not taken yet) that matches, waiting up to `timeout`.
    func nextFrame(timeout: Duration = .seconds(5), _ description: String = "", where matches: @Sendable (JSONValue) -> Bool) async throws -> JSONValue {
        let deadline = ContinuousClock.now + timeout
        while true {
            let found = received.withLock { frames -> JSONValue? in
                guard let index = frames.firstIndex(where: matches) else { return nil }
                return frames.remove(at: index)
            }
            if let found { return found }
            guard ContinuousClock.now < deadline else {
                throw TestFailure("no \(description) frame within \(timeout); received \(received.withLock { $0.map { $0.serialized() } })")
            }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    func next(_ cmd: String, timeout: Duration = .seconds(5), where matches: @escaping @Sendable (JSONValue) -> Bool = { _ in true }) async throws -> JSONValue {
        try await nextFrame(timeout: timeout, cmd) { $0["cmd"] == .string(cmd) && matches($0) }
    }

    /// Waits until the server closes the connection; a failure after `timeout`.
    func waitUntilClosed(timeout: Duration = .seconds(5)) async throws {
        try await GatewayFixtures.waitUntil(timeout: timeout, "the server closes the WebSocket") { ended.withLock { $0 } }
    }

    var isClosed: Bool { ended.withLock { $0 } }

    /// Frames of `cmd` received so far and not taken.
    func pending(_ cmd: String) -> [JSONValue] { received.withLock { $0.filter { $0["cmd"] == .string(cmd) } } }

    /// Connects to the cloud's M2M endpoint, logs in as `session`, and runs `body`.
    static func with<Result: Sendable>(
        _ cloud: CloudHarness, port: Int? = nil, session: UserSession, autoSubscribe: Bool = false,
        _ body: @escaping @Sendable (M2MTestClient) async throws -> Result
    ) async throws -> Result {
        let outcome = Outcome<Result>()
        let appID = cloud.app.appID
        try await WebSocketClient.connect(url: "ws://127.0.0.1:\(port ?? cloud.httpPort)/ws/app/v1", logger: GatewayFixtures.quietLogger) { inbound, outbound, _ in
            let client = M2MTestClient(outbound: outbound)
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    do {
                        try await client.send(["cmd": "login_req", "data": [
                            "appid": .string(appID), "uid": .string(session.uid), "token": .string(session.token),
                            "p0_type": "attrs_v4", "heartbeat_interval": 180, "auto_subscribe": .bool(autoSubscribe),
                        ]])
                        let login = try await client.next("login_res")
                        guard login["data"]?["success"] == true else { throw TestFailure("login refused: \(login.serialized())") }
                        let result = try await body(client)
                        outcome.value.withLock { $0 = result }
                    } catch {
                        outcome.error.withLock { $0 = error }
                    }
                    try? await outbound.close(.normalClosure, reason: nil)
                }
                do {
                    for try await message in inbound.messages(maxSize: 1 << 20) {
                        if case .text(let text) = message, let frame = try? JSONValue.parse(text) { client.append(frame) }
                    }
                } catch {}
                client.ended.withLock { $0 = true }
                try await group.waitForAll()
            }
        }
        if let error = outcome.error.withLock({ $0 }) { throw error }
        guard let result = outcome.value.withLock({ $0 }) else { throw TestFailure("the M2M session ended without a result") }
        return result
    }
}

/// What a concurrent body produced.
final class Outcome<Value: Sendable>: Sendable {
    let value = Mutex<Value?>(nil)
    let error = Mutex<(any Error)?>(nil)
}
