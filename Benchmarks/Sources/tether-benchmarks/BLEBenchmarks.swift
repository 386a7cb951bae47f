import ArgumentParser
import Foundation
import Histogram
import TetherBlueZ
import TetherBluetooth
import TetherCore
import TetherDBus

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// LW003-V3 storage frames through the parser: records decoded per second (and encoded, as the
/// simulator does), over a mix of every record type and raw size.
struct LW003Parse: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lw003-parse", abstract: "Decode LW003-V3 storage frames: records per second through the parser.")

    @Option(help: "Records in the upload that is decoded, again and again.") var records = 10_000
    @Option(help: "text or json.") var format = "text"

    func run() throws {
        guard (1...1_000_000).contains(records) else { throw ValidationError("--records is 1 to 1000000") }
        var generator = SplitMix64(seed: 7)
        let upload = (0..<records).map { index in
            LW003BeaconRecord(
                type: LW003BeaconType.allCases[index % LW003BeaconType.allCases.count], scanTime: 1_700_000_000 + UInt32(index),
                timeZoneHalfHours: 16, mac: "C8:47:8C:12:\(Self.hex(index >> 8)):\(Self.hex(index))", rssi: -40 - Int8(index % 50),
                raw: (0..<Int(generator.next() % 32)).map { _ in UInt8(truncatingIfNeeded: generator.next()) })
        }
        let frames = try LW003StorageFrame.frames(for: upload).map { try $0.bytes() }
        let bytes = frames.reduce(0) { $0 + $1.count }
        let decode = try TetherBenchmarks.nanosecondsPerOperation(iterations: 5) {
            var decoded = 0
            var checksum = 0
            for frame in frames {
                guard case .records(let part) = try LW003StorageFrame(decoding: frame) else { continue }
                decoded += part.count
                // Every field is read, so that no part of the decoding can be left out by the optimizer.
                for record in part {
                    checksum &+= record.mac.utf8.count &+ record.raw.count &+ Int(record.rssi) &+ Int(record.typeByte) &+ Int(record.scanTime)
                }
            }
            precondition(decoded == records && checksum != 0)
        }
        let encode = try TetherBenchmarks.nanosecondsPerOperation(iterations: 5) {
            _ = try LW003StorageFrame.frames(for: upload).map { try $0.bytes() }
        }
        let decodedPerSecond = Double(records) / decode * 1e9
        let encodedPerSecond = Double(records) / encode * 1e9
        if format == "json" {
            print(
                JSONValue.object([
                    "records": .int(Int64(records)), "frames": .int(Int64(frames.count)), "bytes": .int(Int64(bytes)),
                    "decodedRecordsPerSecond": .int(Int64(decodedPerSecond)), "encodedRecordsPerSecond": .int(Int64(encodedPerSecond)),
                ]).serialized())
        } else {
            print("LW003 storage upload: \(records) records in \(frames.count) frames (\(bytes) bytes)")
            print("  decode  \(Int(decodedPerSecond)) records/s")
            print("  encode  \(Int(encodedPerSecond)) records/s")
        }
    }

    static func hex(_ value: Int) -> String {
        [UInt8(truncatingIfNeeded: value)].tetherHex.uppercased()
    }
}

/// Notification-to-app latency through the BlueZ central: a peripheral stamps each notification
/// with its CLOCK_MONOTONIC time (Benchmarks/BLE/ble_clock_peripheral.py) and the time it reached
/// the notification stream is recorded (scripts/bench-ble.sh runs it beside bleak on bluezoo).
struct BLELatency: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ble-latency", abstract: "Time notifications from a clock peripheral to the app through BlueZCentral.")

    @Option(help: "The central's adapter.") var adapter = "hci0"
    @Option(help: "The clock peripheral's address.") var address: String
    @Option(help: "Notifications to time (a tenth more first, untimed).") var count = 1_000
    @Option(help: "text or json.") var format = "text"

    static let clock = BluetoothCharacteristicID(
        service: try! BluetoothUUID("7e7e0001-0000-4000-8000-7e7e7e7e7e7e"), characteristic: try! BluetoothUUID("7e7e0002-0000-4000-8000-7e7e7e7e7e7e"))

    func run() async throws {
        let bus = try DBusAddress.system(environment: ProcessInfo.processInfo.environment)
        let (address, count) = (address, count)
        let histogram = try await BlueZCentral.withCentral(adapter: adapter, bus: bus) { central in
            try await central.withConnection(to: address, options: BluetoothConnectionOptions(timeout: .seconds(30))) { link in
                var histogram = Histogram<UInt64>(highestTrackableValue: 60_000_000, numberOfSignificantValueDigits: .three)
                var seen = 0
                for await value in try await link.notifications(of: Self.clock) {
                    let now = Self.monotonicNanoseconds()
                    guard value.count >= 8 else { continue }
                    let stamp = value.prefix(8).reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
                    seen += 1
                    if seen > count / 10, now >= stamp { histogram.record((now - stamp) / 1_000) }
                    if seen >= count + count / 10 { break }
                }
                return histogram
            }
        }
        if format == "json" {
            print(
                JSONValue.object([
                    "central": .string("tether"), "count": .int(Int64(histogram.totalCount)),
                    "p50": .int(Int64(histogram.valueAtPercentile(50))), "p99": .int(Int64(histogram.valueAtPercentile(99))),
                    "max": .int(Int64(histogram.max)),
                ]).serialized())
        } else {
            print("Notification to app through BlueZCentral, \(histogram.totalCount) notifications:")
            print("  p50 \(histogram.valueAtPercentile(50)) µs   p99 \(histogram.valueAtPercentile(99)) µs   max \(histogram.max) µs")
        }
    }

    /// CLOCK_MONOTONIC, the clock Python's `time.monotonic_ns` reads (ContinuousClock may be
    /// CLOCK_BOOTTIME).
    static func monotonicNanoseconds() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }
}
