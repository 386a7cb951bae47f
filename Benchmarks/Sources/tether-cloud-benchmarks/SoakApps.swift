import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import TetherCloud
import TetherCore

/// The soak's apps: users bound to the devices (each device to one user), writing to them
/// through either node's REST API at a steady rate, and reading back ledger entries and the
/// devices' latest status. Each write carries a `Label` no other write carries.
struct SoakApps: Sendable {
    struct User: Sendable {
        var uid: String
        var token: String
    }

    let appID: String
    let http: [Int]
    let users: [User]
    let records: SoakRecords

    /// Registers `count` users on the first node and binds device `i` to user `i % count`.
    static func register(appID: String, devices: [BenchDevice], count: Int, http: [Int], records: SoakRecords) async throws -> SoakApps {
        let base = "http://127.0.0.1:\(http[0])"
        var users: [User] = []
        for index in 0..<count {
            let user: JSONValue = ["username": .string("soak\(index)x\(UInt32.random(in: 0...UInt32.max))"), "password": "Passw0rd!"]
            let registered = try await Run.post(base + "/app/users", user, headers: ["X-Gizwits-Application-Id": appID])
            guard let uid = registered["uid"]?.stringValue, let token = registered["token"]?.stringValue else {
                throw SoakError("registration failed: \(registered.serialized())")
            }
            let owned = devices.indices.filter { $0 % count == index }.map { devices[$0] }
            // The API binds at most 100 devices per request.
            for start in stride(from: 0, to: owned.count, by: 100) {
                let chunk = owned[start..<min(owned.count, start + 100)]
                let list = JSONValue.array(chunk.map { ["did": .string($0.did), "passcode": .string($0.passcode)] })
                let bound = try await Run.post(
                    base + "/app/bindings", ["devices": list], headers: ["X-Gizwits-Application-Id": appID, "X-Gizwits-User-token": token])
                guard bound["success"]?.arrayValue?.count == chunk.count else { throw SoakError("binding failed: \(bound.serialized())") }
            }
            users.append(User(uid: uid, token: token))
        }
        return SoakApps(appID: appID, http: http, users: users, records: records)
    }

    /// Writes `rate` times a second until `end`, to devices and nodes drawn at random, half of
    /// them queued for 30 s when the device is offline; a read for every two writes.
    func run(devices: [BenchDevice], rate: Double, until end: ContinuousClock.Instant, seed: UInt64) async {
        var generator = SplitMix64(seed: seed ^ 0xA995)
        let interval = Duration.seconds(1 / rate)
        await withTaskGroup(of: Void.self) { group in
            var next = ContinuousClock.now
            var sequence = 0
            while next < end {
                sequence += 1
                let target = Int.random(in: 0..<devices.count, using: &generator)
                let node = Int.random(in: 0..<http.count, using: &generator)
                let queued = Bool.random(using: &generator)
                let label = "w\(sequence)"
                group.addTask { await self.write(devices[target], user: target % self.users.count, node: node, label: label, queued: queued) }
                if sequence % 2 == 0 {
                    let readNode = Int.random(in: 0..<http.count, using: &generator)
                    let reader = Int.random(in: 0..<devices.count, using: &generator)
                    group.addTask { await self.read(devices[reader], user: self.users[reader % self.users.count], node: readNode) }
                }
                next += interval
                try? await Task.sleep(until: next, clock: .continuous)
            }
        }
    }

    private func headers(_ user: User) -> [String: String] {
        ["X-Gizwits-Application-Id": appID, "X-Gizwits-User-token": user.token]
    }

    private func write(_ device: BenchDevice, user: Int, node: Int, label: String, queued: Bool) async {
        let value = Int64(label.dropFirst()).map { $0 % 101 } ?? 0
        var body: JSONObject = ["attrs": ["Label": .string(label), "Brightness": .int(value)]]
        if queued { body["queue_ttl"] = 30 }
        let url = "http://127.0.0.1:\(http[node])/app/control/\(device.did)"
        do {
            let (status, answer) = try await Self.request(.POST, url, body: .object(body), headers: headers(users[user]))
            if status == 200, case .int(let id)? = answer["command_id"] {
                let write = SoakRecords.Write(commandID: id, did: device.did, user: user, label: label, node: node, queued: queued)
                records.update { $0.writes.append(write) }
            } else {
                records.update { $0.writesRefused[Self.reason(status: status, answer: answer), default: 0] += 1 }
            }
        } catch {
            records.update { $0.writesRefused["no answer (\(Self.kind(of: error)))", default: 0] += 1 }
        }
    }

    /// Reads an earlier write of this user's (its ledger entry) and a device's latest status.
    private func read(_ device: BenchDevice, user: User, node: Int) async {
        let base = "http://127.0.0.1:\(http[node])"
        let earlier = records.update { state -> SoakRecords.Write? in
            guard !state.writes.isEmpty else { return nil }
            return state.writes[Int.random(in: max(0, state.writes.count - 500)..<state.writes.count)]
        }
        if let earlier {
            // Asked as the user who wrote it.
            let owner = users[earlier.user]
            do {
                let (status, answer) = try await Self.request(.GET, base + "/app/commands/\(earlier.commandID)", body: nil, headers: headers(owner))
                if status == 200, let state = answer["state"]?.stringValue {
                    records.update { records in
                        records.reads["command 200", default: 0] += 1
                        if CommandState(rawValue: state)?.isFinal == true, records.finalSeen[earlier.commandID] == nil {
                            records.finalSeen[earlier.commandID] = state
                        }
                    }
                } else {
                    records.update { $0.reads["command \(Self.reason(status: status, answer: answer))", default: 0] += 1 }
                }
            } catch {
                records.update { $0.reads["command: no answer (\(Self.kind(of: error)))", default: 0] += 1 }
            }
        }
        do {
            let (status, answer) = try await Self.request(.GET, base + "/app/devdata/\(device.did)/latest", body: nil, headers: headers(user))
            let outcome = status == 200 ? "latest 200" : "latest \(Self.reason(status: status, answer: answer))"
            records.update { $0.reads[outcome, default: 0] += 1 }
        } catch {
            records.update { $0.reads["latest: no answer (\(Self.kind(of: error)))", default: 0] += 1 }
        }
    }

    // MARK: HTTP

    static func request(_ method: HTTPMethod, _ url: String, body: JSONValue?, headers: [String: String]) async throws -> (Int, JSONValue) {
        var request = HTTPClientRequest(url: url)
        request.method = method
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(string: body.serialized()))
        }
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(10))
        let bytes = try await response.body.collect(upTo: 1 << 20)
        return (Int(response.status.code), (try? JSONValue.parse(Array(bytes.readableBytesView))) ?? .null)
    }

    static func reason(status: Int, answer: JSONValue) -> String {
        if case .int(let code)? = answer["error_code"] { return "\(status) \(code) \(answer["error_message"]?.stringValue ?? "")" }
        return "\(status)"
    }

    static func kind(of error: any Error) -> String {
        let text = "\(error)"
        if text.contains("connect") || text.contains("refused") { return "connection refused or reset" }
        if text.contains("deadline") || text.contains("timeout") || text.contains("Timeout") { return "timeout" }
        return String(text.prefix(60))
    }
}

/// A soak that cannot go on.
struct SoakError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
