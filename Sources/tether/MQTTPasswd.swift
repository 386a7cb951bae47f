import ArgumentParser
import TetherCLISupport
import TetherMQTT
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `tether mqtt passwd`: mosquitto_passwd for the broker's password file (the same format).
struct MQTTPasswd: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "passwd",
        abstract: "Add, change or delete a user of a broker password file (mosquitto_passwd's format).",
        discussion: "The password is read from standard input (one line) unless --password gives it."
    )

    @Argument(help: "The password file.") var file: String
    @Argument(help: "The user name.") var user: String
    @Flag(name: .customShort("c"), help: "Create the file, replacing one that exists.") var create = false
    @Flag(name: .customShort("D"), help: "Delete the user.") var delete = false
    @Option(name: .long, help: "The password (visible to other users of this machine in the process list: prefer standard input).")
    var password: String?

    func run() async throws {
        var passwords = MQTTPasswordFile()
        if !create { passwords = try MQTTPasswordFile.load(path: file) }
        if delete {
            guard passwords.remove(user: user) else { throw ValidationError("\(user) is not in \(file)") }
        } else {
            guard let secret = password ?? readLine(strippingNewline: true), !secret.isEmpty else {
                throw ValidationError("no password: give one on standard input or with --password")
            }
            try passwords.set(user: user, password: Array(secret.utf8))
        }
        let text = passwords.encoded
        let temporary = file + ".tmp"
        // Readable by its owner only: the hashes are what an attacker would crack.
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        guard descriptor >= 0 else { throw ValidationError("cannot write \(temporary)") }
        let written = Array(text.utf8).withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        close(descriptor)
        guard written == text.utf8.count, rename(temporary, file) == 0 else { throw ValidationError("cannot write \(file)") }
    }
}
