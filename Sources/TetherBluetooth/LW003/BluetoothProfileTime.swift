/// Calendar arithmetic for showing device timestamps without Foundation.
enum BluetoothProfileTime {
    /// `2023-11-15T06:13:20+08:00` (or `Z` for UTC) for a Unix time shown at a UTC offset.
    static func iso8601(unixSeconds: Int64, offsetSeconds: Int) -> String {
        let local = unixSeconds + Int64(offsetSeconds)
        let days = local >= 0 ? local / 86_400 : (local - 86_399) / 86_400
        let secondOfDay = local - days * 86_400
        let (year, month, day) = civil(daysSinceEpoch: days)
        var text = "\(year)-\(pad(month))-\(pad(day))T\(pad(secondOfDay / 3600)):\(pad(secondOfDay / 60 % 60)):\(pad(secondOfDay % 60))"
        if offsetSeconds == 0 {
            text += "Z"
        } else {
            let magnitude = abs(offsetSeconds)
            text += (offsetSeconds < 0 ? "-" : "+") + pad(Int64(magnitude / 3600)) + ":" + pad(Int64(magnitude / 60 % 60))
        }
        return text
    }

    private static func pad(_ value: Int64) -> String { value < 10 ? "0\(value)" : "\(value)" }

    /// Year, month, day of the proleptic Gregorian calendar (Howard Hinnant's `civil_from_days`).
    private static func civil(daysSinceEpoch: Int64) -> (Int64, Int64, Int64) {
        let z = daysSinceEpoch + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthPrime = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthPrime + 2) / 5 + 1
        let month = monthPrime < 10 ? monthPrime + 3 : monthPrime - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}
