import ArgumentParser
import Tether
import TetherCLISupport
import TetherCloudProtocol

struct HomeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "home",
        abstract: "Homes: rooms, members and the devices placed in them (Tether extension).",
        subcommands: [
            List.self, Create.self, Show.self, Rename.self, Delete.self, AddRoom.self, DeleteRoom.self, Place.self, Unplace.self, Invite.self,
            Invitations.self, Accept.self, Refuse.self, Cancel.self, SetRole.self, Remove.self,
        ]
    )

    static func describe(_ home: Home) {
        printLine("home \(home.id)  \(home.name)\(home.geoName.isEmpty ? "" : "  (\(home.geoName))")  you: \(home.role.rawValue)")
        for room in home.rooms { printLine("  room \(room.id)  \(room.name)") }
        for member in home.members { printLine("  member \(member.uid)  \(member.name)  \(member.role.rawValue)") }
        for device in home.devices { printLine("  device \(device.did)\(device.roomID.map { "  in room \($0)" } ?? "")") }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "The homes you belong to.")
        @OptionGroup var options: CloudClientOptions
        @Flag(help: "Print JSON.") var json = false

        func run() async throws {
            let homes = try await options.withClient(lanDiscovery: false) { try await $0.homes.list() }
            if json { return printJSON(.array(homes.map(\.json))) }
            if homes.isEmpty { printLine("no homes") }
            homes.forEach(HomeCommand.describe)
        }
    }

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Make a home; you are its owner.")
        @OptionGroup var options: CloudClientOptions
        @Argument(help: "The home's name.") var name: String
        @Option(help: "Where it is, for people.") var location: String?
        @Flag(help: "Print JSON.") var json = false

        func run() async throws {
            let (name, location) = (self.name, self.location)
            let home = try await options.withClient(lanDiscovery: false) { try await $0.homes.create(name: name, geoName: location) }
            if json { printJSON(home.json) } else { printLine("home \(home.id) created") }
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "A home's rooms, members and devices.")
        @OptionGroup var options: CloudClientOptions
        @Argument(help: "The home's id.") var id: Int64
        @Flag(help: "Print JSON.") var json = false

        func run() async throws {
            let id = self.id
            let home = try await options.withClient(lanDiscovery: false) { try await $0.homes.home(id) }
            if json { printJSON(home.json) } else { HomeCommand.describe(home) }
        }
    }

    struct Rename: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Rename a home (owner or admin).")
        @OptionGroup var options: CloudClientOptions
        @Argument(help: "The home's id.") var id: Int64
        @Argument(help: "The new name.") var name: String

        func run() async throws {
            let (id, name) = (self.id, self.name)
            _ = try await options.withClient(lanDiscovery: false) { try await $0.homes.rename(id, to: name) }
            printLine("home \(id) renamed")
        }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delete a home you own; its members lose its devices.")
        @OptionGroup var options: CloudClientOptions
        @Argument(help: "The home's id.") var id: Int64

        func run() async throws {
            let id = self.id
            try await options.withClient(lanDiscovery: false) { try await $0.homes.delete(id) }
            printLine("home \(id) deleted")
        }
    }

    struct AddRoom: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "add-room", abstract: "Add a room (owner or admin).")
        @OptionGroup var options: CloudClientOptions
        @Argument(help: "The home's id.") var id: Int64
        @Argument(help: "The room's name.") var name: String
        @Flag(help: "Print JSON.") var json = false

        func run() async throws {
            let (id, name) = (self.id, self.name)
            let room = try await options.withClient(lanDiscovery: false) { try await $0.homes.addRoom(name, to: id) }
            if json { printJSON(room.json) } else { printLine("room \(room.id) added") }
        }
    }

    struct DeleteRoom: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "delete-room", abstract: "Delete a room; its devices stay in the home.")
        @OptionGroup var options: CloudClientOptions
        @Argument(help: "The home's id.") var id: Int64
        @Argument(help: "The room's id.") var room: Int64

        func run() async throws {
            let (id, room) = (self.id, self.room)
            try await options.withClient(lanDiscovery: false) { try await $0.homes.deleteRoom(room, of: id) }
            printLine("room \(room) deleted")
        }
    }

    struct Place: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Place a device you own in a home (and a room); every member gets it.")
        @OptionGroup var options: CloudClientOptions
        @Argument(help: "The home's id.") var id: Int64
        @Argument(help: "The device's did.") var did: String
        @Option(help: "The room's id.") var room: Int64?

        func run() async throws {
            let (id, did, room) = (self.id, self.did, self.room)
            try await options.withClient(lanDiscovery: false) { try await $0.homes.place(did, in: id, room: room) }
            printLine("\(did) placed in home \(id)")
        }
    }

    struct Unplace: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Take a device out of a home; the members lose it.")
        @OptionGroup var options: CloudClientOptions
        @Argument(help: "The home's id.") var id: Int64
        @Argument(help: "The device's did.") var did: String

        func run() async throws {
            let (id, did) = (self.id, self.did)
            try await options.withClient(lanDiscovery: false) { try await $0.homes.remove(did, from: id) }
            printLine("\(did) taken out of home \(id)")
        }
    }

    struct Invite: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Invite a user to join a home (valid 24 h).")
        @OptionGroup var options: CloudClientOptions
        @Argument(help: "The home's id.") var id: Int64
        @Option(help: "The user's name.") var username: String?
        @Option(help: "The user's uid.") var uid: String?
        @Option(help: "The user's e-mail address.") var email: String?
        @Option(help: "The user's phone number.") var phone: String?
        @Option(help: "admin (owner only) or member.") var role = "member"
        @Flag(help: "Print JSON.") var json = false

        func validate() throws {
            guard [username, uid, email, phone].compactMap({ $0 }).count == 1 else {
                throw ValidationError("name the user with one of --username, --uid, --email, --phone")
            }
            guard role == "admin" || role == "member" else { throw ValidationError("--role is admin or member") }
        }

        func run() async throws {
            let receiver: TetherCloudAPI.SharingReceiver =
                if let username { .username(username) } else if let uid { .uid(uid) } else if let email { .email(email) } else { .phone(phone ?? "") }
            let (id, role) = (self.id, HomeRole(rawValue: self.role) ?? .member)
            let invitation = try await options.withClient(lanDiscovery: false) { try await $0.homes.invite(receiver, to: id, as: role) }
            if json { printJSON(invitation.json) } else { printLine("invitation \(invitation.id) sent") }
        }
    }

    struct Invitations: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Invitations to homes you received (or sent, with --sent).")
        @OptionGroup var options: CloudClientOptions
        @Flag(help: "The invitations you sent.") var sent = false
        @Flag(help: "Print JSON.") var json = false

        func run() async throws {
            let sent = self.sent
            let invitations = try await options.withClient(lanDiscovery: false) { try await $0.homes.invitations(sent: sent) }
            if json { return printJSON(.array(invitations.map(\.json))) }
            if invitations.isEmpty { printLine("no invitations") }
            for invitation in invitations {
                printLine("\(invitation.id)  \(invitation.status)  home \(invitation.homeID) \(invitation.homeName)  as \(invitation.role.rawValue)")
            }
        }
    }

    struct Accept: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Accept an invitation: join the home and get its devices.")
        @OptionGroup var options: CloudClientOptions
        @Argument(help: "The invitation's id.") var id: Int64

        func run() async throws {
            let id = self.id
            try await options.withClient(lanDiscovery: false) { try await $0.homes.answer(id, accept: true) }
            printLine("invitation \(id) accepted")
        }
    }

    struct Refuse: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Refuse an invitation.")
        @OptionGroup var options: CloudClientOptions
        @Argument(help: "The invitation's id.") var id: Int64

        func run() async throws {
            let id = self.id
            try await options.withClient(lanDiscovery: false) { try await $0.homes.answer(id, accept: false) }
            printLine("invitation \(id) refused")
        }
    }

    struct Cancel: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Withdraw a pending invitation you sent.")
        @OptionGroup var options: CloudClientOptions
        @Argument(help: "The invitation's id.") var id: Int64

        func run() async throws {
            let id = self.id
            try await options.withClient(lanDiscovery: false) { try await $0.homes.cancel(id) }
            printLine("invitation \(id) withdrawn")
        }
    }

    struct SetRole: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "role", abstract: "Change a member's role (owner only).")
        @OptionGroup var options: CloudClientOptions
        @Argument(help: "The home's id.") var id: Int64
        @Argument(help: "The member's uid.") var uid: String
        @Argument(help: "admin or member.") var role: String

        func validate() throws {
            guard role == "admin" || role == "member" else { throw ValidationError("the role is admin or member") }
        }

        func run() async throws {
            let (id, uid, role) = (self.id, self.uid, HomeRole(rawValue: self.role) ?? .member)
            try await options.withClient(lanDiscovery: false) { try await $0.homes.setRole(role, of: uid, in: id) }
            printLine("\(uid) is now \(role.rawValue)")
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove a member, or leave (without --uid).")
        @OptionGroup var options: CloudClientOptions
        @Argument(help: "The home's id.") var id: Int64
        @Option(help: "The member's uid (default: you, leaving).") var uid: String?

        func run() async throws {
            let (id, uid) = (self.id, self.uid)
            try await options.withClient(lanDiscovery: false) { client in
                guard let who = uid ?? client.account?.session?.uid else { throw TetherError(.notLoggedIn, "log in first") }
                try await client.homes.removeMember(who, from: id)
            }
            printLine(uid == nil ? "you left home \(id)" : "\(uid!) removed from home \(id)")
        }
    }
}
