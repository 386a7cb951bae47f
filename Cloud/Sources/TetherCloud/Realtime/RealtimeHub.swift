import Logging
import Synchronization
import TetherCloudProtocol
import TetherCore

/// This node's app connections (WebSocket M2M sessions) and what each listens to. It reads the
/// cluster bus and hands each session what concerns it: reports, events and presence of the
/// devices it subscribed to, the progress of its own commands, changes of its user's bindings.
final class RealtimeHub: Sendable {
    private let bus: any ClusterBus
    private let database: any SQLDatabase
    private let logger: Logger
    private let sessions = Mutex<[ObjectIdentifier: M2MSession]>([:])

    init(bus: any ClusterBus, database: any SQLDatabase, logger: Logger) {
        self.bus = bus
        self.database = database
        self.logger = logger
    }

    func add(_ session: M2MSession) { sessions.withLock { $0[ObjectIdentifier(session)] = session } }
    func remove(_ session: M2MSession) { _ = sessions.withLock { $0.removeValue(forKey: ObjectIdentifier(session)) } }

    var sessionCount: Int { sessions.withLock { $0.count } }

    /// Dispatches bus events until the bus ends or the task is cancelled. Sessions re-check
    /// their tokens in child tasks, so that a burst of revocations never holds up the reports
    /// and presence every other session waits for.
    func run() async {
        await withDiscardingTaskGroup { checks in
            await dispatch(recheckingIn: &checks)
        }
    }

    private func dispatch(recheckingIn checks: inout DiscardingTaskGroup) async {
        for await event in bus.events() {
            let targets = sessions.withLock { Array($0.values) }
            guard !targets.isEmpty else { continue }
            var frame: M2MFrame?
            switch event {
            case .status(let did, let attrs, _):
                frame = .notification(M2MNotification(did: did, attrs: attrs.objectValue ?? [:]))
            case .event(let did, let identifier, let kind, let values, let atMs):
                frame = .event(M2MEvent(did: did, identifier: identifier, type: kind, values: values, timestamp: atMs))
            case .raw(let did, let hex, _):
                frame = .rawReport(M2MRaw(did: did, bytes: [UInt8](tetherHex: hex) ?? []))
            case .presence(let did, let online, _, _):
                guard targets.contains(where: { $0.isSubscribed(did) }) else { continue }
                // Read each time: a module that registers again changes its passcode.
                let device = try? await DeviceStore(database).find(did)
                frame = .onlineStatus(M2MOnlineStatus(did: did, passcode: device?.passcode ?? "", mac: device?.mac ?? "", online: online))
            case .command(let update):
                for session in targets { session.commandChanged(update) }
            case .binding(let uid, let did, let bound):
                let frame = M2MFrame.bindingChanged(did: did, bound: bound)
                for session in targets where session.uid == uid { session.send(frame) }
                if !bound { for session in targets where session.uid == uid { session.unsubscribe(did) } }
            case .credentialsChanged(let uid):
                for session in targets where session.uid == uid {
                    checks.addTask { await session.revalidate() }
                }
            case .userMessage(let did, let topic, let hex, let atMs):
                frame = .userTopic(M2MUserTopic(did: did, topic: topic, payload: [UInt8](tetherHex: hex) ?? [], timestamp: atMs))
            case .upgrade(let upgrade):
                frame = .upgrade(upgrade)
            case .message(let uid, let message):
                for session in targets where session.uid == uid { session.send(.message(message)) }
            case .pairing(let uid, let status):
                for session in targets where session.uid == uid { session.send(.pairing(status)) }
            case .schedules(let uid, let change):
                for session in targets where session.uid == uid { session.send(.schedules(change)) }
            case .deliver, .rrpcRequest, .rrpcAnswer, .shadowDesired, .userPublish:
                break
            }
            if let frame {
                for session in targets where session.isSubscribed(event.did) { session.push(frame) }
            }
        }
    }
}
