import ArgumentParser
import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import TetherCloud
import TetherCore

/// Schedules due in the same minute (issue 16's goal: 10,000 fire within 5 s), against a
/// `tether-cloud serve` process on its real clock: users bound to the devices `setup` made write
/// the schedules through the API (one-time, all at the same minute, `queue_ttl` so that runs for
/// offline devices are queued in the ledger rather than refused), then the run log is read until
/// every run is there. Reports how long after the due instant the first and the last fired.
struct ScheduleBurst: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "schedules")

    @Option(help: "The server's database (as setup was given).") var database: String
    @Option(help: "The server's HTTP port.") var http: Int
    @Option(help: "The JSON file setup wrote.") var setup: String
    @Option(help: "Schedules to fire at once.") var count = 10_000
    @Option(help: "Users writing them (at most 1,000 schedules each).") var users = 10

    func run() async throws {
        let document = try JSONValue.parse(Array(try Data(contentsOf: URL(fileURLWithPath: setup))))
        guard let appID = document["appId"]?.stringValue, let devices = document["devices"]?.arrayValue, !devices.isEmpty else {
            throw ValidationError("\(setup) is not what setup writes")
        }
        guard count <= users * 1_000, count <= users * devices.count * 100 else {
            throw ValidationError("\(count) schedules need more users or devices (1,000 per user, 100 per user and device)")
        }
        let base = "http://127.0.0.1:\(http)"
        var tokens: [String] = []
        for _ in 0..<users {
            let user: JSONValue = ["username": .string("sched\(UInt32.random(in: 0...UInt32.max))"), "password": "Passw0rd!"]
            guard let token = try await Run.post(base + "/app/users", user, headers: ["X-Gizwits-Application-Id": appID])["token"]?.stringValue else {
                throw ValidationError("registration failed")
            }
            let list = JSONValue.array(devices.map { ["did": $0["did"] ?? .null, "passcode": $0["passcode"] ?? .null] })
            let bound = try await Run.post(
                base + "/app/bindings", ["devices": list], headers: ["X-Gizwits-Application-Id": appID, "X-Gizwits-User-token": token])
            guard bound["success"]?.arrayValue?.count == devices.count else { throw ValidationError("binding failed: \(bound.serialized())") }
            tokens.append(token)
        }
        // Due at the first whole minute at least 75 s away: time enough to write them all.
        let due = (Int64(Date().timeIntervalSince1970) + 75 + 59) / 60 * 60
        let time = Date(timeIntervalSince1970: TimeInterval(due))
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute], from: time)
        let date = String(format: "%04d-%02d-%02d", parts.year!, parts.month!, parts.day!)
        let clock = String(format: "%02d:%02d", parts.hour!, parts.minute!)
        let writing = ContinuousClock.now
        let (writers, count) = (tokens, self.count)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<8 {
                group.addTask {
                    for index in stride(from: worker, to: count, by: 8) {
                        let token = writers[index % writers.count]
                        let did = devices[(index / writers.count) % devices.count]["did"] ?? .null
                        let body: JSONValue = [
                            "did": did, "time": .string(clock), "date": .string(date), "attrs": ["Brightness": .int(Int64(index % 100))], "queue_ttl": 60,
                        ]
                        let answer = try await Run.post(
                            base + "/app/common_scheduler", body, headers: ["X-Gizwits-Application-Id": appID, "X-Gizwits-User-token": token])
                        guard answer["id"] != nil else { throw ValidationError("schedule \(index) refused: \(answer.serialized())") }
                    }
                }
            }
            try await group.waitForAll()
        }
        let written = Run.seconds(since: writing)
        let now = Date().timeIntervalSince1970
        guard now < Double(due) - 1 else { throw ValidationError("writing took \(written) s, past the due minute; use fewer schedules") }
        var logger = Logger(label: "bench")
        logger.logLevel = .warning
        let opened = try await DatabaseURL(database).open(logger: logger)
        try await Task.sleep(for: .seconds(Double(due) - now))
        var fired: Int64 = 0
        var first: Int64 = 0
        var last: Int64 = 0
        var seen: Int64 = 0
        let deadline = ContinuousClock.now + .seconds(120)
        while ContinuousClock.now < deadline {
            // fired_ms is when each run was claimed; a run is visible once its batch committed.
            let row = try await opened.first(
                "SELECT COUNT(*) AS n, COALESCE(MIN(fired_ms), 0) AS first, COALESCE(MAX(fired_ms), 0) AS last FROM schedule_runs WHERE planned_ms = $1",
                .int(due * 1000))
            (fired, first, last) = (try row?.int("n") ?? 0, try row?.int("first") ?? 0, try row?.int("last") ?? 0)
            seen = Int64(Date().timeIntervalSince1970 * 1000) - due * 1000
            if fired >= count { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        let refused = try await opened.first("SELECT COUNT(*) AS n FROM schedule_runs WHERE planned_ms = $1 AND state <> 'fired'", .int(due * 1000))
        await opened.close()
        let result: JSONValue = [
            "schedules": .int(Int64(count)), "written_s": .double(written), "fired": .int(fired), "not_fired": .int(try refused?.int("n") ?? -1),
            "first_after_due_ms": .int(first - due * 1000), "last_after_due_ms": .int(last - due * 1000), "all_committed_by_ms": .int(seen),
        ]
        print(result.serialized())
        guard fired == count else { throw ValidationError("only \(fired) of \(count) fired within two minutes") }
    }
}
