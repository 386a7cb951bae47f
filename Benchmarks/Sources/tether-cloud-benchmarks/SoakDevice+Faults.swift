import Foundation
import NIOCore
import TetherAlink
import TetherCore
import TetherMQTT

extension SoakDevice {
    /// Waits for this connection's fault (a Poisson process at `faultsPerMinute`, only in the
    /// chaos phase), makes it happen, and says how the connection ends; nil when the fault could
    /// not be made (the connection goes on) or the session ended meanwhile. A fault that ends
    /// the connection by its own act says first, in `pendingEnd`, how the session ends.
    func fault(
        client: AlinkDeviceClient, node: Int, channel: Locked<(any Channel)?>, pendingEnd: Locked<SessionEnd?>, extras: Extras
    ) async -> SessionEnd? {
        guard settings.faultsPerMinute > 0 else {
            await phase.stopped()
            return nil
        }
        let mean = 60 / settings.faultsPerMinute
        while true {
            let wait = Duration.seconds(random.withLock { -mean * log(1 - Double.random(in: 0..<1, using: &$0)) })
            guard (try? await Task.sleep(for: wait)) != nil else { return nil }
            guard phase.faultsEnabled else { continue }
            let fault = random.withLock { SoakFault.draw(using: &$0) }
            switch fault {
            case .drop:
                records.count(fault: fault)
                tell("link to \(name(node)) dropped")
                channel.withLock { $0 }?.close(promise: nil)
                return .dropped
            case .reboot:
                records.count(fault: fault)
                let pause = draw(5...60)
                let graceful = draw(0...1) < .seconds(0.5)
                tell("rebooting from \(name(node)) (\(graceful ? "with" : "without") DISCONNECT), away \(pause.components.seconds) s")
                pendingEnd.withLock { $0 = .away(pause) }
                if !graceful { channel.withLock { $0 }?.close(promise: nil) }
                return .away(pause)
            case .halfOpen:
                // Counted with the ghost, which knows whether it signed in.
                switch await halfOpen(client: client, channel: channel, pendingEnd: pendingEnd, extras: extras) {
                case .refused: continue
                case .cancelled: return nil
                case .tookOver(let end): return end
                }
            case .duplicate:
                let events = client.mqtt.events()
                let connected = AsyncPromise<Bool, Never>()
                extras.yield(.twin(connected: connected))
                guard case .success(true) = await connected.result(ifCancelled: { .success(false) }) else { continue }
                records.count(fault: fault)
                await takenOver(client, events: events, channel: channel)
                return .dropped
            }
        }
    }

    /// What became of a half-open connection, as far as this session can tell.
    private enum HalfOpen {
        /// The ghost signed in; the session ends so.
        case tookOver(SessionEnd)
        /// The ghost's connect failed; the connection goes on.
        case refused
        /// The session ended before the ghost's outcome was known (it is counted when known).
        case cancelled
    }

    /// A ghost takes this connection over and goes silent; the device stays away 10 to 80 s
    /// (mostly longer than 1.5 × keep-alive, so the cloud must notice the silence itself).
    private func halfOpen(
        client: AlinkDeviceClient, channel: Locked<(any Channel)?>, pendingEnd: Locked<SessionEnd?>, extras: Extras
    ) async -> HalfOpen {
        let node = drawNode()
        let pause = draw(10...80)
        let events = client.mqtt.events()
        let connected = AsyncPromise<Bool, Never>()
        let release = AsyncPromise<Void, Never>()
        // Kept before it connects, so that the device's return or the run's end releases it
        // whatever happens here meanwhile.
        ghost.withLock { $0 = release }
        // The takeover closes this connection, often before this task hears the ghost is in.
        pendingEnd.withLock { $0 = .away(pause) }
        opening()
        extras.yield(.ghost(node: node, away: pause, connected: connected, release: release))
        let signedIn = await connected.result(ifCancelled: { .success(false) })
        guard !Task.isCancelled else { return .cancelled }
        guard case .success(true) = signedIn else {
            pendingEnd.withLock { $0 = nil }
            return .refused
        }
        await takenOver(client, events: events, channel: channel)
        return .tookOver(.away(pause))
    }

    /// Waits up to 10 s for the cloud to close this connection after another one took its
    /// identity; counts it and closes it here when the cloud did not.
    private func takenOver(_ client: AlinkDeviceClient, events: AsyncStream<MQTTClientEvent>, channel: Locked<(any Channel)?>) async {
        let closed = await within(.seconds(10)) {
            for await event in events {
                if case .disconnected = event { return true }
            }
            return true
        }
        if closed == nil, client.mqtt.isConnected {
            records.update { $0.takeoversNotEnforced += 1 }
            channel.withLock { $0 }?.close(promise: nil)
        }
    }

    /// A second connection with this device's identity (to a node of its own): it takes the
    /// first one over, answers sets and posts once, until the device's own connection comes
    /// back and takes it over in turn (or 30 s pass, or the run stops).
    func twin(connected: AsyncPromise<Bool, Never>) async {
        let node = drawNode()
        let configuration = self.configuration(node: node) { _ in }
        opening()
        do {
            try await AlinkDeviceClient.withClient(configuration: configuration, logger: logger) { client in
                self.records.update { $0.twins += 1 }
                let events = client.mqtt.events()
                let downlinks = client.downlinks()
                self.tell("a duplicate connection took over on \(self.name(node))")
                connected.resolve(.success(true))
                guard client.mqtt.isConnected else { return }
                await withTaskGroup(of: Void.self) { group in
                    group.addTask {
                        for await event in events {
                            if case .disconnected = event { return }
                        }
                    }
                    group.addTask { await self.answer(downlinks, client: client) }
                    group.addTask {
                        let label = "t\(self.index).\(self.nextSequence())"
                        await self.post(client, ["Label": .string(label)], label: label)
                        _ = await self.phase.sleep(.seconds(30))
                    }
                    _ = await group.next()
                    group.cancelAll()
                }
            }
            closed(why: nil, main: false)
        } catch {
            connected.resolve(.success(false))
            closed(why: nil, main: false)
        }
    }
}
