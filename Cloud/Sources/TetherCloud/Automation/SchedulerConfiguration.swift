/// How the scheduler fires due runs.
public struct SchedulerConfiguration: Sendable {
    /// Runs missed by no more than this (the cloud was down, or busy) still fire, once; older
    /// ones are logged `missed`. At most an hour: a schedule repeats at most daily.
    public var graceSeconds: Int64 = 300
    /// How often each node looks for due runs.
    public var interval: Duration = .seconds(1)
    /// Schedules fired per transaction.
    public var batchSize = 500
    /// How long a schedule's run log keeps a run.
    public var runLogDays: Int64 = 90
    /// A user's schedules at most, and per device.
    public var maximumPerUser = 1_000
    public var maximumPerDevice = 100

    public init() {}
}
