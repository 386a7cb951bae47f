import Foundation
import TetherCore

/// A calendar date as a schedule's owner writes it (`YYYY-MM-DD`, proleptic Gregorian), with no
/// zone: the zone is the schedule's.
public struct ScheduleDate: Sendable, Hashable, Comparable, CustomStringConvertible {
    public let year: Int
    public let month: Int
    public let day: Int

    public init?(year: Int, month: Int, day: Int) {
        guard (1970...9999).contains(year), (1...12).contains(month), (1...Self.days(inMonth: month, of: year)).contains(day) else { return nil }
        self.year = year
        self.month = month
        self.day = day
    }

    /// Exactly `YYYY-MM-DD`.
    public init?(parsing text: String) {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
            parts.allSatisfy({ $0.utf8.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) } }),
            let year = Int(parts[0]), let month = Int(parts[1]), let day = Int(parts[2])
        else { return nil }
        self.init(year: year, month: month, day: day)
    }

    /// Days since 1970-01-01.
    public var dayNumber: Int64 {
        CivilCalendar.daysSinceEpoch(year: Int64(year), month: Int64(month), day: Int64(day))
    }

    /// The date `dayNumber` days after 1970-01-01; nil outside 1970–9999.
    public init?(dayNumber: Int64) {
        let date = CivilCalendar.date(daysSinceEpoch: dayNumber)
        guard let year = Int(exactly: date.year) else { return nil }
        self.init(year: year, month: Int(date.month), day: Int(date.day))
    }

    public var weekday: ScheduleWeekday {
        // 1970-01-01 was a Thursday.
        let index = Int(((dayNumber % 7) + 7 + 3) % 7)
        return ScheduleWeekday.allCases[index]
    }

    public static func days(inMonth month: Int, of year: Int) -> Int {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    public static func < (lhs: ScheduleDate, rhs: ScheduleDate) -> Bool { lhs.dayNumber < rhs.dayNumber }

    public var description: String {
        let month = month < 10 ? "0\(month)" : "\(month)"
        let day = day < 10 ? "0\(day)" : "\(day)"
        return "\(year)-\(month)-\(day)"
    }
}

/// A time of day, to the minute (`HH:MM`).
public struct ScheduleTime: Sendable, Hashable, CustomStringConvertible {
    public let hour: Int
    public let minute: Int

    public init?(hour: Int, minute: Int) {
        guard (0...23).contains(hour), (0...59).contains(minute) else { return nil }
        self.hour = hour
        self.minute = minute
    }

    /// Exactly `HH:MM`.
    public init?(parsing text: String) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, parts.allSatisfy({ $0.count == 2 && $0.utf8.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) } }),
            let hour = Int(parts[0]), let minute = Int(parts[1])
        else { return nil }
        self.init(hour: hour, minute: minute)
    }

    var secondsIntoDay: Int64 { Int64(hour * 3600 + minute * 60) }

    public var description: String { (hour < 10 ? "0\(hour)" : "\(hour)") + ":" + (minute < 10 ? "0\(minute)" : "\(minute)") }
}

/// A day of the week, as the Open API spells it in `repeat`.
public enum ScheduleWeekday: String, Sendable, Hashable, CaseIterable, Comparable {
    case mon, tue, wed, thu, fri, sat, sun

    public static func < (lhs: ScheduleWeekday, rhs: ScheduleWeekday) -> Bool {
        allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
    }
}

/// When a schedule runs: once, on days of the week, or on days of the month. A day of the month
/// that a month lacks (the 29th–31st) is skipped in that month, as cron does.
public enum ScheduleRepeat: Sendable, Hashable {
    case once(ScheduleDate)
    case weekly(Set<ScheduleWeekday>)
    case monthly(Set<Int>)

    /// The Open API's `repeat`: `none`, a list such as `mon,wed`, or `day` (with `days`).
    public var wireName: String {
        switch self {
        case .once: return "none"
        case .weekly(let days): return days.sorted().map(\.rawValue).joined(separator: ",")
        case .monthly: return "day"
        }
    }

    func runs(on date: ScheduleDate) -> Bool {
        switch self {
        case .once(let day): return day == date
        case .weekly(let days): return days.contains(date.weekday)
        case .monthly(let days): return days.contains(date.day)
        }
    }
}

/// An IANA time zone (`Europe/Berlin`), as the schedule's `tz` names it.
public struct ScheduleZone: Sendable, Hashable, CustomStringConvertible {
    public let identifier: String
    private let zone: TimeZone

    public static let utc = ScheduleZone(identifier: "UTC")!

    /// Nil for a name the system's zone database does not know.
    public init?(identifier: String) {
        guard !identifier.isEmpty, identifier.utf8.count <= 64, let zone = TimeZone(identifier: identifier) else { return nil }
        self.identifier = identifier
        self.zone = zone
    }

    /// Seconds east of UTC at the instant `unixSeconds`.
    public func offset(at unixSeconds: Int64) -> Int64 {
        Int64(zone.secondsFromGMT(for: Date(timeIntervalSince1970: TimeInterval(unixSeconds))))
    }

    /// The instant the wall clock in this zone reads `seconds` after local midnight of 1970-01-01.
    /// A time that occurs twice (the clocks go back) is its first occurrence; a time that does not
    /// occur (the clocks go forward) is read with the offset before the change, which moves it
    /// forward by the change (02:30 on the day Berlin skips from 02:00 to 03:00 is 03:30 CEST):
    /// RFC 5545 §3.3.5's rule, and java.time's.
    public func instant(localSeconds local: Int64) -> Int64 {
        let before = offset(at: local - 86_400)
        let after = offset(at: local + 86_400)
        let candidates = Set([local - before, local - after]).filter { $0 + offset(at: $0) == local }
        return candidates.min() ?? local - before
    }

    /// The local date at the instant `unixSeconds`.
    public func date(at unixSeconds: Int64) -> ScheduleDate? {
        let local = unixSeconds + offset(at: unixSeconds)
        return ScheduleDate(dayNumber: local >= 0 ? local / 86_400 : (local - 86_399) / 86_400)
    }

    public var description: String { identifier }

    public static func == (lhs: ScheduleZone, rhs: ScheduleZone) -> Bool { lhs.identifier == rhs.identifier }
    public func hash(into hasher: inout Hasher) { hasher.combine(identifier) }
}

/// A schedule's times: its repetition at a time of day in a zone, inside an inclusive window of
/// dates. Pure: the cloud fires by it, and an app can show the next run the cloud will fire.
public struct ScheduleRecurrence: Sendable, Hashable {
    public var repetition: ScheduleRepeat
    public var time: ScheduleTime
    public var zone: ScheduleZone
    public var startDate: ScheduleDate?
    public var endDate: ScheduleDate?

    public init(repetition: ScheduleRepeat, time: ScheduleTime, zone: ScheduleZone = .utc, startDate: ScheduleDate? = nil, endDate: ScheduleDate? = nil) {
        self.repetition = repetition
        self.time = time
        self.zone = zone
        self.startDate = startDate
        self.endDate = endDate
    }

    /// How far ahead a run is looked for: further than any repetition's longest gap (a monthly
    /// 31st skips at most two months).
    static let horizonDays: Int64 = 400

    /// The first run strictly after `unixSeconds`, in Unix seconds; nil when none is left.
    public func nextRun(after unixSeconds: Int64) -> Int64? {
        guard let today = zone.date(at: unixSeconds) else { return nil }
        var day = today.dayNumber - 1
        if case .once(let date) = repetition { day = max(day, date.dayNumber) }
        if let startDate { day = max(day, startDate.dayNumber) }
        // From the first day that may run: a start far ahead is still found.
        var last = day + Self.horizonDays
        if case .once(let date) = repetition { last = min(last, date.dayNumber) }
        if let endDate { last = min(last, endDate.dayNumber) }
        while day <= last {
            if let date = ScheduleDate(dayNumber: day), repetition.runs(on: date) {
                let run = zone.instant(localSeconds: day * 86_400 + time.secondsIntoDay)
                if run > unixSeconds { return run }
            }
            day += 1
        }
        return nil
    }
}
