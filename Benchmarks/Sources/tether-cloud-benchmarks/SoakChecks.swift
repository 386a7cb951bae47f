import TetherCloud
import TetherCore

/// The end-of-run checks of what the devices and apps recorded against the database the nodes
/// share.
struct SoakChecks {
    let database: any SQLDatabase
    let nodeNames: [String]

    /// Every post answered 200 is in the device log, as many times as it was answered (an
    /// echoed write's `Label` comes once per delivery; a lost one must not hide behind another).
    struct Posts {
        var answered200 = 0
        var stored = 0
        /// One entry per post answered 200 and not stored.
        var missing: [SoakRecords.Post] = []
    }

    func posts(_ records: SoakRecords.State) async throws -> Posts {
        var stored: [SoakRecords.Post: Int] = [:]
        let rows = try await database.query("SELECT did, body FROM device_log WHERE kind = 'dev2app' AND body LIKE '%\"Label\"%'")
        for row in rows {
            guard let did = row.optionalText("did"), let body = row.optionalText("body"),
                let label = (try? JSONValue.parse(body))?["Label"]?.stringValue
            else { continue }
            stored[SoakRecords.Post(did: did, label: label), default: 0] += 1
        }
        var result = Posts(answered200: records.posts.values.reduce(0, +))
        for (post, answered) in records.posts {
            let found = min(answered, stored[post] ?? 0)
            result.stored += found
            result.missing += Array(repeating: post, count: answered - found)
        }
        return result
    }

    /// Every write the cloud accepted reached its device, or its ledger entry ended in a final
    /// state that says so honestly; and nothing the ledger says contradicts the device.
    struct Writes {
        var acknowledged = 0
        var delivered = 0
        /// Final states of the accepted writes, by name.
        var states: [String: Int] = [:]
        /// Accepted, never delivered, and not in a final state: lost.
        var lost: [String] = []
        /// The ledger says the device answered (acknowledged, applied, rejected), and the
        /// device never received it.
        var claimedNotDelivered: [String] = []
        /// The ledger says it could not be sent (failed), and the device received it.
        var failedButDelivered: [String] = []
        /// The ledger says the device rejected it; the soak's devices answer every set 200.
        var rejected: [String] = []
        /// The ledger says the device answered (acknowledged, applied), and the device
        /// received it but never began to answer it.
        var claimedNotAnswered: [String] = []
        /// The device received other values than the write's.
        var wrongValues: [String] = []
        /// A read saw a final state that later changed.
        var finalStateChanged: [String] = []
        var notInLedger: [String] = []
        /// Delivered, but not in a final state at the end (allowed by the rule, reported).
        var deliveredNotFinal = 0
        /// Sets the devices received that no accepted write names (their answers were lost
        /// with a node, or resent): reported.
        var deliveriesOfUnacknowledgedWrites = 0

        var violations: Int {
            lost.count + claimedNotDelivered.count + failedButDelivered.count + rejected.count + claimedNotAnswered.count + wrongValues.count
                + finalStateChanged.count + notInLedger.count
        }
    }

    func writes(_ records: SoakRecords.State) async throws -> Writes {
        var ledger: [Int64: (did: String, state: String, message: String)] = [:]
        for row in try await database.query("SELECT id, did, state, message FROM commands") {
            guard let id = row.optionalInt("id") else { continue }
            ledger[id] = (row.optionalText("did") ?? "", row.optionalText("state") ?? "", row.optionalText("message") ?? "")
        }
        var result = Writes(acknowledged: records.writes.count)
        var acknowledgedIDs = Set<Int64>()
        for write in records.writes {
            acknowledgedIDs.insert(write.commandID)
            let name = "command \(write.commandID) (\(write.label) to \(write.did), via \(nodeNames[write.node])\(write.queued ? ", queued" : ""))"
            guard let entry = ledger[write.commandID], entry.did == write.did else {
                result.notInLedger.append(name)
                continue
            }
            result.states[entry.state, default: 0] += 1
            let described = "\(name): ledger \(entry.state) \"\(entry.message)\""
            let state = CommandState(rawValue: entry.state)
            let isFinal = state?.isFinal ?? false
            if let delivery = records.deliveries[write.commandID] {
                result.delivered += 1
                if delivery.did != write.did || delivery.label != write.label {
                    result.wrongValues.append("\(described), device \(delivery.did) got \(delivery.label ?? "no Label")")
                }
                switch state {
                case .failed?: result.failedButDelivered.append("\(described), received \(delivery.times)×")
                case .rejected?: result.rejected.append("\(described), received \(delivery.times)×")
                case .acknowledged?, .applied?:
                    if !delivery.replySent { result.claimedNotAnswered.append("\(described), received \(delivery.times)×, never answered") }
                default: break
                }
                if !isFinal { result.deliveredNotFinal += 1 }
            } else if let state, [CommandState.acknowledged, .applied, .rejected].contains(state) {
                result.claimedNotDelivered.append(described)
            } else if !isFinal {
                result.lost.append(described)
            }
            if let seen = records.finalSeen[write.commandID], seen != entry.state {
                result.finalStateChanged.append("\(described), read as \(seen) earlier")
            }
        }
        result.deliveriesOfUnacknowledgedWrites = records.deliveries.keys.filter { !acknowledgedIDs.contains($0) }.count
        return result
    }
}
