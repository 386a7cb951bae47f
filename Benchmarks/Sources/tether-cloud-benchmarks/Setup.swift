import ArgumentParser
import Foundation
import Logging
import TetherCloud
import TetherCore

/// Creates what the run needs, straight in the database: an app, the lamp product and devices
/// with their secrets; writes them to a JSON file for `run`.
struct Setup: AsyncParsableCommand {
    @Option(help: "The server's database (sqlite:PATH or postgres://…).")
    var database: String

    @Option(help: "Product model (Aliyun TSL).")
    var product: String

    @Option(help: "Devices to create.")
    var devices = 10_000

    @Option(help: "Where to write the app, product and device credentials.")
    var output: String

    @Option(help: "Bytes of the firmware package the OTA download measurement fetches (0: none).")
    var firmwareSize = 4 << 20

    func run() async throws {
        var logger = Logger(label: "bench")
        logger.logLevel = .warning
        let opened = try await DatabaseURL(database).open(logger: logger)
        let admin = Administration(database: opened)
        let app = try await admin.createApp(name: "bench")
        let created = try await admin.createProduct(name: "Lamp", modelFile: Array(try Data(contentsOf: URL(fileURLWithPath: product))), format: .tsl)
        // In bulk, as an operator importing a fleet would: 100,000 devices take seconds, not hours.
        let list: [JSONValue] = try await admin.createDevices((0..<devices).map { DeviceEntry(productKey: created.productKey, name: "bench-\($0)") }).map { device in
            ["did": .string(device.did), "productKey": .string(device.productKey), "deviceName": .string(device.deviceName),
             "deviceSecret": .string(device.deviceSecret), "passcode": .string(device.passcode)]
        }
        var firmware: JSONValue = .null
        if firmwareSize > 0 {
            var generator = SystemRandomNumberGenerator()
            let bytes = (0..<firmwareSize).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let package = try await admin.addFirmware(productKey: created.productKey, module: "default", version: "bench-1", bytes: bytes)
            // The path and signed query; `run` puts the server's address in front.
            let target = try await admin.firmwareURL(id: package.id, publicURL: "", lifetime: 7 * 24 * 3600)
            firmware = ["id": .int(package.id), "size": .int(package.size), "sha256": .string(package.sha256), "target": .string(target)]
        }
        await opened.close()
        let document: JSONValue = [
            "appId": .string(app.appID), "productKey": .string(created.productKey), "devices": .array(list), "firmware": firmware,
        ]
        try document.serialized().write(toFile: output, atomically: true, encoding: .utf8)
    }
}
