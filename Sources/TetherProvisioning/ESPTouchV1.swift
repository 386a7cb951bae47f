public import TetherCore

/// ESP-Touch v1 (`shared/reference/provisioning.md` §5): the phone sends UDP datagrams whose
/// lengths carry the data; the device sniffs frame lengths. Pure values: the encoder gives the
/// lengths in the order Espressif's app sends them, the decoder rebuilds the data from lengths.
public enum ESPTouchV1 {
    /// Added to every data length (`EXTRA_LEN`).
    public static let extraLength = 40
    /// The guide code, repeated for about 2 s before the data.
    public static let guide = [515, 514, 513, 512]
    /// Where the phone sends them: UDP 7001 of the broadcast address.
    public static let port = 7001
    /// Where the device acknowledges: UDP 18266 of the phone.
    public static let acknowledgementPort = 18266

    /// The three lengths of data byte `byte` at `index`.
    static func code(_ byte: UInt8, index: Int) -> [Int] {
        let crc = Int(CRC8.maxim([byte, UInt8(index)]))
        let value = Int(byte)
        return [((crc >> 4) << 4 | value >> 4) + extraLength, (0x100 | index) + extraLength, ((crc & 0x0F) << 4 | value & 0x0F) + extraLength]
    }

    /// The data bytes in index order, as a device puts them back together: total length, password
    /// length, the SSID's and BSSID's CRCs, their XOR, the phone's IPv4 address, the password, the
    /// SSID (sent only when `hidden`: current apps always send it), the BSSID.
    public static func dataBytes(_ credentials: SmartConfigCredentials, phoneIP: [UInt8], hidden: Bool = true) throws(TetherError) -> [UInt8] {
        guard phoneIP.count == 4 else { throw TetherError(.invalidArgument, "the phone's IPv4 address is 4 bytes") }
        let (ssid, password) = (credentials.ssid, credentials.password)
        let total = UInt8(9 + password.count + ssid.count)
        let head: [UInt8] = [total, UInt8(password.count), CRC8.maxim(ssid), CRC8.maxim(credentials.bssid)]
        // The XOR covers the SSID whether or not it is sent.
        let checked = head + phoneIP + password + ssid
        let xor = checked.reduce(0, ^)
        return head + [xor] + phoneIP + password + (hidden ? ssid : []) + credentials.bssid
    }

    /// The data code: every data byte's three lengths, in the order Espressif's app sends them
    /// (indices 0 to 4, then the address, password and SSID, with the BSSID's codes at code
    /// positions 5, 9, 13, …).
    public static func datum(_ credentials: SmartConfigCredentials, phoneIP: [UInt8], hidden: Bool = true) throws(TetherError) -> [Int] {
        let bytes = try dataBytes(credentials, phoneIP: phoneIP, hidden: hidden)
        let bssidStart = bytes.count - 6
        var codes = (0..<bssidStart).map { code(bytes[$0], index: $0) }
        for k in 0..<6 {
            let bssidCode = code(bytes[bssidStart + k], index: bssidStart + k)
            let position = 5 + 4 * k
            if position <= codes.count { codes.insert(bssidCode, at: position) } else { codes.append(bssidCode) }
        }
        return codes.flatMap { $0 }
    }
}
