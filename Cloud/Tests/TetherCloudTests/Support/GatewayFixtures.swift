import Foundation
import HTTPTypes
import HummingbirdWSClient
import Logging
import NIOCore
import NIOWebSocket
import Synchronization
import Testing
import TetherAlink
import TetherCloudProtocol
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

    /// `owner` shares `did` with `guest`, who accepts: the invitation, whose id revokes it.
    static func shareAccepted(_ cloud: CloudHarness, did: String, from owner: UserSession, to guest: UserSession) async throws -> SharingCreatedBody {
        let invitation = try SharingCreatedBody(
            json: try #require(
                try await cloud.call(.post, "/app/sharing", token: owner.token, json: SharingCreateBody(kind: .user, did: did, receiver: .uid(guest.uid)).json)
                    .json))
        #expect(try await cloud.call(.put, "/app/sharing/\(invitation.id)?status=1", token: guest.token).status == .ok)
        return invitation
    }

    /// The lamp product, one device of it, and a user bound to that device.
    static func boundLamp(_ cloud: CloudHarness) async throws -> (product: Administration.CreatedProduct, device: Administration.CreatedDevice, user: UserSession) {
        let product = try await lampProduct(cloud)
        let device = try await self.device(cloud, product: product)
        return (product, device, try await user(cloud, boundTo: [device]))
    }

    /// Who a rights test tries: a stranger, a guest of `device` (inserted as sharing will create
    /// one) and a user once bound to it who logged out.
    static func outsiders(
        _ cloud: CloudHarness, of device: Administration.CreatedDevice
    ) async throws -> (stranger: UserSession, guest: UserSession, loggedOut: UserSession) {
        let stranger = try await cloud.register("stranger\(UInt32.random(in: 0...UInt32.max))")
        let guest = try await cloud.register("guest\(UInt32.random(in: 0...UInt32.max))")
        try await cloud.database.query(
            "INSERT INTO bindings (uid, did, role, created_at) VALUES ($1, $2, 'guest', 0)", .text(guest.uid), .text(device.did))
        let leaving = try await user(cloud, boundTo: [device])
        #expect(try await cloud.call(.post, "/app/logout", token: leaving.token).status == .ok)
        return (stranger, guest, leaving)
    }

    /// The payloads (hex) of the device's traffic log of the last minute, oldest first.
    static func loggedPayloads(_ cloud: CloudHarness, _ did: String, token: String) async throws -> [String] {
        let now = Clock.unixNow()
        let log = try await cloud.call(.get, "/app/devices/\(did)/raw_data?type=cmd&start_time=\(now - 60)&end_time=\(now + 1)&sort=asc&limit=100", token: token)
        return log["objects"]?.arrayValue?.compactMap { $0["payload_bin"]?.stringValue } ?? []
    }

    /// A reply normally takes milliseconds; the bound is generous because CI runs the whole suite
    /// at once on two cores, and a failing wait only costs time when something is already wrong.
    static func configuration(_ cloud: CloudHarness, _ device: Administration.CreatedDevice, secret: String? = nil, now: (@Sendable () -> Int64)? = nil) throws -> AlinkDeviceConfiguration {
        AlinkDeviceConfiguration(
            host: "127.0.0.1", port: cloud.mqttPort!,
            device: try AlinkDeviceIdentity(productKey: device.productKey, deviceName: device.deviceName),
            deviceSecret: secret ?? device.deviceSecret, replyTimeout: .seconds(10),
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
    static func nextDownlink(_ downlinks: AsyncStream<AlinkDownlink>, timeout: Duration = .seconds(15)) async throws -> AlinkDownlink {
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
    static func waitForCommand(_ cloud: CloudHarness, _ id: Int64, state: CommandState, timeout: Duration = .seconds(15)) async throws -> CommandRecord {
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
    static func waitUntil(timeout: Duration = .seconds(15), _ what: String, _ condition: () async throws -> Bool) async throws {
        let deadline = ContinuousClock.now + timeout
        while try await !condition() {
            guard ContinuousClock.now < deadline else { throw TestFailure("timed out waiting until \(what)") }
            try await Task.sleep(for: .milliseconds(20))
        }
    }
}

/// An app on the WebSocket M2M API: sends typed frames (``M2MFrame``), and waits for the ones
/// it expects.
final class M2MTestClient: Sendable {
    private let outbound: WebSocketOutboundWriter
    private let received = Mutex<[M2MFrame]>([])
    private let ended = Mutex(false)

    init(outbound: WebSocketOutboundWriter) { self.outbound = outbound }

    func send(_ frame: M2MFrame) async throws {
        try await outbound.write(.text(frame.encoded()))
    }

    /// Text that is not a frame of this protocol, as a broken or hostile app would send.
    func send(text: String) async throws {
        try await outbound.write(.text(text))
    }

    fileprivate func append(_ frame: M2MFrame) { received.withLock { $0.append(frame) } }

    /// The first frame received (and not taken yet) that `extract` takes, waiting up to `timeout`.
    func next<Value: Sendable>(_ description: String, timeout: Duration = .seconds(15), _ extract: @Sendable (M2MFrame) -> Value?) async throws -> Value {
        let deadline = ContinuousClock.now + timeout
        while true {
            let found = received.withLock { frames -> Value? in
                for (index, frame) in frames.enumerated() {
                    if let value = extract(frame) {
                        frames.remove(at: index)
                        return value
                    }
                }
                return nil
            }
            if let found { return found }
            guard ContinuousClock.now < deadline else {
                throw TestFailure("no \(description) within \(timeout); received \(received.withLock { $0.map { $0.encoded() } })")
            }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    func onlineStatus(online: Bool? = nil, timeout: Duration = .seconds(15)) async throws -> M2MOnlineStatus {
        try await next("s2c_online_status online=\(online.map(String.init) ?? "any")", timeout: timeout) { frame in
            if case .onlineStatus(let status) = frame, online == nil || status.online == online { status } else { nil }
        }
    }

    /// A notification answering `req_sn` `answering` (any number for `.any`, none for `.report`).
    func notification(_ kind: NotificationKind = .any, timeout: Duration = .seconds(15), where matches: @escaping @Sendable (M2MNotification) -> Bool = { _ in true }) async throws -> M2MNotification {
        try await next("s2c_noti \(kind)", timeout: timeout) { frame in
            guard case .notification(let notification) = frame, matches(notification) else { return nil }
            switch kind {
            case .any: return notification
            case .report: return notification.answering == nil ? notification : nil
            case .answering(let number): return notification.answering == .number(number) ? notification : nil
            }
        }
    }

    enum NotificationKind: Sendable, CustomStringConvertible {
        case any
        /// Pushed by the cloud on its own (no `res_sn`).
        case report
        case answering(Int64)
        var description: String {
            switch self {
            case .any: "(any)"
            case .report: "(report)"
            case .answering(let number): "res_sn \(number)"
            }
        }
    }

    /// An `s2c_invalid_msg`, answering `req_sn` `answering` when given.
    func invalid(answering: Int64? = nil, code: Int? = nil, timeout: Duration = .seconds(15)) async throws -> M2MInvalid {
        try await next("s2c_invalid_msg", timeout: timeout) { frame in
            guard case .invalid(let invalid) = frame else { return nil }
            if let answering, invalid.sequence != .number(answering) { return nil }
            if let code, invalid.errorCode != code { return nil }
            return invalid
        }
    }

    func writeAcknowledgement(answering: Int64? = nil) async throws -> M2MWriteAcknowledgement {
        try await next("s2c_ack") { frame in
            guard case .writeAcknowledged(let acknowledgement) = frame else { return nil }
            return answering == nil || acknowledgement.sequence == .number(answering!) ? acknowledgement : nil
        }
    }

    func subscribeResult() async throws -> M2MSubscribeResult {
        try await next("subscribe_res") { if case .subscribeResult(let result) = $0 { result } else { nil } }
    }

    func loginResult() async throws -> M2MLoginResult {
        try await next("login_res") { if case .loginResult(let result) = $0 { result } else { nil } }
    }

    func bindingChanged(bound: Bool? = nil) async throws -> (did: String, bound: Bool) {
        try await next("s2c_binding_changed") { frame in
            if case .bindingChanged(let did, let isBound) = frame, bound == nil || isBound == bound { (did, isBound) } else { nil }
        }
    }

    func rawReport() async throws -> M2MRaw {
        try await next("s2c_raw") { if case .rawReport(let raw) = $0 { raw } else { nil } }
    }

    func event() async throws -> M2MEvent {
        try await next("s2c_event") { if case .event(let event) = $0 { event } else { nil } }
    }

    func pong() async throws {
        try await next("pong") { $0 == .pong ? () : nil }
    }

    /// Frames received so far and not taken, of `command`.
    func pending(_ command: String) -> [M2MFrame] { received.withLock { $0.filter { $0.command == command } } }

    /// Waits until the server closes the connection; a failure after `timeout`.
    func waitUntilClosed(timeout: Duration = .seconds(15)) async throws {
        try await GatewayFixtures.waitUntil(timeout: timeout, "the server closes the WebSocket") { ended.withLock { $0 } }
    }

    var isClosed: Bool { ended.withLock { $0 } }

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
                        try await client.send(.login(M2MLogin(appID: appID, uid: session.uid, token: session.token, heartbeatInterval: 180, autoSubscribe: autoSubscribe)))
                        let login = try await client.loginResult()
                        guard login.success else { throw TestFailure("login refused: \(login)") }
                        let result = try await body(client)
                        outcome.value.withLock { $0 = result }
                    } catch {
                        outcome.error.withLock { $0 = error }
                    }
                    try? await outbound.close(.normalClosure, reason: nil)
                }
                do {
                    for try await message in inbound.messages(maxSize: 1 << 20) {
                        guard case .text(let text) = message else { continue }
                        do {
                            client.append(try M2MFrame(decoding: text, maximumLength: 1 << 20))
                        } catch {
                            Issue.record("the cloud sent a frame the protocol cannot read: \(error): \(text)")
                        }
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
