import TetherCore

/// Device timestamps as ISO 8601 text, without Foundation.
enum BluetoothProfileTime {
    /// `2023-11-15T06:13:20+08:00` (or `Z` for UTC) for a Unix time shown at a UTC offset.
    static func iso8601(unixSeconds: Int64, offsetSeconds: Int) -> String {
        let local = unixSeconds + Int64(offsetSeconds)
        let days = local >= 0 ? local / 86_400 : (local - 86_399) / 86_400
        let secondOfDay = local - days * 86_400
        let (year, month, day) = CivilCalendar.date(daysSinceEpoch: days)
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
}
