/// Checks a duration given on the command line in seconds: finite, within 0…`maximum`.
/// Returns a message for ArgumentParser's `ValidationError`, or nil when it is fine.
public func problemWithSeconds(_ value: Double, option: String, maximum: Double = 86_400, allowZero: Bool = true) -> String? {
    guard value.isFinite, value >= 0, value <= maximum, allowZero || value > 0 else {
        return "\(option) takes seconds \(allowZero ? "from 0" : "above 0") up to \(Int(maximum))"
    }
    return nil
}

/// `HOST:PORT` from the command line (the port 1…65535), or nil.
public func parseHostPort(_ text: String) -> (host: String, port: Int)? {
    guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]), (1...65535).contains(port) else { return nil }
    let host = String(text[..<colon])
    return host.isEmpty ? nil : (host, port)
}
