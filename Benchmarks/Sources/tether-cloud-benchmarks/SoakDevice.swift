import Logging
import NIOCore
import Synchronization
import TetherAlink
import TetherCore
import TetherMQTT

/// One simulated device of the soak: connects to either node (drawn for each connection, as a
/// load balancer would), posts properties, answers property sets, suffers the faults it draws
/// (`SoakDevice+Faults.swift`), and keeps its own account of when the cloud last heard from it.
final class SoakDevice: Sendable {
    let index: Int
    let bench: BenchDevice
    /// The MQTT port of each node.
    let ports: [Int]
    let settings: SoakSettings
    let phase: SoakPhase
    let records: SoakRecords
    /// Answers property sets late.
    let slow: Bool
    let logger: Logger
    let random: Locked<SplitMix64>
    private let postSequence = Atomic<Int>(0)
    /// Releases the half-open connection the device left, if any.
    let ghost = Locked<AsyncPromise<Void, Never>?>(nil)
    private let truth: Locked<Truth>

    /// The device's side of its presence.
    struct Truth: Sendable {
        /// Connections up or being opened: the main one, a twin, a ghost still signing in.
        var live = 0
        /// The main connection is up, since `upSinceMs`.
        var up = false
        var upSinceMs: Int64 = 0
        /// When the cloud last heard from the device as far as the device can know: the end of
        /// its last connection, or the CONNECT of a ghost that has said nothing since.
        var lastContactMs: Int64
        /// What happened to it last, and the last fault it suffered, for the report.
        var story = "not connected yet"
        var lastFault = "none"
    }

    /// How a connection ended, and so how long the device waits before the next.
    enum SessionEnd: Sendable {
        case failed
        case dropped
        case away(Duration)
        case stopped
    }

    init(index: Int, bench: BenchDevice, ports: [Int], settings: SoakSettings, phase: SoakPhase, records: SoakRecords, logger: Logger) {
        self.index = index
        self.bench = bench
        self.ports = ports
        self.settings = settings
        self.phase = phase
        self.records = records
        self.logger = logger
        var generator = SplitMix64(seed: settings.seed &+ UInt64(index) &* 0x9E37_79B9)
        slow = Double.random(in: 0..<1, using: &generator) < settings.slowFraction
        random = Locked(generator)
        truth = Locked(Truth(lastContactMs: SoakSettings.nowMs()))
    }

    var did: String { bench.did }
    var isUp: Bool { truth.withLock { $0.up } }
    var presence: Truth { truth.withLock { $0 } }

    /// Connections the device opens beside its own.
    enum Extra: Sendable {
        /// A duplicate that takes the device's connection over.
        case twin(connected: AsyncPromise<Bool, Never>)
        /// A half-open connection, held until `release`, while the device stays `away`.
        case ghost(node: Int, away: Duration, connected: AsyncPromise<Bool, Never>, release: AsyncPromise<Void, Never>)
    }

    typealias Extras = AsyncStream<Extra>.Continuation

    /// Connects and reconnects until the run stops; twins and ghosts run beside.
    func run() async {
        let (requests, extras) = AsyncStream.makeStream(of: Extra.self)
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                await withTaskGroup(of: Void.self) { running in
                    for await request in requests {
                        running.addTask {
                            switch request {
                            case .twin(let connected):
                                await self.twin(connected: connected)
                            case .ghost(let node, let away, let connected, let release):
                                await SoakGhost.hold(self.configuration(node: node) { _ in }, connected: connected, release: release, logger: self.logger) {
                                    self.ghostSettled(node: node, away: away, signedIn: $0)
                                }
                            }
                        }
                    }
                }
            }
            var failures = 0
            while !phase.isStopping {
                let end = await session(node: drawNode(), extras: extras)
                switch end {
                case .failed:
                    failures += 1
                    _ = await phase.sleep(ReconnectPolicy(maximumDelay: .seconds(8)).delay(attempt: failures))
                case .dropped:
                    failures = 0
                    _ = await phase.sleep(draw(0.2...3))
                case .away(let pause):
                    failures = 0
                    _ = await phase.sleep(pause)
                case .stopped:
                    break
                }
            }
            closeGhost()
            extras.finish()
        }
    }

    /// One connection, from CONNECT to its end.
    private func session(node: Int, extras: Extras) async -> SessionEnd {
        let channel = Locked<(any Channel)?>(nil)
        let configuration = self.configuration(node: node) { opened in channel.withLock { $0 = opened } }
        opening()
        do {
            let end = try await AlinkDeviceClient.withClient(configuration: configuration, logger: logger) { client in
                self.records.update { $0.sessions += 1 }
                let now = SoakSettings.nowMs()
                self.truth.withLock {
                    $0.up = true
                    $0.upSinceMs = now
                    $0.story = "connected to \(self.name(node))"
                }
                // The device is back: a half-open connection it left is taken over (if the
                // cloud still holds it), then closed.
                self.closeGhost()
                return await self.connected(client, node: node, channel: channel, extras: extras)
            }
            closed(why: nil)
            return end
        } catch {
            records.update { $0.failedConnections += 1 }
            closed(why: "a connection to \(name(node)) failed")
            return .failed
        }
    }

    private func connected(
        _ client: AlinkDeviceClient, node: Int, channel: Locked<(any Channel)?>, extras: Extras
    ) async -> SessionEnd {
        let events = client.mqtt.events()
        let downlinks = client.downlinks()
        guard client.mqtt.isConnected else { return .dropped }
        // How the fault under way ends the session: its own act (a ghost's takeover, a closed
        // socket) ends the connection, which the events task may see before the fault returns.
        let pendingEnd = Locked<SessionEnd?>(nil)
        let end = await withTaskGroup(of: SessionEnd?.self) { group -> SessionEnd in
            group.addTask {
                for await event in events {
                    if case .disconnected = event { return .dropped }
                }
                return .dropped
            }
            group.addTask {
                await self.answer(downlinks, client: client)
                return nil
            }
            group.addTask {
                await self.postPeriodically(client)
                return nil
            }
            group.addTask {
                await self.phase.stopped()
                return .stopped
            }
            group.addTask { await self.fault(client: client, node: node, channel: channel, pendingEnd: pendingEnd, extras: extras) }
            defer { group.cancelAll() }
            while let next = await group.next() {
                guard let end = next else { continue }
                // The run's end wins over a fault's.
                if case .stopped = end { return end }
                return pendingEnd.withLock { $0 } ?? end
            }
            return .dropped
        }
        // At the end of the run half the devices leave with DISCONNECT, half without.
        if case .stopped = end, draw(0...1) < .seconds(0.5) { channel.withLock { $0 }?.close(promise: nil) }
        return end
    }

    /// A connection of this device's identity to `node`, without automatic reconnection (the
    /// device decides when to come back), handing its channel to `opened` for faults.
    func configuration(node: Int, opened: @escaping @Sendable (any Channel) -> Void) -> AlinkDeviceConfiguration {
        var configuration = bench.configuration(port: ports[node], replyTimeout: .seconds(20))
        configuration.keepAlive = settings.keepAlive
        configuration.reconnect = nil
        configuration.transport = .custom(name: "soak") { channel, _ in opened(channel) }
        return configuration
    }

    // MARK: Posts and answers

    /// A post every `postInterval` (±20 %), each with a `Label` no other post carries.
    private func postPeriodically(_ client: AlinkDeviceClient) async {
        let interval = settings.postInterval
        var wait = draw(0...interval)
        while (try? await Task.sleep(for: wait)) != nil {
            let sequence = nextSequence()
            let label = "p\(index).\(sequence)"
            await post(client, ["Label": .string(label), "Brightness": .int(Int64(sequence % 101))], label: label)
            wait = draw((interval * 0.8)...(interval * 1.2))
        }
    }

    func nextSequence() -> Int { postSequence.wrappingAdd(1, ordering: .relaxed).newValue }

    func post(_ client: AlinkDeviceClient, _ params: JSONValue, label: String) async {
        let code: Int?
        do {
            code = try await client.postProperties(params).code
        } catch {
            code = nil
        }
        records.posted(did: bench.did, label: label, code: code)
    }

    /// Records every property set, answers it 200 (late on a slow device), then reports the
    /// written values, as a device does once it applied them.
    func answer(_ downlinks: AsyncStream<AlinkDownlink>, client: AlinkDeviceClient) async {
        await withTaskGroup(of: Void.self) { group in
            for await downlink in downlinks {
                guard case .propertySet = downlink.topic.topic, let request = downlink.request, let id = Int64(request.id) else { continue }
                let label = request.params["Label"]?.stringValue
                records.received(commandID: id, did: bench.did, label: label)
                let delay = slow ? draw(1...40) : nil
                group.addTask {
                    if let delay, (try? await Task.sleep(for: delay)) == nil {
                        self.records.answerLost()
                        return
                    }
                    self.records.replying(commandID: id)
                    do {
                        try await client.reply(request.reply(), to: downlink)
                    } catch {
                        self.records.answerLost()
                        return
                    }
                    if let label { await self.post(client, request.params, label: label) }
                }
            }
        }
    }

    // MARK: The device's account of its presence

    func opening() { truth.withLock { $0.live += 1 } }

    /// A connection ended (or failed): the cloud heard from the device until now.
    func closed(why: String?, main: Bool = true) {
        let now = SoakSettings.nowMs()
        truth.withLock { truth in
            truth.live -= 1
            if main { truth.up = false }
            truth.lastContactMs = max(truth.lastContactMs, now)
            if let why { truth.story = why } else if main { truth.story += ", ended" }
        }
    }

    /// A ghost signed in and went silent now (or failed to sign in): counted here, where the
    /// outcome is known even when the session that sent the ghost has ended meanwhile.
    func ghostSettled(node: Int, away: Duration, signedIn: Bool) {
        let now = SoakSettings.nowMs()
        let story: String
        if signedIn {
            story = "half-open connection left on \(name(node)), away \(away.components.seconds) s"
            records.update { $0.ghosts += 1 }
            records.count(fault: .halfOpen)
        } else {
            story = "a half-open connection to \(name(node)) was refused"
            records.update { $0.ghostsRefused += 1 }
        }
        truth.withLock { truth in
            truth.live -= 1
            truth.lastContactMs = max(truth.lastContactMs, now)
            truth.story = story
            truth.lastFault = story
        }
    }

    /// A fault happens.
    func tell(_ fault: String) {
        truth.withLock {
            $0.story = fault
            $0.lastFault = fault
        }
    }

    func name(_ node: Int) -> String { settings.nodeNames[node] }

    func closeGhost() { ghost.withLock { $0.take() }?.resolve(.success(())) }

    // MARK: Chance

    func drawNode() -> Int { random.withLock { Int.random(in: 0..<ports.count, using: &$0) } }

    /// A duration drawn evenly from `seconds`.
    func draw(_ seconds: ClosedRange<Double>) -> Duration {
        .seconds(random.withLock { Double.random(in: seconds, using: &$0) })
    }
}
