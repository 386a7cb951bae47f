import ArgumentParser
import Foundation
import Tether
import TetherCLISupport

/// `--pair` and what goes with it: the onboarding binds the device to the logged-in user through
/// a pairing token (the cloud and app as `tether login` saved them, or given here).
struct PairingOptions: ParsableArguments {
    @Flag(name: .customLong("pair"), help: "Bind the device to you: a pairing token travels with the credentials and the cloud binds the device.")
    var pair = false
    @Option(name: .customLong("product-key"), help: "With --pair: the token binds only this product's devices.") var productKey: String?
    @Option(name: .customLong("home-id"), help: "With --pair: place the device in this home of yours.") var homeID: Int64?
    @Option(name: .customLong("pairing-timeout"), help: "With --pair: seconds the device may take to reach the cloud once joined.")
    var pairingTimeout: Double = 120
    @Option(name: .customLong("cloud"), help: "With --pair: the cloud's URL (default: from the config file).") var cloud: String?
    @Option(name: .customLong("app-id"), help: "With --pair: the app ID (default: from the config file).") var appID: String?

    func validate() throws {
        if let problem = problemWithSeconds(pairingTimeout, option: "--pairing-timeout", maximum: 600, allowZero: false) { throw ValidationError(problem) }
        if !pair, productKey != nil || homeID != nil { throw ValidationError("--product-key and --home-id go with --pair") }
    }

    var pairing: OnboardingRequest.Pairing? { pair ? OnboardingRequest.Pairing(productKey: productKey, homeID: homeID) : nil }

    /// Runs `body` with a client on the saved session (LAN discovery off: the device is found by
    /// the mode and the cloud).
    func withClient<T: Sendable>(_ body: (TetherClient) async throws -> T) async throws -> T {
        var arguments = ["--discover", "none"]
        if let cloud { arguments += ["--cloud", cloud] }
        if let appID { arguments += ["--app-id", appID] }
        let options = try CloudClientOptions.parse(arguments)
        return try await withTetherClient(configuration: try options.configuration(lanDiscovery: false), logger: options.logger) { client in
            guard client.account?.isLoggedIn == true else { throw ValidationError("--pair needs a logged-in user: tether login first") }
            return try await body(client)
        }
    }

    /// A paired onboarding, printed as the mode's own command prints its result, with the binding.
    func run(_ mode: OnboardingMode, ssid: String, password: String, json: Bool, trace: String?) async throws {
        let request = OnboardingRequest(
            mode: mode, ssid: ssid, password: password, pairing: pairing, pairingTimeout: .milliseconds(Int64(pairingTimeout * 1000)))
        let outcome = try await withClient { client in
            await OnboardCommand.attempt(json: json) { progress throws(OnboardingFailure) in try await client.onboard(request, progress: progress) }
        }
        switch outcome {
        case .success(let result):
            try OnboardCommand.write(result.trace, to: trace)
            var object: JSONObject = ["state": "bound"]
            if let did = result.did { object["did"] = .string(did) }
            if let mac = result.mac { object["mac"] = .string(mac) }
            if let productKey = result.productKey { object["productKey"] = .string(productKey) }
            if let ip = result.ip { object["ip"] = .string(ip) }
            if let role = result.pairing?.role { object["role"] = .string(role) }
            if let home = result.pairing?.homeID { object["homeId"] = .int(home) }
            if let code = result.pairing?.errorCode { object["homeErrorCode"] = .int(Int64(code)) }
            if json { printJSON(.object(object)) } else { printLine("bound: device \(result.did ?? "?") (\(result.mac ?? "?")) is yours") }
        case .failure(let failure):
            try OnboardCommand.write(failure.trace, to: trace)
            try OnboardCommand.failed(failure, json: json)
        }
    }
}

extension OnboardCommand {
    /// `tether onboard token`: a pairing token for a device set up some other way (its own app,
    /// a script), or where a pairing stands.
    struct Token: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "token",
            abstract: "Print a pairing token (10 minutes, one use) for a new device to present to the cloud, or --status ID of a pairing.")

        @OptionGroup var options: CloudClientOptions
        @Option(name: .customLong("product-key"), help: "The token binds only this product's devices.") var productKey: String?
        @Option(name: .customLong("home-id"), help: "Place the device in this home of yours once bound.") var homeID: Int64?
        @Option(help: "Instead of a new token: where the pairing with this id stands.") var status: String?
        @Flag(help: "Print JSON.") var json = false

        func run() async throws {
            let json = self.json
            let productKey = self.productKey, homeID = self.homeID, status = self.status
            try await withTetherClient(configuration: try options.configuration(lanDiscovery: false), logger: options.logger) { client in
                guard let account = client.account, account.isLoggedIn else { throw ValidationError("not logged in: tether login first") }
                if let status {
                    let pairing = try await account.pairingStatus(id: status)
                    var object: JSONObject = ["id": .string(pairing.id), "state": .string(pairing.state.rawValue)]
                    if let did = pairing.did { object["did"] = .string(did) }
                    if let code = pairing.errorCode { object["error_code"] = .int(Int64(code)) }
                    if let message = pairing.message { object["message"] = .string(message) }
                    if json { printJSON(.object(object)) } else { printLine("\(pairing.id): \(pairing.state.rawValue)\(pairing.did.map { " (\($0))" } ?? "")") }
                    return
                }
                let token = try await account.pairingToken(productKey: productKey, homeID: homeID)
                if json {
                    printJSON(["id": .string(token.id), "token": .string(token.token), "expire_at": .int(token.expiresAt)])
                } else {
                    printLine(token.token)
                    printError("pairing \(token.id), valid until \(token.expiresAt) (Unix time); follow it with --status \(token.id)")
                }
            }
        }
    }
}
