import TetherBluetooth
import TetherCore

/// The beacon sightings a simulated LW003-V3 has stored: every type of the reference, with the
/// public iBeacon and Eddystone frames for types 0–3 and opaque bytes for the MOKO ones,
/// spread over the last days, oldest first. Deterministic for a seed.
enum LW003BeaconLog {
    static func records(count: Int, now: UInt32, timeZoneHalfHours: Int8, seed: UInt64) -> [LW003BeaconRecord] {
        var random = SplitMix64(seed: seed)
        let span: UInt32 = 7 * 86_400
        var records: [LW003BeaconRecord] = []
        for index in 0..<count {
            let type = LW003BeaconType.allCases[index % LW003BeaconType.allCases.count]
            let age = UInt32(truncatingIfNeeded: random.next() % UInt64(span))
            let mac = (0..<6).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            let macText = mac.map { [$0].tetherHex.uppercased() }.joined(separator: ":")
            let rssi = -40 - Int8(truncatingIfNeeded: random.next() % 60)
            records.append(
                LW003BeaconRecord(
                    type: type, scanTime: now - age, timeZoneHalfHours: timeZoneHalfHours, mac: macText, rssi: rssi,
                    raw: raw(type, index: index, random: &random)))
        }
        return records.sorted { $0.scanTime < $1.scanTime }
    }

    /// What such a beacon advertises, as complete AD structures.
    static func raw(_ type: LW003BeaconType, index: Int, random: inout SplitMix64) -> [UInt8] {
        let flags: [UInt8] = [0x02, 0x01, 0x06]
        func eddystone(_ frame: [UInt8]) -> [UInt8] {
            flags + [0x03, 0x03, 0xAA, 0xFE] + [UInt8(3 + frame.count), 0x16, 0xAA, 0xFE] + frame
        }
        switch type {
        case .iBeacon:
            let uuid: [UInt8] = [0xE2, 0xC5, 0x6D, 0xB5, 0xDF, 0xFB, 0x48, 0xD2, 0xB0, 0x60, 0xD0, 0xF5, 0xA7, 0x10, 0x96, 0xE0]
            return [0x1A, 0xFF, 0x4C, 0x00, 0x02, 0x15] + uuid + [0x00, 0x01, UInt8(index >> 8 & 0xFF), UInt8(index & 0xFF), 0xC5]
        case .eddystoneUID:
            return eddystone([0x00, 0xEE] + (0..<16).map { _ in UInt8(truncatingIfNeeded: random.next()) } + [0x00, 0x00])
        case .eddystoneURL:
            return eddystone([0x10, 0xEE, 0x03] + Array("tether.dev".utf8))
        case .eddystoneTLM:
            let battery = UInt16(2900 + random.next() % 400)
            return eddystone([0x20, 0x00, UInt8(battery >> 8), UInt8(battery & 0xFF), 0x19, 0x80, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x20, 0x00])
        default:
            // MOKO's BeaconX Pro frames are not in the sources: opaque bytes under service data FEAB.
            let payload = (0..<8).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            return flags + [UInt8(3 + payload.count), 0x16, 0xAB, 0xFE] + payload
        }
    }
}
