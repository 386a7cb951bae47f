import ArgumentParser
import Foundation
import Tether
import TetherCLISupport

/// `--username` and `--password` (or `TETHER_PASSWORD`, which keeps it out of the process list).
struct CredentialOptions: ParsableArguments {
    @Option(name: .long, help: "The username.")
    var username: String

    @Option(name: .long, help: "The password; TETHER_PASSWORD in the environment keeps it out of the process list.")
    var password: String?

    /// Runs `action` on a bare client (a saved session that is no longer valid must not get in
    /// the way), then saves the cloud and app ID for the next commands; returns the uid.
    func signIn(
        _ options: CloudClientOptions,
        _ action: @escaping @Sendable (TetherAccount, String, String) async throws -> CloudSession
    ) async throws -> String {
        let password = try effectivePassword()
        let username = self.username
        let session = try await withTetherClient(configuration: try options.configuration(lanDiscovery: false), logger: options.logger) { client in
            try await action(client.account!, username, password)
        }
        try options.settings().save(to: options.configPath)
        return session.uid
    }

    func effectivePassword() throws -> String {
        if let password { return password }
        if let password = ProcessInfo.processInfo.environment["TETHER_PASSWORD"], !password.isEmpty { return password }
        throw ValidationError("give --password, or TETHER_PASSWORD in the environment")
    }
}

struct Login: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Log in, and remember the cloud, the app and the session for the other commands.",
        discussion: "The session is kept in the home directory (mode 0600) and renewed before it expires; `tether logout` forgets it."
    )

    @OptionGroup var options: CloudClientOptions
    @OptionGroup var credentials: CredentialOptions

    func run() async throws {
        let uid = try await credentials.signIn(options) { account, username, password in
            try await account.login(username: username, password: password)
        }
        printLine("logged in as \(credentials.username) (uid \(uid))")
    }
}

struct Register: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Create an account with a username and password, and log in with it.")

    @OptionGroup var options: CloudClientOptions
    @OptionGroup var credentials: CredentialOptions

    func run() async throws {
        let uid = try await credentials.signIn(options) { account, username, password in
            try await account.register(username: username, password: password)
        }
        printLine("registered and logged in as \(credentials.username) (uid \(uid))")
    }
}

struct Logout: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Forget the saved session.")

    @OptionGroup var options: CloudClientOptions

    func run() async throws {
        try await withTetherClient(configuration: try options.configuration(lanDiscovery: false), logger: options.logger) { client in
            client.account!.logout()
        }
        printLine("logged out")
    }
}

struct WhoAmI: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "whoami", abstract: "Print the logged-in user.")

    @OptionGroup var options: CloudClientOptions

    @Flag(name: .long, help: "Print one JSON object.")
    var json = false

    func run() async throws {
        let user = try await withTetherClient(configuration: try options.configuration(lanDiscovery: false), logger: options.logger) { client in
            try await client.account!.userInfo()
        }
        if json {
            printJSON([
                "uid": .string(user.uid), "username": .string(user.username), "email": .string(user.email), "phone": .string(user.phone),
                "anonymous": .bool(user.isAnonymous),
            ])
        } else {
            printLine(user.isAnonymous ? "anonymous user \(user.uid)" : "\(user.username.isEmpty ? user.email : user.username) (uid \(user.uid))")
        }
    }
}

struct IoTToken: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "iot-token",
        abstract: "Print a single-use token for a device of yours to bind itself to you (the iotToken of /sys/PK/DN/account/bind)."
    )

    @OptionGroup var options: CloudClientOptions

    func run() async throws {
        let token = try await withTetherClient(configuration: try options.configuration(lanDiscovery: false), logger: options.logger) { client in
            try await client.account!.iotToken()
        }
        printLine(token)
    }
}
