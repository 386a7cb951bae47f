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

    func run() async throws {
        var logger = Logger(label: "bench")
        logger.logLevel = .warning
        let opened = try await DatabaseURL(database).open(logger: logger)
        let admin = Administration(database: opened)
        let app = try await admin.createApp(name: "bench")
        let created = try await admin.createProduct(name: "Lamp", modelFile: Array(try Data(contentsOf: URL(fileURLWithPath: product))), format: .tsl)
        var list: [JSONValue] = []
        for index in 0..<devices {
            let device = try await admin.createDevice(productKey: created.productKey, name: "bench-\(index)", mac: nil)
            list.append(["did": .string(device.did), "productKey": .string(device.productKey), "deviceName": .string(device.deviceName),
                         "deviceSecret": .string(device.deviceSecret), "passcode": .string(device.passcode)])
        }
        await opened.close()
        let document: JSONValue = ["appId": .string(app.appID), "productKey": .string(created.productKey), "devices": .array(list)]
        try document.serialized().write(toFile: output, atomically: true, encoding: .utf8)
    }
}
