import ArgumentParser
import Tether
import TetherCLISupport

struct ShareCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "share",
        abstract: "Share your devices: invitations to users and by QR code, accepted, refused, cancelled, revoked; ownership handed on.",
        subcommands: [Invite.self, QRCode.self, List.self, Accept.self, Refuse.self, Cancel.self, Transfer.self]
    )

    static func json(_ invitation: SharingInvitation) -> JSONValue {
        [
            "id": .int(invitation.id), "qr": .bool(invitation.isQRCode), "uid": .string(invitation.uid), "username": .string(invitation.username),
            "alias": .string(invitation.alias), "did": .string(invitation.did), "product": .string(invitation.productName),
            "device_alias": .string(invitation.deviceAlias), "status": .string("\(invitation.status)"), "expires_at": .int(invitation.expiresAt),
        ]
    }

    struct Invite: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Invite a user to a device you own (valid 24 h).")
        @OptionGroup var options: CloudClientOptions
        @Argument(help: "The device's did.") var did: String
        @Option(help: "The user's name.") var username: String?
        @Option(help: "The user's uid.") var uid: String?
        @Option(help: "The user's e-mail address.") var email: String?
        @Option(help: "The user's phone number.") var phone: String?
        @Option(help: "Minutes the guest may use the device after accepting (1 to 1440; default: no limit).") var minutes: Int?
        @Flag(help: "Print JSON.") var json = false

        func validate() throws {
            guard [username, uid, email, phone].compactMap({ $0 }).count == 1 else {
                throw ValidationError("name the user with one of --username, --uid, --email, --phone")
            }
            if let minutes, !(1...1440).contains(minutes) { throw ValidationError("--minutes is 1 to 1440") }
        }

        func run() async throws {
            let receiver: TetherCloudAPI.SharingReceiver =
                if let username { .username(username) } else if let uid { .uid(uid) } else if let email { .email(email) } else { .phone(phone ?? "") }
            let (did, minutes) = (self.did, self.minutes)
            let id = try await options.withClient(lanDiscovery: false) { client in
                try await client.sharing.invite(receiver, to: did, for: minutes.map { .seconds($0 * 60) })
            }
            if json { printJSON(["id": .int(id)]) } else { printLine("invitation \(id) sent") }
        }
    }

    struct QRCode: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "qr", abstract: "A QR-code invitation to a device you own (valid 15 minutes, once): prints its text.")
        @OptionGroup var options: CloudClientOptions
        @Argument(help: "The device's did.") var did: String
        @Option(help: "Minutes the guest may use the device after accepting (1 to 1440).") var minutes: Int?
        @Flag(help: "Print JSON.") var json = false

        func run() async throws {
            let (did, minutes) = (self.did, self.minutes)
            let created = try await options.withClient(lanDiscovery: false) { client in
                try await client.sharing.qrCode(for: did, duration: minutes.map { .seconds($0 * 60) })
            }
            if json { printJSON(["id": .int(created.id), "qr_content": .string(created.qrContent)]) } else { printLine(created.qrContent) }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Invitations you received (or sent, with --sent), newest first.")
        @OptionGroup var options: CloudClientOptions
        @Flag(help: "The invitations you sent.") var sent = false
        @Flag(help: "Print JSON.") var json = false

        func run() async throws {
            let sent = self.sent
            let invitations = try await options.withClient(lanDiscovery: false) { try await $0.sharing.invitations(sent: sent) }
            if json {
                printJSON(.array(invitations.map(ShareCommand.json)))
                return
            }
            if invitations.isEmpty { printLine("no invitations") }
            for invitation in invitations {
                printLine(
                    "\(invitation.id)  \(invitation.status)  \(invitation.did)  \(invitation.productName)  \(sent ? "to" : "from") \(invitation.username)")
            }
        }
    }

    struct Accept: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Accept an invitation: by its id, or by the text of its QR code.")
        @OptionGroup var options: CloudClientOptions
        @Argument(help: "The invitation's id.") var id: Int64?
        @Option(help: "The text of a sharing QR code (type=share&code=…).") var qr: String?

        func validate() throws {
            guard (id == nil) != (qr == nil) else { throw ValidationError("give an invitation id or --qr") }
        }

        func run() async throws {
            let (id, qr) = (self.id, self.qr)
            try await options.withClient(lanDiscovery: false) { client in
                if let qr { try await client.sharing.accept(qrContent: qr) } else if let id { try await client.sharing.answer(id, accept: true) }
            }
            printLine("accepted")
        }
    }

    struct Refuse: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Refuse an invitation you received.")
        @OptionGroup var options: CloudClientOptions
        @Argument(help: "The invitation's id.") var id: Int64

        func run() async throws {
            let id = self.id
            try await options.withClient(lanDiscovery: false) { try await $0.sharing.answer(id, accept: false) }
            printLine("refused")
        }
    }

    struct Cancel: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Cancel a pending invitation you sent, or revoke an accepted one (the guest loses the device at once).")
        @OptionGroup var options: CloudClientOptions
        @Argument(help: "The invitation's id.") var id: Int64

        func run() async throws {
            let id = self.id
            try await options.withClient(lanDiscovery: false) { try await $0.sharing.cancel(id) }
            printLine("cancelled")
        }
    }

    struct Transfer: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Hand a device you own to one of its guests (you are unbound).")
        @OptionGroup var options: CloudClientOptions
        @Argument(help: "The device's did.") var did: String
        @Option(help: "The guest's uid.") var uid: String

        func run() async throws {
            let (did, uid) = (self.did, self.uid)
            try await options.withClient(lanDiscovery: false) { try await $0.sharing.transfer(did, to: uid) }
            printLine("\(did) now belongs to \(uid)")
        }
    }
}

struct MessagesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "messages", abstract: "Your message centre: list it, or mark a message read (--read ID) or delete it (--delete ID).")
    @OptionGroup var options: CloudClientOptions
    @Option(help: "Mark this message read.") var read: Int64?
    @Option(help: "Delete this message.") var delete: Int64?
    @Flag(help: "Print JSON.") var json = false

    func run() async throws {
        let (read, delete) = (self.read, self.delete)
        let messages = try await options.withClient(lanDiscovery: false) { client -> [CloudMessage] in
            if let read { try await client.sharing.markMessage(read) }
            if let delete { try await client.sharing.markMessage(delete, delete: true) }
            return try await client.sharing.messages(limit: 100)
        }
        if json {
            printJSON(
                .array(
                    messages.map {
                        [
                            "id": .int($0.id), "type": .int($0.type), "read": .bool($0.isRead), "content": .string($0.content), "data": $0.data,
                            "created_at": .int($0.createdAt),
                        ]
                    }))
            return
        }
        if messages.isEmpty { printLine("no messages") }
        for message in messages { printLine("\(message.id) \(message.isRead ? " " : "*") \(message.content)") }
    }
}
