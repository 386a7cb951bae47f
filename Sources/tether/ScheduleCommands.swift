import ArgumentParser
import Tether
import TetherCLISupport
import TetherCloudProtocol

struct ScheduleCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "schedule",
        abstract:
            "Schedules the cloud fires: a device's or a group's data points written, or a scene run, once, weekly or monthly, at a time of day in a time zone.",
        subcommands: [List.self, Create.self, Show.self, Update.self, Enable.self, Disable.self, Delete.self, Logs.self]
    )

    static func describe(_ schedule: Schedule) {
        let fields = schedule.fields
        let recurrence = fields.recurrence
        let when: String =
            switch recurrence.repetition {
            case .once(let date): "once on \(date)"
            case .weekly: "every \(recurrence.repetition.wireName)"
            case .monthly(let days): "monthly on day \(days.sorted().map(String.init).joined(separator: ","))"
            }
        let target: String =
            switch fields.target {
            case .device(let did): "device \(did)"
            case .group(let id): "group \(id)"
            case .scene(let id): "scene \(id)"
            }
        let next = schedule.nextRun.map { "next \(localTime($0, in: recurrence.zone))" } ?? (fields.enabled ? "no run left" : "disabled")
        printLine(
            "\(schedule.id)  \(target)  \(when) at \(recurrence.time) \(recurrence.zone)  \(next)\(fields.remark.isEmpty ? "" : "  \"\(fields.remark)\"")")
        switch fields.command {
        case .attrs(let attrs)?: printLine("  writes \(JSONValue.object(attrs).serialized())")
        case .raw(let bytes, _)?: printLine("  sends \(bytes.count) bytes: \(bytes.tetherHex)")
        case nil: break
        }
    }

    static func show(_ schedule: Schedule, json: Bool) {
        if json { printJSON(schedule.json) } else { describe(schedule) }
    }

    /// `YYYY-MM-DD HH:MM` on the zone's wall clock.
    static func localTime(_ unixSeconds: Int64, in zone: ScheduleZone) -> String {
        let local = unixSeconds + zone.offset(at: unixSeconds)
        let minutes = ((local % 86_400) + 86_400) % 86_400 / 60
        let date = zone.date(at: unixSeconds).map(String.init(describing:)) ?? "?"
        return "\(date) \(ScheduleTime(hour: Int(minutes / 60), minute: Int(minutes % 60))!)"
    }

    /// A schedule's fields from the command line, read by the same codec the cloud reads.
    struct FieldOptions: ParsableArguments {
        @Option(help: "The device to act on.") var did: String?
        @Option(help: "Or: a single-product group of yours to write to.") var group: String?
        @Option(help: "Or: a scene of yours to run (no --set or --raw).") var scene: String?
        @Option(help: "The time of day, HH:MM, in --tz.") var time: String
        @Option(help: "Run once, on this date (YYYY-MM-DD).") var date: String?
        @Option(help: "Run on these days of the week (mon,tue,wed,thu,fri,sat,sun).") var weekly: String?
        @Option(help: "Run on these days of the month (1-31, comma-separated); months without the day are skipped.") var monthly: String?
        @Option(help: "An IANA time zone (Europe/Berlin); UTC by default.") var tz: String?
        @Option(name: .customLong("start-date"), help: "First date it may run (YYYY-MM-DD).") var startDate: String?
        @Option(name: .customLong("end-date"), help: "Last date it may run (YYYY-MM-DD).") var endDate: String?
        @Option(name: .customLong("set"), help: "A data point to write, NAME=VALUE (repeat; enums by label).") var assignments: [String] = []
        @Option(help: "Bytes to send instead, in hex.") var raw: String?
        @Option(name: .customLong("queue-ttl"), help: "Seconds a run waits for an offline device (0: fail at once).") var queueTTL: Int64 = 0
        @Option(help: "A note.") var remark: String?
        @Flag(help: "Create it disabled.") var disabled = false

        func validate() throws {
            let kinds = [date, weekly, monthly].compactMap { $0 }.count
            if kinds != 1 { throw ValidationError("give exactly one of --date, --weekly and --monthly") }
            if [did, group, scene].compactMap({ $0 }).count != 1 { throw ValidationError("give exactly one of --did, --group and --scene") }
            if scene != nil {
                if !assignments.isEmpty || raw != nil { throw ValidationError("a scene's schedule runs the scene: no --set or --raw") }
            } else if assignments.isEmpty == (raw == nil) {
                throw ValidationError("give --set NAME=VALUE (one or more) or --raw HEX")
            }
        }

        func fields() throws -> ScheduleFields {
            var object: JSONObject = ["time": .string(time), "enabled": .bool(!disabled), "queue_ttl": .int(queueTTL)]
            if let did { object["did"] = .string(did) }
            if let group { object["group_id"] = .string(group) }
            if let scene { object["scene_id"] = .string(scene) }
            if let date {
                object["repeat"] = "none"
                object["date"] = .string(date)
            }
            if let weekly { object["repeat"] = .string(weekly) }
            if let monthly {
                object["repeat"] = "day"
                object["days"] = .array(monthly.split(separator: ",").map { .string(String($0)) })
            }
            if let tz { object["tz"] = .string(tz) }
            if let startDate { object["start_date"] = .string(startDate) }
            if let endDate { object["end_date"] = .string(endDate) }
            if let remark { object["remark"] = .string(remark) }
            if let raw { object["raw"] = .string(raw) }
            if !assignments.isEmpty { object["attrs"] = .object(try JSONAssignments.attrs(assignments)) }
            do throws(CloudBodyError) {
                return try ScheduleFields(json: .object(object))
            } catch {
                // The body's field, named as the option that set it.
                let flags = [
                    "attrs": "set", "repeat": "weekly", "days": "monthly", "queue_ttl": "queue-ttl", "start_date": "start-date", "end_date": "end-date",
                ]
                let field = error.field.split(separator: "[").first.map(String.init) ?? error.field
                throw ValidationError("--\(flags[field] ?? field) \(error.message)")
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Your schedules, or one device's.")
        @OptionGroup var options: CloudClientOptions
        @Option(help: "Only this device's.") var did: String?
        @Flag(help: "Print JSON.") var json = false

        func run() async throws {
            let did = self.did
            let schedules = try await options.withClient(lanDiscovery: false) { try await $0.schedules.list(did: did) }
            if json { return printJSON(.array(schedules.map(\.json))) }
            if schedules.isEmpty { printLine("no schedules") }
            schedules.forEach(ScheduleCommand.describe)
        }
    }

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Schedule a device: tether schedule create --did D --time 07:00 --weekly mon,fri --tz Europe/Berlin --set LightSwitch=true")
        @OptionGroup var options: CloudClientOptions
        @OptionGroup var schedule: FieldOptions
        @Flag(help: "Print JSON.") var json = false

        func run() async throws {
            let fields = try schedule.fields()
            let created = try await options.withClient(lanDiscovery: false) { try await $0.schedules.create(fields) }
            ScheduleCommand.show(created, json: json)
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "One of your schedules.")
        @OptionGroup var options: CloudClientOptions
        @Argument(help: "The schedule's id.") var id: String
        @Flag(help: "Print JSON.") var json = false

        func run() async throws {
            let id = self.id
            let schedule = try await options.withClient(lanDiscovery: false) { try await $0.schedules.schedule(id) }
            ScheduleCommand.show(schedule, json: json)
        }
    }

    struct Update: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Replace a schedule's fields (its id and run log stay).")
        @OptionGroup var options: CloudClientOptions
        @Argument(help: "The schedule's id.") var id: String
        @OptionGroup var schedule: FieldOptions
        @Flag(help: "Print JSON.") var json = false

        func run() async throws {
            let (id, fields) = (self.id, try schedule.fields())
            let updated = try await options.withClient(lanDiscovery: false) { try await $0.schedules.update(id, fields) }
            ScheduleCommand.show(updated, json: json)
        }
    }

    /// The arguments of `enable` and `disable`.
    struct Switch: ParsableArguments {
        @OptionGroup var options: CloudClientOptions
        @Argument(help: "The schedule's id.") var id: String
        @Flag(help: "Print JSON.") var json = false

        func set(enabled: Bool) async throws {
            let id = self.id
            let updated = try await options.withClient(lanDiscovery: false) { client in
                var fields = try await client.schedules.schedule(id).fields
                fields.enabled = enabled
                return try await client.schedules.update(id, fields)
            }
            ScheduleCommand.show(updated, json: json)
        }
    }

    struct Enable: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Let a schedule run again, from its next time.")
        @OptionGroup var schedule: Switch

        func run() async throws { try await schedule.set(enabled: true) }
    }

    struct Disable: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Stop a schedule from running (it is kept).")
        @OptionGroup var schedule: Switch

        func run() async throws { try await schedule.set(enabled: false) }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delete a schedule and its run log.")
        @OptionGroup var options: CloudClientOptions
        @Argument(help: "The schedule's id.") var id: String

        func run() async throws {
            let id = self.id
            try await options.withClient(lanDiscovery: false) { try await $0.schedules.delete(id) }
            printLine("schedule \(id) deleted")
        }
    }

    struct Logs: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "A schedule's runs, newest first: when each was due and fired, and how its command ended.")
        @OptionGroup var options: CloudClientOptions
        @Argument(help: "The schedule's id.") var id: String
        @Option(help: "How many runs.") var limit = 20
        @Flag(help: "Print JSON.") var json = false

        func validate() throws {
            if !(1...1000).contains(limit) { throw ValidationError("--limit is 1 to 1000") }
        }

        func run() async throws {
            let (id, limit) = (self.id, self.limit)
            let runs = try await options.withClient(lanDiscovery: false) { try await $0.schedules.runs(of: id, limit: limit) }
            if json { return printJSON(.array(runs.map(\.json))) }
            if runs.isEmpty { printLine("no runs yet") }
            for run in runs {
                let command = run.commandID.map { "  command \($0)" } ?? ""
                let code = run.errorCode.map { "  error \($0)" } ?? ""
                printLine("due \(run.plannedAt / 1000)  \(run.state)\(command)\(code)\(run.message.isEmpty ? "" : "  \(run.message)")")
            }
        }
    }
}
