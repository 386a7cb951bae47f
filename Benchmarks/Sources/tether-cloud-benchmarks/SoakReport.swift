import TetherCore

/// The soak's counts as one JSON object, with a few examples of each violation, and a one-line
/// verdict.
struct SoakReport {
    var devices: Int
    var nodes: Int
    var settings: SoakSettings
    var timeline: [String: Double]
    var events: [String]
    var slowDevices: Int
    var records: SoakRecords.State
    var posts: SoakChecks.Posts
    var writes: SoakChecks.Writes
    var presence: SoakPresenceWatch.State
    var limitMs: Int64

    /// One presence sample per 5 s of chaos, of which at least half must have been taken.
    var expectedSamples: Int
    /// The phases that ran out of time.
    var timeouts: [String]

    /// Each way the run failed, with its number of violations.
    var failures: [(count: Int, what: String)] {
        var failures: [(count: Int, what: String)] = []
        func add(_ count: Int, _ what: String) { if count > 0 { failures.append((count, what)) } }
        add(posts.missing.count, "\(posts.missing.count) posts answered 200 not stored")
        add(writes.violations, "\(writes.violations) acknowledged writes lost, or contradicted by the ledger")
        add(
            presence.violations.count,
            "\(presence.violations.count) devices shown online more than \(limitMs) ms after the cloud last heard from them "
                + "(\(violationsOnRowsOfKilledNodes) held by a node killed and restarted meanwhile)")
        add(presence.failedSamples, "\(presence.failedSamples) presence samples failed (presence went unchecked then)")
        // Floors: a run that never exercised a check has not passed it.
        if writes.acknowledged == 0 { add(1, "no write was acknowledged, so none was checked") }
        if posts.answered200 == 0 { add(1, "no post was answered 200, so none was checked") }
        if presence.samples < neededSamples {
            add(1, "\(presence.samples) presence samples taken, fewer than \(neededSamples) (half of one per 5 s of chaos)")
        }
        if kills == 0 { add(1, "no node was killed, so no recovery was checked") }
        for timeout in timeouts { add(1, "timed out: \(timeout)") }
        for event in events {
            let fields = event.split(separator: " ")
            guard fields.count == 3 else { continue }
            if fields[1] == "died" { add(1, "\(fields[2]) had died on its own before a kill (at \(fields[0]))") }
            if fields[1] == "restart-failed" { add(1, "\(fields[2]) did not come back after a kill (at \(fields[0]))") }
        }
        return failures
    }

    var violations: Int { failures.reduce(0) { $0 + $1.count } }

    var neededSamples: Int { max(1, (expectedSamples + 1) / 2) }

    var verdict: String {
        let failures = self.failures
        guard failures.isEmpty else { return "soak: FAIL: " + failures.map(\.what).joined(separator: "; ") }
        return "soak: PASS: \(devices) devices on \(nodes) nodes, \(kills) kills, \(records.writes.count) acknowledged writes all delivered or honestly "
            + "final, \(posts.answered200) posts answered 200 all stored, no device shown online past \(limitMs) ms of silence"
    }

    var kills: Int { events.filter { $0.contains(" kill ") }.count }

    /// Presence violations on rows whose node was killed (or died) after the connection the row
    /// describes started, and before the sample.
    var violationsOnRowsOfKilledNodes: Int { presence.violations.values.filter(heldByKilledNode).count }

    func heldByKilledNode(_ violation: SoakPresenceWatch.Violation) -> Bool {
        killed(violation.onlineNode, after: violation.connectionStartedMs, before: violation.sampledMs)
    }

    /// Whether `node`'s process ended between the two moments (the script's event lines read
    /// `<unix ms> kill <node>` or `<unix ms> died <node>`).
    func killed(_ node: String, after start: Int64, before end: Int64) -> Bool {
        events.contains { line in
            let fields = line.split(separator: " ")
            guard fields.count == 3, fields[1] == "kill" || fields[1] == "died", fields[2] == node, let at = Int64(fields[0]) else { return false }
            return start < at && at < end
        }
    }

    var json: JSONValue {
        [
            "devices": int(devices), "nodes": int(nodes), "slowDevices": int(slowDevices),
            "settings": [
                "keepAliveSeconds": int(Int(settings.keepAlive)), "postIntervalSeconds": .double(settings.postInterval),
                "faultsPerDevicePerMinute": .double(settings.faultsPerMinute), "seed": .int(Int64(bitPattern: settings.seed)),
                "presenceLimitMs": .int(limitMs),
            ],
            "timelineSeconds": object(timeline.mapValues { .double(($0 * 10).rounded() / 10) }),
            "nodeEvents": .array(events.map { .string($0) }),
            "timeouts": .array(timeouts.map { .string($0) }),
            "connections": [
                "sessions": int(records.sessions), "failedAttempts": int(records.failedConnections), "duplicates": int(records.twins),
                "halfOpen": int(records.ghosts), "halfOpenRefused": int(records.ghostsRefused), "takeoversNotEnforcedIn10s": int(records.takeoversNotEnforced),
            ],
            "faults": counts(records.faults),
            "posts": [
                "answered200": int(posts.answered200), "stored": int(posts.stored), "missing": int(posts.missing.count),
                "labels": int(records.posts.count),
                "refused": counts(Dictionary(uniqueKeysWithValues: records.postsRefused.map { ("\($0.key)", $0.value) })),
                "unanswered": int(records.postsUnanswered),
                "missingExamples": .array(posts.missing.prefix(10).map { .string("\($0.did) \($0.label)") }),
            ],
            "writes": [
                "acknowledged": int(writes.acknowledged), "delivered": int(writes.delivered), "ledgerStates": counts(writes.states),
                "refused": counts(records.writesRefused), "deliveredNotFinal": int(writes.deliveredNotFinal),
                "deliveriesOfUnacknowledgedWrites": int(writes.deliveriesOfUnacknowledgedWrites), "answersNotDelivered": int(records.answersLost),
                "violations": [
                    "lost": examples(writes.lost), "claimedNotDelivered": examples(writes.claimedNotDelivered),
                    "failedButDelivered": examples(writes.failedButDelivered), "rejected": examples(writes.rejected),
                    "claimedNotAnswered": examples(writes.claimedNotAnswered), "wrongValues": examples(writes.wrongValues),
                    "finalStateChanged": examples(writes.finalStateChanged), "notInLedger": examples(writes.notInLedger),
                ],
            ],
            "reads": counts(records.reads),
            "presence": [
                "samples": int(presence.samples), "samplesNeeded": int(neededSamples), "failedSamples": int(presence.failedSamples),
                "violations": int(presence.violations.count), "worstSilentMs": .int(presence.violations.values.map(\.silentMs).max() ?? 0),
                "violationsOnRowsOfANodeKilledSince": int(violationsOnRowsOfKilledNodes),
                "shownOfflineWhileConnected": examples(presence.offlineWhileConnected.keys.sorted().map { presence.offlineWhileConnected[$0]! }),
                "examples": .array(
                    presence.violations.values.sorted { $0.silentMs > $1.silentMs }.prefix(10).map { violation -> JSONValue in
                        [
                            "did": .string(violation.did), "device": int(violation.device), "silentMs": .int(violation.silentMs),
                            "sampledAtMs": .int(violation.sampledMs), "onlineNode": .string(violation.onlineNode),
                            "connectionStartedAtMs": .int(violation.connectionStartedMs), "deviceStory": .string(violation.story),
                            "rowsNodeKilledSince": .bool(heldByKilledNode(violation)),
                        ]
                    }),
            ],
        ]
    }

    private func int(_ value: Int) -> JSONValue { .int(Int64(value)) }

    private func counts(_ values: [String: Int]) -> JSONValue { object(values.mapValues { .int(Int64($0)) }) }

    /// An object with its keys in alphabetical order.
    private func object(_ members: [String: JSONValue]) -> JSONValue {
        var object = JSONObject()
        for key in members.keys.sorted() { object[key] = members[key] }
        return .object(object)
    }

    private func examples(_ list: [String]) -> JSONValue {
        ["count": int(list.count), "examples": .array(list.prefix(10).map { .string($0) })]
    }
}
