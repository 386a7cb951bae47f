import Testing
import TetherCore

@Suite("Civil calendar: days since 1970 and back")
struct CivilCalendarTests {
    @Test("known days: the epoch, the day before it, a leap day, the end of a century that is not a leap year")
    func knownDays() {
        #expect(CivilCalendar.daysSinceEpoch(year: 1970, month: 1, day: 1) == 0)
        #expect(CivilCalendar.date(daysSinceEpoch: -1) == (1969, 12, 31))
        #expect(CivilCalendar.daysSinceEpoch(year: 2000, month: 2, day: 29) == 11_016)
        #expect(CivilCalendar.date(daysSinceEpoch: 11_017) == (2000, 3, 1))
        #expect(CivilCalendar.date(daysSinceEpoch: CivilCalendar.daysSinceEpoch(year: 2100, month: 2, day: 28) + 1) == (2100, 3, 1))
        #expect(CivilCalendar.daysSinceEpoch(year: 2023, month: 11, day: 15) == 19_676)
    }

    @Test("every day from 1600 to 2400 round-trips, one day after another")
    func roundTrip() {
        var previous = CivilCalendar.daysSinceEpoch(year: 1600, month: 1, day: 1) - 1
        for year in Int64(1600)...2400 {
            for month in Int64(1)...12 {
                let length: Int64 =
                    switch month {
                    case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
                    case 4, 6, 9, 11: 30
                    default: 31
                    }
                for day in 1...length {
                    let days = CivilCalendar.daysSinceEpoch(year: year, month: month, day: day)
                    guard days == previous + 1, CivilCalendar.date(daysSinceEpoch: days) == (year, month, day) else {
                        Issue.record("\(year)-\(month)-\(day) is day \(days), after \(previous)")
                        return
                    }
                    previous = days
                }
            }
        }
    }
}
