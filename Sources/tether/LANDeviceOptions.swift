import ArgumentParser
import Foundation
import Logging
import Tether
import TetherCLISupport

/// The options every command that talks to one device shares.
struct LANDeviceOptions: ParsableArguments {
    @Option(name: .long, help: "The device's address.")
    var host: String

    @Option(name: .long, help: "The device's TCP control port.")
    var port = 12416

    @Option(
        name: .long,
        help:
            "The device's passcode; TETHER_PASSCODE in the environment keeps it out of the process list. Asked from the device when neither is given, which works in its binding window."
    )
    var passcode: String?

    @Option(name: .long, help: "Seconds to wait for each answer.")
    var timeout: Double = 5

    @Flag(name: .long, help: "Log protocol details to standard error.")
    var verbose = false

    func validate() throws {
        if let problem = problemWithSeconds(timeout, option: "--timeout", maximum: 3600, allowZero: false) { throw ValidationError(problem) }
    }

    /// `--passcode`, or `TETHER_PASSCODE` from the environment.
    var effectivePasscode: String? {
        passcode ?? ProcessInfo.processInfo.environment["TETHER_PASSCODE"].flatMap { $0.isEmpty ? nil : $0 }
    }

    var logger: Logger {
        var logger = Logger(label: "tether")
        logger.logLevel = verbose ? .debug : .warning
        return logger
    }

    var lan: LANConfiguration {
        LANConfiguration(discoveryEnabled: false, requestTimeout: .milliseconds(Int(timeout * 1000)))
    }

    /// Runs `body` with a subscribed device.
    func withSubscribedDevice<T: Sendable>(model: ThingModel, _ body: (Device) async throws -> T) async throws -> T {
        try await withTetherClient(configuration: .init(products: [model], lan: lan), logger: logger) { client in
            let device = client.device(host: host, port: port, model: model)
            try await device.subscribe(passcode: effectivePasscode)
            return try await body(device)
        }
    }
}

/// Prints a status for people: one line per data point, grouped.
func printStatus(_ status: DeviceStatus, model: ThingModel) {
    for (title, values) in [("data", status.data), ("alerts", status.alerts), ("faults", status.faults)] where !values.isEmpty {
        printLine("\(title):")
        for point in model.dataPoints where values[point.name] != nil {
            let unit = point.unit.map { " \($0)" } ?? ""
            var shown = "\(values[point.name]!)"
            if case .enumeration(let labels) = point.type, case .int(let index)? = values[point.name], labels.indices.contains(Int(index)) {
                shown += " (\(labels[Int(index)]))"
            }
            printLine("  \(point.name) = \(shown)\(unit)")
        }
    }
}

/// `--product FILE` and `--json`, for the commands that read data points.
struct ProductOutputOptions: ParsableArguments {
    @Option(name: .long, help: "Product model file (Gizwits data points or Aliyun TSL).")
    var product: String

    @Flag(name: .long, help: "Print JSON (one object, or one a line for streams).")
    var json = false

    func model() throws -> ThingModel { try loadProduct(product) }
}

/// `{"sn", "data", "alerts", "faults"}`
func reportJSON(_ report: DeviceStatusReport) -> JSONValue {
    var object: JSONObject = ["sn": .int(Int64(report.sn))]
    let status = report.status.jsonValue
    for key in ["data", "alerts", "faults"] { object[key] = status[key] }
    return .object(object)
}
