import Logging
import ServiceLifecycle
import TetherCore

/// The node's automations in one loop, every `interval` (and once at start): the devices rules
/// watch read again, due schedules
/// fired, due steps of runs taken, rule events a stopped node left behind taken, old logs pruned
/// hourly. One after the other, so that an idle node holds at most one connection for them.
struct AutomationLoop: Service {
    let firing: ScheduleFiring
    let runner: AutomationRunner
    let rules: RuleEngine
    let configuration: SchedulerConfiguration
    let logger: Logger

    func run() async throws {
        await cancelWhenGracefulShutdown {
            var lastPrune: Int64 = 0
            while !Task.isCancelled {
                await rules.refreshWatched()
                do {
                    try await firing.fireDue()
                    try await runner.advanceDue()
                    await rules.process(ids: nil)
                    let now = firing.clock.nowMs()
                    if now - lastPrune > 3_600_000 {
                        let before = now - configuration.runLogDays * 86_400_000
                        try await ScheduleStore(firing.database).pruneRuns(beforeMs: before)
                        try await AutomationRunStore(runner.database).prune(beforeMs: before)
                        lastPrune = now
                    }
                } catch {
                    if !Task.isCancelled { logger.warning("automations failed", metadata: ["error": "\(error)"]) }
                }
                try? await Task.sleep(for: configuration.interval)
            }
        }
    }
}
