import NIOHTTP1
public import TetherCloudProtocol
public import TetherCore

/// A schedule as the cloud keeps it: its fields, `id`, and the next run it will fire.
public typealias Schedule = ScheduleBody
/// What a schedule is: its target, times in a zone, command, and whether it is enabled.
public typealias ScheduleFields = ScheduleFieldsBody
/// One run of a schedule, from its run log.
public typealias ScheduleRun = ScheduleRunBody
/// A schedule created, changed or deleted (the `s2c_schedules` push).
public typealias ScheduleChange = ScheduleChangeBody

extension TetherCloudAPI {
    // MARK: Schedules (the Open API's common scheduler; run logs and zones are Tether's)

    /// Your schedules, oldest first: all of them, or those of one device.
    public func schedules(_ session: CloudSession, did: String? = nil, limit: Int = 100, skip: Int = 0) async throws(TetherError) -> [Schedule] {
        var path = "/app/common_scheduler?limit=\(limit)&skip=\(skip)"
        if let did { path += "&did=\(did.tetherPercentEncoded)" }
        let answer = try await call(.GET, path, session: session)
        return try (answer.arrayValue ?? []).map { entry throws(TetherError) in try decodeBody("a schedule", entry, as: ScheduleBody.init(json:)) }
    }

    /// One of your schedules (9030 when it is not yours or not there).
    public func schedule(_ session: CloudSession, id: String) async throws(TetherError) -> Schedule {
        try decodeBody("the schedule", try await call(.GET, "/app/common_scheduler/\(id.tetherPercentEncoded)", session: session), as: ScheduleBody.init(json:))
    }

    /// Creates a schedule; the cloud checks the command against the device's model (9025) and
    /// your binding (9017), and the dates (9015).
    public func createSchedule(_ session: CloudSession, _ fields: ScheduleFields) async throws(TetherError) -> Schedule {
        try decodeBody("the schedule", try await call(.POST, "/app/common_scheduler", body: fields.json, session: session), as: ScheduleBody.init(json:))
    }

    /// Replaces a schedule's fields (its id stays).
    public func updateSchedule(_ session: CloudSession, id: String, _ fields: ScheduleFields) async throws(TetherError) -> Schedule {
        try decodeBody(
            "the schedule", try await call(.PUT, "/app/common_scheduler/\(id.tetherPercentEncoded)", body: fields.json, session: session),
            as: ScheduleBody.init(json:))
    }

    public func deleteSchedule(_ session: CloudSession, id: String) async throws(TetherError) {
        _ = try await call(.DELETE, "/app/common_scheduler/\(id.tetherPercentEncoded)", session: session)
    }

    /// A schedule's runs, newest first: when each was due, fired, and how its command ended.
    public func scheduleRuns(_ session: CloudSession, id: String, limit: Int = 20, skip: Int = 0) async throws(TetherError) -> [ScheduleRun] {
        let answer = try await call(.GET, "/app/common_scheduler/\(id.tetherPercentEncoded)/logs?limit=\(limit)&skip=\(skip)", session: session)
        return try (answer.arrayValue ?? []).map { entry throws(TetherError) in try decodeBody("a run", entry, as: ScheduleRunBody.init(json:)) }
    }
}
