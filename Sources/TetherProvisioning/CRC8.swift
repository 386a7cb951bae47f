/// CRC-8/MAXIM (reflected polynomial 0x8C, initial value 0, no final XOR): the checksum of
/// ESP-Touch v1, v2 and AirKiss.
public enum CRC8 {
    public static func maxim(_ bytes: some Sequence<UInt8>) -> UInt8 {
        var crc: UInt8 = 0
        for byte in bytes {
            crc ^= byte
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0x8C : crc >> 1 }
        }
        return crc
    }
}
