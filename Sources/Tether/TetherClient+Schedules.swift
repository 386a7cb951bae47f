public import TetherCloudClient
public import TetherCloudProtocol
public import TetherCore

extension TetherClient {
    /// The logged-in user's schedules (the Gizwits SDK's `GizDeviceSchedulerCenter`).
    public var schedules: Schedules { Schedules(client: self) }

    /// Runs `body` with the cloud API and the user's current session (renewed when due).
    func withCloudSession<Result: Sendable>(_ body: (TetherCloudAPI, CloudSession) async throws(TetherError) -> Result) async throws(TetherError) -> Result {
        guard let account else { throw TetherError(.invalidArgument, "the client has no cloud configured") }
        return try await account.withSession { session throws(TetherError) in try await body(account.api, session) }
    }
}

/// Schedules kept and fired by the cloud: a device's data points written (or bytes sent) once,
/// on days of the week, or on days of the month, at a time of day in a time zone (`tz`, UTC by
/// default; 07:00 in Europe/Berlin stays 07:00 across daylight-saving changes). Every run goes
/// through the command ledger (`source` = scheduler) and is logged (``runs(of:limit:)``).
/// Changes made by any of the user's sessions arrive as ``TetherClientEvent/schedules(_:)``.
/// Errors carry the cloud's code (`TetherError.cloudCode`): 9015 a field (a date, a time, a zone),
/// 9025 a data point or value the model refuses, 9017 a device you are not bound to, 9030 a
/// schedule that is not yours.
public struct Schedules: Sendable {
    let client: TetherClient

    /// Your schedules, or one device's.
    public func list(did: String? = nil) async throws(TetherError) -> [Schedule] {
        try await client.withCloudSession { api, session throws(TetherError) in
            var all: [Schedule] = []
            while true {
                let page = try await api.schedules(session, did: did, limit: 100, skip: all.count)
                all += page
                if page.count < 100 { return all }
            }
        }
    }

    public func schedule(_ id: String) async throws(TetherError) -> Schedule {
        try await client.withCloudSession { api, session throws(TetherError) in try await api.schedule(session, id: id) }
    }

    public func create(_ fields: ScheduleFields) async throws(TetherError) -> Schedule {
        try await client.withCloudSession { api, session throws(TetherError) in try await api.createSchedule(session, fields) }
    }

    public func update(_ id: String, _ fields: ScheduleFields) async throws(TetherError) -> Schedule {
        try await client.withCloudSession { api, session throws(TetherError) in try await api.updateSchedule(session, id: id, fields) }
    }

    public func delete(_ id: String) async throws(TetherError) {
        try await client.withCloudSession { api, session throws(TetherError) in try await api.deleteSchedule(session, id: id) }
    }

    /// The schedule's latest runs, newest first.
    public func runs(of id: String, limit: Int = 20) async throws(TetherError) -> [ScheduleRun] {
        try await client.withCloudSession { api, session throws(TetherError) in try await api.scheduleRuns(session, id: id, limit: limit) }
    }
}
