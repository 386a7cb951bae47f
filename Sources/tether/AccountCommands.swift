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
        let password = try credentials.effectivePassword()
        let session = try await options.withClient(lanDiscovery: false) { client in
            try await client.account!.login(username: credentials.username, password: password)
        }
        try options.settings().save(to: options.configPath)
        printLine("logged in as \(credentials.username) (uid \(session.uid))")
    }
}

struct Register: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Create an account with a username and password, and log in with it.")

    @OptionGroup var options: CloudClientOptions
    @OptionGroup var credentials: CredentialOptions

    func run() async throws {
        let password = try credentials.effectivePassword()
        let session = try await options.withClient(lanDiscovery: false) { client in
            try await client.account!.register(username: credentials.username, password: password)
        }
        try options.settings().save(to: options.configPath)
        printLine("registered and logged in as \(credentials.username) (uid \(session.uid))")
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
            printJSON(["uid": .string(user.uid), "username": .string(user.username), "email": .string(user.email), "phone": .string(user.phone), "anonymous": .bool(user.isAnonymous)])
        } else {
            printLine(user.isAnonymous ? "anonymous user \(user.uid)" : "\(user.username.isEmpty ? user.email : user.username) (uid \(user.uid))")
        }
    }
}
