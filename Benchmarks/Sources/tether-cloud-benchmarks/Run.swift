import ArgumentParser
import AsyncHTTPClient
import Foundation
import Histogram
import HummingbirdWSClient
import Logging
import NIOCore
import NIOHTTP1
import NIOWebSocket
import Synchronization
import TetherAlink
import TetherCloudProtocol
import TetherCore
import TetherMQTT

/// Measures a running cloud: the app's write round trip over the WebSocket (write → device →
/// set_reply and report → s2c_noti with res_sn), property posts per second stored and answered,
/// and the server's resident memory per connected, idle device.
struct Run: AsyncParsableCommand {
    @Option(help: "The file `setup` wrote.") var setup: String
    @Option(help: "The cloud's HTTP port.") var http: Int
    @Option(help: "The cloud's MQTT port.") var mqtt: Int
    @Option(help: "The MQTT port the write round trip's and the RRPC's device connects to (default --mqtt; another node's: the calls cross nodes).")
    var roundTripMqtt: Int?
    @Option(help: "The cloud's process id, for its memory.") var serverPid: Int32
    @Option(help: "Write round trips to time.") var roundTrips = 500
    @Option(help: "Round trips per second.") var rate = 50
    @Option(help: "Devices posting properties as fast as their replies come back.") var posters = 1000
    @Option(help: "Seconds of posting.") var duration: Double = 10
    @Option(help: "Idle devices for the memory measurement.") var idle = 10_000
    @Option(help: "IoT channel invoke round trips (TetherChannel.invoke of a property post, answered by the gateway).") var invokes = 500
    @Option(help: "RRPC round trips (POST /app/devices/{did}/rrpc, answered by a device).") var rrpcs = 300
    @Option(help: "Devices downloading the firmware package at once (after one alone).") var otaDevices = 100
    @Flag(help: "Print one JSON object.") var json = false

    func run() async throws {
        let document = try JSONValue.parse(Array(try Data(contentsOf: URL(fileURLWithPath: setup))))
        let devices = try (document["devices"]?.arrayValue ?? []).map { try BenchDevice($0) }
        let needed = max(posters + 1, idle, 3)
        guard devices.count >= needed else { throw ValidationError("setup made \(devices.count) devices; this run needs \(needed)") }
        var logger = Logger(label: "bench")
        logger.logLevel = .error
        let appID = document["appId"]?.stringValue ?? ""

        // A count of 0 leaves a measurement out (bench-scale.sh wants only the round trip).
        let empty = Histogram<UInt64>(highestTrackableValue: 60_000_000, numberOfSignificantValueDigits: .three)
        let (roundTrip, unanswered) = roundTrips > 0 ? try await measureRoundTrips(appID: appID, device: devices[0], logger: logger) : (empty, 0)
        let rrpc: Histogram<UInt64> = rrpcs > 0 ? try await measureRRPC(appID: appID, device: devices[1], logger: logger) : empty
        let invoke: Histogram<UInt64> = invokes > 0 ? try await measureInvokes(device: devices[2], logger: logger) : empty
        let posting: (stored: Int, errors: Int, latency: Histogram<UInt64>) = posters > 0 ? try await Self.measurePosts(Array(devices[1...posters]), mqtt: mqtt, duration: duration, logger: logger) : (0, 0, empty)
        let memory: (devices: Int, before: Int64, after: Int64) = idle > 0 ? try await measureMemory(Array(devices.prefix(idle)), logger: logger) : (0, 0, 0)
        let ota: JSONValue = otaDevices > 0 ? try await measureDownloads(document["firmware"], logger: logger) : .null

        let report: JSONValue = [
            "writeRoundTripMicroseconds": ["p50": .int(Int64(roundTrip.valueAtPercentile(50))), "p99": .int(Int64(roundTrip.valueAtPercentile(99))), "max": .int(Int64(roundTrip.max)), "count": .int(Int64(roundTrip.totalCount)), "unanswered": .int(Int64(unanswered))],
            "rrpcRoundTripMicroseconds": Self.summary(rrpc),
            "invokeRoundTripMicroseconds": Self.summary(invoke),
            "posts": ["devices": .int(Int64(posters)), "seconds": .double(duration), "stored": .int(Int64(posting.stored)), "perSecond": .double(Double(posting.stored) / duration),
                      "errors": .int(Int64(posting.errors)), "replyP50Microseconds": .int(Int64(posting.latency.valueAtPercentile(50))), "replyP99Microseconds": .int(Int64(posting.latency.valueAtPercentile(99)))],
            "memory": ["devices": .int(Int64(memory.devices)), "serverRSSBeforeKiB": .int(memory.before), "serverRSSAfterKiB": .int(memory.after),
                       "perDeviceKiB": .double(Double(memory.after - memory.before) / Double(max(memory.devices, 1)))],
            "otaDownload": ota,
        ]
        if json {
            print(report.serialized(pretty: true))
        } else {
            print(report.serialized(pretty: true))
        }
    }

    // MARK: Write round trip

    private struct Unanswered: Error {
        static let timedOut = Unanswered()
    }

    /// The write round trips, and how many writes got no answer within 5 s.
    private func measureRoundTrips(appID: String, device: BenchDevice, logger: Logger) async throws -> (Histogram<UInt64>, Int) {
        let unanswered = Locked(0)
        let session = try await registerAndBind(appID: appID, device: device)
        let histogram = Locked(Histogram<UInt64>(highestTrackableValue: 60_000_000, numberOfSignificantValueDigits: .three))
        try await AlinkDeviceClient.withClient(configuration: device.configuration(port: roundTripMqtt ?? mqtt), logger: logger) { client in
            let downlinks = client.downlinks()
            let responder = Task {
                for await downlink in downlinks {
                    guard let request = downlink.request, case .propertySet = downlink.topic.topic else { continue }
                    try? await client.reply(request.reply(), to: downlink)
                    _ = try? await client.postProperties(request.params)
                }
            }
            defer { responder.cancel() }
            let waiting = Locked<[Int: (ContinuousClock.Instant, AsyncPromise<Void, Unanswered>)]>([:])
            try await WebSocketClient.connect(url: "ws://127.0.0.1:\(http)/ws/app/v1", logger: logger) { inbound, outbound, _ in
                try await outbound.write(.text(M2MFrame.login(M2MLogin(appID: appID, uid: session.uid, token: session.token, autoSubscribe: true)).encoded()))
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask {
                        // Wait for the subscription, then write at a fixed rate.
                        try await Task.sleep(for: .milliseconds(500))
                        for sn in 1...roundTrips {
                            let started = ContinuousClock.now
                            let answered = AsyncPromise<Void, Unanswered>()
                            waiting.withLock { $0[sn] = (started, answered) }
                            try await outbound.write(.text(M2MFrame.write(M2MWrite(
                                sequence: .number(Int64(sn)), did: device.did, attrs: ["Brightness": .int(Int64(sn % 101))]
                            )).encoded()))
                            // A write that is never answered is counted, not waited for forever.
                            if case .failure = await answered.result(within: .seconds(5), otherwise: { .failure(.timedOut) }) {
                                waiting.withLock { _ = $0.removeValue(forKey: sn) }
                                unanswered.withLock { $0 += 1 }
                            }
                            let pause = Duration.seconds(1.0 / Double(rate)) - (ContinuousClock.now - started)
                            if pause > .zero { try await Task.sleep(for: pause) }
                        }
                        try await outbound.close(.normalClosure, reason: nil)
                    }
                    for try await message in inbound.messages(maxSize: 1 << 20) {
                        guard case .text(let text) = message, case .notification(let notification)? = try? M2MFrame(decoding: text, maximumLength: 1 << 20),
                              let sn = notification.answering?.number,
                              let (started, answered) = waiting.withLock({ $0.removeValue(forKey: Int(sn)) })
                        else { continue }
                        let elapsed = ContinuousClock.now - started
                        histogram.withLock { _ = $0.record(UInt64(elapsed.components.seconds * 1_000_000 + elapsed.components.attoseconds / 1_000_000_000_000)) }
                        answered.resolve(.success(()))
                    }
                    try await group.waitForAll()
                }
            }
        }
        return (histogram.withLock { $0 }, unanswered.withLock { $0 })
    }

    private static func summary(_ histogram: Histogram<UInt64>) -> JSONValue {
        [
            "p50": .int(Int64(histogram.valueAtPercentile(50))), "p99": .int(Int64(histogram.valueAtPercentile(99))), "max": .int(Int64(histogram.max)),
            "count": .int(Int64(histogram.totalCount)),
        ]
    }

    static func microseconds(since start: ContinuousClock.Instant) -> UInt64 {
        let elapsed = ContinuousClock.now - start
        return UInt64(elapsed.components.seconds * 1_000_000 + elapsed.components.attoseconds / 1_000_000_000_000)
    }

    // MARK: RRPC and channel round trips

    /// An app's RRPC call through the REST API to a device that answers at once, one at a time.
    private func measureRRPC(appID: String, device: BenchDevice, logger: Logger) async throws -> Histogram<UInt64> {
        let session = try await registerAndBind(appID: appID, device: device)
        var histogram = Histogram<UInt64>(highestTrackableValue: 60_000_000, numberOfSignificantValueDigits: .three)
        try await AlinkDeviceClient.withClient(configuration: device.configuration(port: roundTripMqtt ?? mqtt), logger: logger) { client in
            let downlinks = client.downlinks()
            let responder = Task {
                for await downlink in downlinks {
                    guard case .rrpcRequest = downlink.topic.topic else { continue }
                    try? await client.reply(payload: downlink.payload, to: downlink)
                }
            }
            defer { responder.cancel() }
            let url = "http://127.0.0.1:\(http)/app/devices/\(device.did)/rrpc"
            let headers = ["X-Gizwits-Application-Id": appID, "X-Gizwits-User-token": session.token]
            let body = RRPCCallBody(payload: Array("ping".utf8), timeoutMs: 5_000).json
            for _ in 0..<rrpcs {
                let started = ContinuousClock.now
                let answer = try await Self.post(url, body, headers: headers)
                guard answer["payload_base64"] != nil else { throw ValidationError("RRPC failed: \(answer.serialized())") }
                _ = histogram.record(Self.microseconds(since: started))
            }
        }
        return histogram
    }

    /// The IoT channel's request/reply through the gateway: `invoke` of a property post, matched
    /// with its `_reply` by id, one at a time.
    private func measureInvokes(device: BenchDevice, logger: Logger) async throws -> Histogram<UInt64> {
        var histogram = Histogram<UInt64>(highestTrackableValue: 60_000_000, numberOfSignificantValueDigits: .three)
        let configuration = TetherChannelConfiguration(host: "127.0.0.1", port: mqtt, device: device.identity, deviceSecret: device.secret, reconnect: nil)
        let topic = "/sys/\(device.identity.productKey)/\(device.identity.deviceName)/thing/event/property/post"
        try await TetherChannel.withChannel(configuration: configuration, logger: logger) { channel in
            for index in 0..<invokes {
                let started = ContinuousClock.now
                _ = try await channel.invoke(topic: topic, params: ["Brightness": .int(Int64(index % 101))])
                _ = histogram.record(Self.microseconds(since: started))
            }
        }
        return histogram
    }

    private func registerAndBind(appID: String, device: BenchDevice) async throws -> (uid: String, token: String) {
        try await Self.registerAndBind(appID: appID, devices: [device], http: http)
    }

    /// A new user bound to `devices`.
    static func registerAndBind(appID: String, devices: [BenchDevice], http: Int) async throws -> (uid: String, token: String) {
        let base = "http://127.0.0.1:\(http)"
        let user: JSONValue = ["username": .string("bench\(UInt32.random(in: 0...UInt32.max))"), "password": "Passw0rd!"]
        let registered = try await Self.post(base + "/app/users", user, headers: ["X-Gizwits-Application-Id": appID])
        guard let uid = registered["uid"]?.stringValue, let token = registered["token"]?.stringValue else {
            throw ValidationError("registration failed: \(registered.serialized())")
        }
        let list = JSONValue.array(devices.map { ["did": .string($0.did), "passcode": .string($0.passcode)] })
        let bound = try await Self.post(base + "/app/bindings", ["devices": list], headers: ["X-Gizwits-Application-Id": appID, "X-Gizwits-User-token": token])
        guard bound["success"]?.arrayValue?.count == devices.count else { throw ValidationError("binding failed: \(bound.serialized())") }
        return (uid, token)
    }

    static func post(_ url: String, _ body: JSONValue, headers: [String: String]) async throws -> JSONValue {
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        request.body = .bytes(ByteBuffer(string: body.serialized()))
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
        return try JSONValue.parse(Array(try await response.body.collect(upTo: 1 << 20).readableBytesView))
    }

    // MARK: OTA downloads

    /// The firmware package fetched by its signed URL and verified (SHA-256) the way devices do
    /// it: one device alone, then `otaDevices` at once. MB/s counts package bytes (10^6).
    private func measureDownloads(_ firmware: JSONValue?, logger: Logger) async throws -> JSONValue {
        guard let firmware, case .int(let size)? = firmware["size"], let sha256 = firmware["sha256"]?.stringValue,
            let target = firmware["target"]?.stringValue
        else { return .null }
        let notice = FirmwareUpgradeNotice(id: "1", url: "http://127.0.0.1:\(http)\(target)", version: "bench-1", size: size, signMethod: .sha256, sign: sha256)
        let downloader = FirmwareDownloader(timeout: .seconds(60), logger: logger)
        let alone = ContinuousClock.now
        try await downloader.download(notice) { _ in }
        let aloneSeconds = Self.seconds(since: alone)
        var perDevice = Histogram<UInt64>(highestTrackableValue: 600_000_000, numberOfSignificantValueDigits: .three)
        let started = ContinuousClock.now
        try await withThrowingTaskGroup(of: UInt64.self) { group in
            for _ in 0..<otaDevices {
                group.addTask {
                    let begun = ContinuousClock.now
                    try await downloader.download(notice) { _ in }
                    return Self.microseconds(since: begun)
                }
            }
            for try await microseconds in group { _ = perDevice.record(microseconds) }
        }
        let allSeconds = Self.seconds(since: started)
        return [
            "packageBytes": .int(size), "oneDeviceMBps": .double(Double(size) / aloneSeconds / 1e6), "devices": .int(Int64(otaDevices)),
            "aggregateMBps": .double(Double(size) * Double(otaDevices) / allSeconds / 1e6),
            "perDeviceSecondsP50": .double(Double(perDevice.valueAtPercentile(50)) / 1e6),
            "perDeviceSecondsP99": .double(Double(perDevice.valueAtPercentile(99)) / 1e6),
        ]
    }

    static func seconds(since start: ContinuousClock.Instant) -> Double {
        let elapsed = ContinuousClock.now - start
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }

    // MARK: Posts per second

    /// Devices posting as fast as their replies come back, for `duration` seconds from when all
    /// are connected: the posts answered 200, the others, and the reply latency.
    static func measurePosts(
        _ devices: [BenchDevice], mqtt: Int, duration: Double, logger: Logger
    ) async throws -> (stored: Int, errors: Int, latency: Histogram<UInt64>) {
        let stored = Locked(0)
        let errors = Locked(0)
        let histogram = Locked(Histogram<UInt64>(highestTrackableValue: 60_000_000, numberOfSignificantValueDigits: .three))
        let connected = Locked(0)
        let start = AsyncPromise<ContinuousClock.Instant, Never>()
        let deadline = Locked<ContinuousClock.Instant?>(nil)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for device in devices {
                group.addTask {
                    try await AlinkDeviceClient.withClient(configuration: device.configuration(port: mqtt, replyTimeout: .seconds(30)), logger: logger) { client in
                        if connected.withLock({ $0 += 1; return $0 }) == devices.count {
                            let now = ContinuousClock.now
                            deadline.withLock { $0 = now + .seconds(duration) }
                            start.resolve(.success(now))
                        }
                        _ = await start.result(ifCancelled: { .success(ContinuousClock.now) })
                        var value: Int64 = 0
                        while let end = deadline.withLock({ $0 }), ContinuousClock.now < end {
                            value = (value + 1) % 101
                            let sent = ContinuousClock.now
                            do {
                                let reply = try await client.postProperties(["Brightness": .int(value)])
                                guard ContinuousClock.now <= end else { break }
                                if reply.isSuccess {
                                    stored.withLock { $0 += 1 }
                                    let elapsed = ContinuousClock.now - sent
                                    histogram.withLock { _ = $0.record(UInt64(elapsed.components.seconds * 1_000_000 + elapsed.components.attoseconds / 1_000_000_000_000)) }
                                } else {
                                    errors.withLock { $0 += 1 }
                                }
                            } catch {
                                errors.withLock { $0 += 1 }
                            }
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        return (stored.withLock { $0 }, errors.withLock { $0 }, histogram.withLock { $0 })
    }

    // MARK: Memory per device

    private func measureMemory(_ devices: [BenchDevice], logger: Logger) async throws -> (devices: Int, before: Int64, after: Int64) {
        try await Task.sleep(for: .seconds(2))
        let before = Self.residentKiB(serverPid)
        let connected = Locked(0)
        let release = AsyncPromise<Void, Never>()
        let mqtt = self.mqtt
        var after: Int64 = 0
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (index, device) in devices.enumerated() {
                // Connect in waves, as a fleet coming online would, not all in one burst.
                if index % 200 == 199 { try await Task.sleep(for: .milliseconds(50)) }
                group.addTask {
                    try await MQTTClient.withClient(configuration: device.idleConfiguration(port: mqtt), logger: logger) { _ in
                        connected.withLock { $0 += 1 }
                        _ = await release.result(ifCancelled: { .success(()) })
                    }
                }
            }
            while connected.withLock({ $0 }) < devices.count { try await Task.sleep(for: .milliseconds(100)) }
            try await Task.sleep(for: .seconds(3))
            after = Self.residentKiB(serverPid)
            release.resolve(.success(()))
            try await group.waitForAll()
        }
        return (devices.count, before, after)
    }

    static func residentKiB(_ pid: Int32) -> Int64 {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") })
        else { return 0 }
        return Int64(line.split(separator: " ").dropFirst().first.map(String.init) ?? "0") ?? 0
    }
}

/// One device of the setup file.
struct BenchDevice: Sendable {
    var did: String
    var passcode: String
    var identity: AlinkDeviceIdentity
    var secret: String

    init(_ json: JSONValue) throws {
        did = json["did"]?.stringValue ?? ""
        passcode = json["passcode"]?.stringValue ?? ""
        identity = try AlinkDeviceIdentity(productKey: json["productKey"]?.stringValue ?? "", deviceName: json["deviceName"]?.stringValue ?? "")
        secret = json["deviceSecret"]?.stringValue ?? ""
    }

    func configuration(port: Int, replyTimeout: Duration = .seconds(10)) -> AlinkDeviceConfiguration {
        AlinkDeviceConfiguration(host: "127.0.0.1", port: port, device: identity, deviceSecret: secret, keepAlive: 1200, replyTimeout: replyTimeout, reconnect: nil)
    }

    /// A signed connection that only keeps its session: no subscriptions, no traffic.
    func idleConfiguration(port: Int) -> MQTTClientConfiguration {
        var configuration = self.configuration(port: port).mqtt
        configuration.connectTimeout = .seconds(60)
        return configuration
    }
}

/// A value shared between tasks.
final class Locked<Value: Sendable>: Sendable {
    private let value: Mutex<Value>
    init(_ value: Value) { self.value = Mutex(value) }
    func withLock<Result>(_ body: (inout Value) -> Result) -> Result { value.withLock { body(&$0) } }
}
