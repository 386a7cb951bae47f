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

    var violations: Int { posts.missing.count + writes.violations + presence.violations.count }

    var verdict: String {
        guard violations > 0 else {
            return "soak: PASS: \(devices) devices on \(nodes) nodes, \(kills) kills, \(records.writes.count) acknowledged writes all delivered or honestly "
                + "final, \(posts.answered200) posts answered 200 all stored, no device shown online past \(limitMs) ms of silence"
        }
        var broken: [String] = []
        if !posts.missing.isEmpty { broken.append("\(posts.missing.count) posts answered 200 not stored") }
        if writes.violations > 0 { broken.append("\(writes.violations) acknowledged writes neither delivered nor honestly final") }
        if !presence.violations.isEmpty {
            let stale = presence.violations.values.filter { killed($0.onlineNode, after: $0.onlineChangedMs, before: $0.sampledMs) }.count
            broken.append(
                "\(presence.violations.count) devices shown online more than \(limitMs) ms after the cloud last heard from them "
                    + "(\(stale) held by a node killed and restarted meanwhile)")
        }
        return "soak: FAIL: " + broken.joined(separator: "; ")
    }

    var kills: Int { events.filter { $0.contains(" kill ") }.count }

    /// Whether the script killed `node` between the two moments (its event lines read
    /// `<unix ms> kill <node>`).
    func killed(_ node: String, after start: Int64, before end: Int64) -> Bool {
        events.contains { line in
            let fields = line.split(separator: " ")
            guard fields.count == 3, fields[1] == "kill", fields[2] == node, let at = Int64(fields[0]) else { return false }
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
            "connections": [
                "sessions": int(records.sessions), "failedAttempts": int(records.failedConnections), "duplicates": int(records.twins),
                "halfOpen": int(records.ghosts), "halfOpenRefused": int(records.ghostsRefused), "takeoversNotEnforcedIn10s": int(records.takeoversNotEnforced),
            ],
            "faults": counts(records.faults),
            "posts": [
                "answered200": int(posts.answered200), "stored": int(posts.stored), "missing": int(posts.missing.count),
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
                    "failedButDelivered": examples(writes.failedButDelivered), "wrongValues": examples(writes.wrongValues),
                    "finalStateChanged": examples(writes.finalStateChanged), "notInLedger": examples(writes.notInLedger),
                ],
            ],
            "reads": counts(records.reads),
            "presence": [
                "samples": int(presence.samples), "failedSamples": int(presence.failedSamples), "violations": int(presence.violations.count),
                "worstSilentMs": .int(presence.violations.values.map(\.silentMs).max() ?? 0),
                "violationsOnRowsOfANodeKilledSince": int(
                    presence.violations.values.filter { killed($0.onlineNode, after: $0.onlineChangedMs, before: $0.sampledMs) }.count),
                "shownOfflineWhileConnected": examples(presence.offlineWhileConnected.keys.sorted().map { presence.offlineWhileConnected[$0]! }),
                "examples": .array(
                    presence.violations.values.sorted { $0.silentMs > $1.silentMs }.prefix(10).map { violation -> JSONValue in
                        [
                            "did": .string(violation.did), "device": int(violation.device), "silentMs": .int(violation.silentMs),
                            "sampledAtMs": .int(violation.sampledMs), "onlineNode": .string(violation.onlineNode),
                            "onlineChangedAtMs": .int(violation.onlineChangedMs), "deviceStory": .string(violation.story),
                            "rowsNodeKilledSince": .bool(killed(violation.onlineNode, after: violation.onlineChangedMs, before: violation.sampledMs)),
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
