import Testing
import TetherCloudProtocol
import TetherCore

@Suite("Schedule times: dates, zones and recurrence")
struct ScheduleCalendarTests {
    static func utc(_ year: Int, _ month: Int, _ day: Int, _ hour: Int64 = 0, _ minute: Int64 = 0) -> Int64 {
        ScheduleDate(year: year, month: month, day: day)!.dayNumber * 86_400 + hour * 3600 + minute * 60
    }

    static let berlin = ScheduleZone(identifier: "Europe/Berlin")!
    static let newYork = ScheduleZone(identifier: "America/New_York")!

    /// The runs of `recurrence` after `start`, at most `count`.
    static func runs(_ recurrence: ScheduleRecurrence, after start: Int64, count: Int) -> [Int64] {
        var runs: [Int64] = []
        var instant = start
        while runs.count < count, let next = recurrence.nextRun(after: instant) {
            #expect(next > instant)
            runs.append(next)
            instant = next
        }
        return runs
    }

    @Test("dates: day numbers against known instants, weekdays, month lengths, parsing that refuses what is not YYYY-MM-DD")
    func dates() throws {
        #expect(ScheduleDate(year: 1970, month: 1, day: 1)!.dayNumber == 0)
        // Known instants: 2000-03-01 and 2027-03-28 at 00:00 UTC.
        #expect(ScheduleDate(year: 2000, month: 3, day: 1)!.dayNumber * 86_400 == 951_868_800)
        #expect(ScheduleDate(year: 2027, month: 3, day: 28)!.dayNumber * 86_400 == 1_806_192_000)
        #expect(ScheduleDate(year: 2027, month: 3, day: 28)!.weekday == .sun)
        #expect(ScheduleDate(year: 1970, month: 1, day: 1)!.weekday == .thu)
        for day in stride(from: Int64(0), through: 2_900_000, by: 997) {
            let date = try #require(ScheduleDate(dayNumber: day))
            #expect(date.dayNumber == day)
            #expect(ScheduleDate(parsing: date.description) == date)
        }
        #expect(ScheduleDate.days(inMonth: 2, of: 2028) == 29 && ScheduleDate.days(inMonth: 2, of: 2100) == 28 && ScheduleDate.days(inMonth: 2, of: 2000) == 29)
        for bad in ["2027-02-29", "2027-13-01", "2027-00-10", "27-03-01", "2027-3-01", "2027-03-01T", "２０２７-03-01", "", "2027--3-01", "1969-12-31"] {
            #expect(ScheduleDate(parsing: bad) == nil, "\(bad)")
        }
        #expect(ScheduleDate(parsing: "2028-02-29") != nil)
        for bad in ["24:00", "7:00", "07:60", "07-00", "0700", "", "07:0a"] { #expect(ScheduleTime(parsing: bad) == nil, "\(bad)") }
        #expect(ScheduleTime(parsing: "23:59")?.description == "23:59")
        #expect(ScheduleZone(identifier: "Mars/Olympus") == nil && ScheduleZone(identifier: "") == nil)
    }

    @Test("weekly at 07:00 in Berlin and New York stays 07:00 local across both changes of the clocks")
    func weeklyAcrossChanges() {
        let monday = ScheduleRecurrence(repetition: .weekly([.mon]), time: ScheduleTime(hour: 7, minute: 0)!, zone: Self.berlin)
        #expect(
            Self.runs(monday, after: Self.utc(2027, 3, 15), count: 3) == [Self.utc(2027, 3, 15, 6), Self.utc(2027, 3, 22, 6), Self.utc(2027, 3, 29, 5)])
        #expect(
            Self.runs(monday, after: Self.utc(2027, 10, 24), count: 2) == [Self.utc(2027, 10, 25, 5), Self.utc(2027, 11, 1, 6)])
        // New York changes on other days (14 March, 7 November 2027).
        let ny = ScheduleRecurrence(repetition: .weekly([.sat, .sun]), time: ScheduleTime(hour: 7, minute: 0)!, zone: Self.newYork)
        #expect(
            Self.runs(ny, after: Self.utc(2027, 3, 13), count: 3) == [Self.utc(2027, 3, 13, 12), Self.utc(2027, 3, 14, 11), Self.utc(2027, 3, 20, 11)])
        #expect(Self.runs(ny, after: Self.utc(2027, 11, 6), count: 2) == [Self.utc(2027, 11, 6, 11), Self.utc(2027, 11, 7, 12)])
    }

    @Test("a time the clocks skip runs an hour later; a time they repeat runs once, at its first occurrence")
    func skippedAndRepeatedTimes() {
        let night = ScheduleRecurrence(repetition: .weekly([.sun]), time: ScheduleTime(hour: 2, minute: 30)!, zone: Self.berlin)
        // 28 March 2027: 02:00 CET → 03:00 CEST; 02:30 is read as 03:30 CEST (01:30 UTC).
        #expect(Self.runs(night, after: Self.utc(2027, 3, 27), count: 2) == [Self.utc(2027, 3, 28, 1, 30), Self.utc(2027, 4, 4, 0, 30)])
        // 31 October 2027: 03:00 CEST → 02:00 CET; 02:30 happens twice, the run is the first (00:30 UTC).
        #expect(Self.runs(night, after: Self.utc(2027, 10, 30), count: 2) == [Self.utc(2027, 10, 31, 0, 30), Self.utc(2027, 11, 7, 1, 30)])
        #expect(Self.berlin.instant(localSeconds: Self.utc(2027, 10, 31, 2, 30)) == Self.utc(2027, 10, 31, 0, 30))
        #expect(Self.berlin.instant(localSeconds: Self.utc(2027, 3, 28, 2, 30)) == Self.utc(2027, 3, 28, 1, 30))
    }

    @Test("monthly on the 29th to 31st skips the months that lack the day; once runs once; start and end dates bound every kind")
    func monthlyOnceAndWindows() {
        let seven = ScheduleTime(hour: 7, minute: 0)!
        let thirtyFirst = ScheduleRecurrence(repetition: .monthly([31]), time: seven)
        #expect(
            Self.runs(thirtyFirst, after: Self.utc(2027, 1, 1), count: 4)
                == [Self.utc(2027, 1, 31, 7), Self.utc(2027, 3, 31, 7), Self.utc(2027, 5, 31, 7), Self.utc(2027, 7, 31, 7)])
        let twentyNinth = ScheduleRecurrence(repetition: .monthly([29, 30]), time: seven)
        #expect(
            Self.runs(twentyNinth, after: Self.utc(2027, 1, 30, 8), count: 2) == [Self.utc(2027, 3, 29, 7), Self.utc(2027, 3, 30, 7)])
        #expect(Self.runs(twentyNinth, after: Self.utc(2028, 2, 1), count: 2) == [Self.utc(2028, 2, 29, 7), Self.utc(2028, 3, 29, 7)])
        let once = ScheduleRecurrence(repetition: .once(ScheduleDate(year: 2027, month: 6, day: 1)!), time: seven, zone: Self.berlin)
        #expect(Self.runs(once, after: Self.utc(2027, 1, 1), count: 5) == [Self.utc(2027, 6, 1, 5)])
        #expect(once.nextRun(after: Self.utc(2027, 6, 1, 5)) == nil)
        var window = ScheduleRecurrence(
            repetition: .weekly(Set(ScheduleWeekday.allCases)), time: seven, startDate: ScheduleDate(year: 2027, month: 2, day: 27),
            endDate: ScheduleDate(year: 2027, month: 3, day: 2))
        #expect(
            Self.runs(window, after: Self.utc(2027, 1, 1), count: 10)
                == [Self.utc(2027, 2, 27, 7), Self.utc(2027, 2, 28, 7), Self.utc(2027, 3, 1, 7), Self.utc(2027, 3, 2, 7)])
        window.repetition = .monthly([31])
        #expect(window.nextRun(after: Self.utc(2027, 1, 1)) == nil)
    }

    @Test("every day's run falls on that day at its wall-clock time, or just after it where the clocks skip it, in zones with odd changes")
    func wallClockProperty() throws {
        let zones = ["Europe/Berlin", "America/New_York", "Australia/Lord_Howe", "America/Santiago", "Asia/Kolkata", "Pacific/Auckland"]
        let everyDay = ScheduleRepeat.weekly(Set(ScheduleWeekday.allCases))
        for name in zones {
            let zone = try #require(ScheduleZone(identifier: name))
            for (hour, minute) in [(0, 0), (0, 30), (1, 30), (2, 0), (2, 15), (2, 30), (3, 0), (23, 59)] {
                let time = try #require(ScheduleTime(hour: hour, minute: minute))
                let recurrence = ScheduleRecurrence(repetition: everyDay, time: time, zone: zone)
                var previous: ScheduleDate?
                for run in Self.runs(recurrence, after: Self.utc(2027, 1, 1), count: 370) {
                    let date = try #require(zone.date(at: run))
                    if let previous { #expect(date.dayNumber == previous.dayNumber + 1, "\(name) \(time): a day skipped or repeated at \(date)") }
                    previous = date
                    let local = run + zone.offset(at: run)
                    let secondsIntoDay = ((local % 86_400) + 86_400) % 86_400
                    let wanted = Int64(hour * 3600 + minute * 60)
                    // Equal, or moved forward by a change of the clocks that day (at most two hours).
                    let moved = secondsIntoDay - wanted
                    #expect(moved == 0 || (moved > 0 && moved <= 7200 && zone.offset(at: run) != zone.offset(at: run - 86_400)), "\(name) \(time) on \(date)")
                }
            }
        }
        // Lord Howe moves by half an hour: 02:15 on 3 October 2027 does not exist (02:00 → 02:30).
        let lordHowe = try #require(ScheduleZone(identifier: "Australia/Lord_Howe"))
        #expect(lordHowe.instant(localSeconds: Self.utc(2027, 10, 3, 2, 15)) == Self.utc(2027, 10, 2, 15, 45))
    }

    @Test("a start or a one-time date years ahead is found; repeat is read in any case")
    func farAheadAndCase() throws {
        let seven = ScheduleTime(hour: 7, minute: 0)!
        let far = ScheduleRecurrence(repetition: .weekly([.mon]), time: seven, startDate: ScheduleDate(year: 2031, month: 1, day: 1))
        #expect(far.nextRun(after: Self.utc(2027, 1, 1)) == Self.utc(2031, 1, 6, 7))
        let once = ScheduleRecurrence(repetition: .once(ScheduleDate(year: 2030, month: 5, day: 5)!), time: seven)
        #expect(once.nextRun(after: Self.utc(2027, 1, 1)) == Self.utc(2030, 5, 5, 7))
        let fields = try ScheduleFieldsBody(json: ["did": "d", "time": "07:00", "repeat": "MON,Fri", "attrs": ["a": 1]])
        #expect(fields.recurrence.repetition == .weekly([.mon, .fri]))
        #expect(
            try ScheduleFieldsBody(json: ["did": "d", "time": "07:00", "repeat": "None", "date": "2030-01-01", "attrs": ["a": 1]]).recurrence.repetition
                == .once(ScheduleDate(year: 2030, month: 1, day: 1)!))
    }

    @Test("schedule bodies read back as written, in both raw codings; bad fields name themselves")
    func bodies() throws {
        let fields = ScheduleFieldsBody(
            target: .device(did: "d1"),
            recurrence: ScheduleRecurrence(
                repetition: .monthly([1, 15]), time: ScheduleTime(hour: 6, minute: 30)!, zone: Self.berlin,
                startDate: ScheduleDate(year: 2027, month: 1, day: 1)),
            enabled: false, remark: "lights", command: .attrs(["LED": true]), queueSeconds: 30)
        #expect(try ScheduleFieldsBody(json: try JSONValue.parse(fields.json.serialized())) == fields)
        #expect(fields.json["days"] == ["1", "15"] && fields.json["repeat"] == "day" && fields.json["end_date"] == "")
        for raw in [ScheduleCommand.raw([0xAB, 1], base64: false), .raw([0xAB, 1], base64: true)] {
            var copy = fields
            copy.command = raw
            copy.target = .group(id: "g")
            #expect(try ScheduleFieldsBody(json: copy.json) == copy)
        }
        var scene = fields
        scene.target = .scene(id: "s1")
        // A scene's schedule has no command of its own.
        #expect(try ScheduleFieldsBody(json: scene.json).command == nil)
        let body = ScheduleBody(id: "sc_1", fields: fields, productKey: "pk", createdAt: 5, updatedAt: 6, nextRun: nil)
        #expect(try ScheduleBody(json: try JSONValue.parse(body.json.serialized())) == body)
        let run = ScheduleRunBody(id: 3, scheduleID: "sc_1", plannedAt: 1000, firedAt: 1005, commandID: 9, state: "applied")
        #expect(try ScheduleRunBody(json: run.json) == run)
        let change = ScheduleChangeBody(id: "sc_1", change: .deleted, did: "d1")
        #expect(try ScheduleChangeBody(json: change.json) == change)
        // The path's device wins over the body's; the common form takes the first target given.
        #expect(
            try ScheduleFieldsBody(json: ["did": "x", "time": "07:00", "date": "2030-01-01", "attrs": ["a": 1]], did: "path").target == .device(did: "path"))
        #expect(try ScheduleFieldsBody(json: ["did": "", "group_id": 12, "time": "07:00", "repeat": "sun", "raw": "01"]).target == .group(id: "12"))
        #expect(throws: CloudBodyError.self) { try ScheduleFieldsBody(json: ["time": "07:00", "repeat": "sun", "raw": "01"]) }
        do throws(CloudBodyError) {
            _ = try ScheduleFieldsBody(json: ["did": "d", "time": "07:00", "repeat": "day", "days": ["1", "x"], "attrs": ["a": 1]])
            Issue.record("a bad day was read")
        } catch {
            #expect(error.field == "days[1]")
        }
    }

    @Test("arbitrary schedule bodies are read or refused, never a crash; what is read writes back the same (bounded fuzz)")
    func fuzz() {
        var generator = SplitMix64(seed: 20_261_124)
        let keys = [
            "did", "group_id", "scene_id", "time", "date", "repeat", "days", "start_date", "end_date", "enabled", "remark", "tz", "attrs", "raw",
            "binary_coding", "queue_ttl",
        ]
        let values: [JSONValue] = [
            "07:00", "23:59", "24:00", "2027-02-28", "2028-02-29", "2027-02-29", "none", "day", "mon,tue", "sun,", ",", "", "Europe/Berlin", "UTC", "Mars/X",
            "AQID", "0102", "zz", "hex", "base64", .int(0), .int(-1), .int(31), .int(Int64.max), .double(1.5), .bool(true), .null, ["1", "31"], ["0"],
            [.int(15)],
            ["a": 1], [:], .array([]),
        ]
        for _ in 0..<3_000 {
            var object: JSONObject = [:]
            for _ in 0..<Int.random(in: 0...9, using: &generator) {
                object[keys.randomElement(using: &generator)!] = values.randomElement(using: &generator)!
            }
            guard let fields = try? ScheduleFieldsBody(json: .object(object)) else { continue }
            #expect((try? ScheduleFieldsBody(json: fields.json)) == fields, "\(JSONValue.object(object).serialized())")
            _ = fields.recurrence.nextRun(after: Int64.random(in: 0...4_000_000_000, using: &generator))
        }
    }
}
