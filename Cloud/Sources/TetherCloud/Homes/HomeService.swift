import TetherCloudProtocol
import TetherCore

/// Homes (Tether extension), the same rules on every path: a home's members see and control the
/// devices placed in it through bindings the membership gives (guests' bindings marked with the
/// home), so every check of a binding — REST, the WebSocket, RRPC, shadows, LAN grants — checks
/// membership too; leaving, removal, taking a device out or deleting the home ends those
/// bindings as a revocation does (sessions told, queued commands failed). Owners and admins
/// manage the home; members use it. Someone who is not a member learns nothing (9505).
struct HomeService: Sendable {
    let database: any SQLDatabase
    let bus: any ClusterBus

    static let invitationSeconds: Int64 = 24 * 3600
    static let maximumHomes = 50
    static let maximumRooms = 100

    private var messages: MessageCentre { MessageCentre(database: database, bus: bus) }

    // MARK: Homes

    func create(_ user: AuthenticatedUser, _ fields: HomeFieldsBody) async throws -> HomeBody {
        guard let name = fields.name, !name.isEmpty else { throw CloudAPIError.formInvalid(detail: "name is required") }
        try Self.validate(fields)
        guard try await HomeStore(database).homes(of: user.uid).count < Self.maximumHomes else {
            throw CloudAPIError.formInvalid(detail: "a user belongs to at most \(Self.maximumHomes) homes")
        }
        let home = try await database.transaction { transaction in
            try await HomeStore(transaction).create(fields, name: name, owner: user.uid, now: Clock.unixNow())
        }
        return try await body(home, role: .owner)
    }

    func list(_ user: AuthenticatedUser) async throws -> [HomeBody] {
        var homes: [HomeBody] = []
        for (home, role) in try await HomeStore(database).homes(of: user.uid) { homes.append(try await body(home, role: role)) }
        return homes
    }

    func home(_ user: AuthenticatedUser, id: Int64) async throws -> HomeBody {
        let (home, role) = try await membership(user, id)
        return try await body(home, role: role)
    }

    func update(_ user: AuthenticatedUser, id: Int64, _ fields: HomeFieldsBody) async throws -> HomeBody {
        try Self.validate(fields)
        if let name = fields.name, name.isEmpty { throw CloudAPIError.formInvalid(detail: "name must not be empty") }
        let (_, role) = try await membership(user, id, atLeast: .admin)
        try await HomeStore(database).update(id, fields, now: Clock.unixNow())
        return try await home(user, id: id).with(role: role)
    }

    /// The owner deletes the home: every member's access through it ends.
    func delete(_ user: AuthenticatedUser, id: Int64) async throws {
        let (home, members, ended) = try await database.transaction { transaction in
            let (home, _) = try await membership(user, id, atLeast: .owner, on: transaction)
            let store = HomeStore(transaction)
            let members = try await store.members(id).map(\.uid)
            let ended = try await store.revoke(home: id)
            try await store.delete(id)
            return (home, members, ended)
        }
        try await announce(ended)
        for uid in members where uid != user.uid {
            try await post(to: uid, "The home \(home.name) was deleted", event: "home_deleted", home: id)
        }
    }

    // MARK: Rooms

    func addRoom(_ user: AuthenticatedUser, id: Int64, name: String) async throws -> RoomBody {
        try Self.validateName(name, field: "name")
        _ = try await membership(user, id, atLeast: .admin)
        guard try await HomeStore(database).rooms(id).count < Self.maximumRooms else {
            throw CloudAPIError.formInvalid(detail: "a home has at most \(Self.maximumRooms) rooms")
        }
        return try await HomeStore(database).addRoom(id, name: name, now: Clock.unixNow())
    }

    func renameRoom(_ user: AuthenticatedUser, id: Int64, room: Int64, name: String) async throws {
        try Self.validateName(name, field: "name")
        _ = try await membership(user, id, atLeast: .admin)
        guard try await HomeStore(database).renameRoom(id, id: room, name: name) else { throw CloudAPIError.roomNotFound() }
    }

    func deleteRoom(_ user: AuthenticatedUser, id: Int64, room: Int64) async throws {
        _ = try await membership(user, id, atLeast: .admin)
        let deleted = try await database.transaction { transaction in try await HomeStore(transaction).deleteRoom(id, id: room) }
        guard deleted else { throw CloudAPIError.roomNotFound() }
    }

    // MARK: Devices

    /// An owner or admin places a device of their own (bound as its owner, or special user of a
    /// product without sharing) in the home, or moves it to another room; every member who is
    /// not bound to it already gets it.
    func place(_ user: AuthenticatedUser, id: Int64, did: String, room: Int64?) async throws {
        let now = Clock.unixNow()
        let (home, granted) = try await database.transaction { transaction -> (HomeRecord, [String]) in
            let (home, _) = try await membership(user, id, atLeast: .admin, on: transaction)
            guard try await DeviceStore(transaction).find(did, lockingForUpdate: true) != nil else { throw CloudAPIError.deviceNotFound() }
            let store = HomeStore(transaction)
            if let room, try await !store.roomExists(id, id: room) { throw CloudAPIError.roomNotFound() }
            let current = try await store.home(of: did)
            if current == id {
                // Moved to another room of the same home: any owner or admin of it.
                try await store.place(did, home: id, room: room, by: user.uid, now: now)
                return (home, [])
            }
            guard try await BindingStore(transaction).ownsDirectly(user.uid, did: did) else {
                throw CloudAPIError.onlyOwnerCanOperate(detail: "only the device's owner places it in a home")
            }
            guard current == nil else { throw CloudAPIError.deviceInAnotherHome() }
            try await store.place(did, home: id, room: room, by: user.uid, now: now)
            var granted: [String] = []
            for member in try await store.members(id) where try await store.grant(member.uid, did: did, home: id, now: now) {
                granted.append(member.uid)
            }
            return (home, granted)
        }
        for uid in granted {
            await bus.publish(.binding(uid: uid, did: did, bound: true))
            try await post(to: uid, "A device was added to \(home.name)", event: "device_added", home: id, did: did)
        }
    }

    /// An owner or admin takes a device out of the home, and so may the device's own owner
    /// whatever its role: the members it reached through the home lose it.
    func unplace(_ user: AuthenticatedUser, id: Int64, did: String) async throws {
        let (home, ended) = try await database.transaction { transaction -> (HomeRecord, [(uid: String, did: String)]) in
            let (home, role) = try await membership(user, id, on: transaction)
            if role == .member, try await !BindingStore(transaction).ownsDirectly(user.uid, did: did) {
                throw CloudAPIError.homeRoleInsufficient(detail: "a member takes out only devices it owns")
            }
            return (home, try await Self.takeOut(did, home: id, on: transaction))
        }
        try await announce(ended)
        for (uid, _) in ended { try await post(to: uid, "A device was taken out of \(home.name)", event: "device_removed", home: id, did: did) }
    }

    /// Takes `did` out of `home` and ends the bindings the home gave for it (the home's row is
    /// locked first): what the service, unbinding and transfer share.
    static func takeOut(_ did: String, home: Int64, on executor: any SQLExecutor) async throws -> [(uid: String, did: String)] {
        let store = HomeStore(executor)
        try await store.lock(home)
        guard try await store.unplace(did, home: home) else { throw CloudAPIError.roomNotFound(detail: "\(did) is not in this home") }
        return try await store.revoke(home: home, did: did)
    }

    // MARK: Members

    /// The owner invites admins and members, an admin members; valid 24 hours.
    func invite(_ user: AuthenticatedUser, id: Int64, _ body: HomeInvitationCreateBody) async throws -> HomeInvitationBody {
        let (home, role) = try await membership(user, id, atLeast: .admin)
        guard body.role == .member || role == .owner else { throw CloudAPIError.homeRoleInsufficient(detail: "only the owner invites admins") }
        let invitee: String?
        switch body.receiver {
        case .uid(let uid): invitee = try await UserStore(database).profile(uid: uid) == nil ? nil : uid
        case .username(let name): invitee = try await UserStore(database).uid(appID: user.appID, .username(name))
        case .email(let email): invitee = try await UserStore(database).uid(appID: user.appID, .email(email.lowercased()))
        case .phone(let phone): invitee = try await UserStore(database).uid(appID: user.appID, .phone(phone))
        }
        guard let invitee else { throw CloudAPIError.guestNotFound() }
        guard invitee != user.uid else { throw CloudAPIError.cannotShareToSelf() }
        let now = Clock.unixNow()
        let record = try await database.transaction { transaction in
            let store = HomeStore(transaction)
            try await store.lock(id)
            guard try await store.membership(id, uid: user.uid) != nil else { throw CloudAPIError.homeNotFound() }
            guard try await store.membership(id, uid: invitee) == nil else { throw CloudAPIError.alreadyHomeMember() }
            guard try await store.pendingInvitation(home: id, invitee: invitee, now: now) == nil else { throw CloudAPIError.sharingWaitingForAccept() }
            return try await store.invite(home: id, inviter: user.uid, invitee: invitee, role: body.role, now: now, expiredAt: now + Self.invitationSeconds)
        }
        let inviterName = try await SharingService.displayName(of: user.uid, database)
        try await post(to: invitee, "\(inviterName) invited you to the home \(home.name)", event: "home_invited", home: id, invitation: record.id)
        return Self.body(record, homeName: home.name)
    }

    /// `GET /app/home_invitations?sent=1`: what the user sent, or (default) received.
    func invitations(_ user: AuthenticatedUser, sent: Bool) async throws -> [HomeInvitationBody] {
        try await HomeStore(database).invitations(of: user.uid, sent: sent, limit: 100).map { Self.body($0.0, homeName: $0.homeName) }
    }

    /// The invitee accepts (and joins, with every device of the home) or refuses.
    func answer(_ user: AuthenticatedUser, invitation id: Int64, accept: Bool) async throws {
        guard let record = try await HomeStore(database).invitation(id), record.inviteeUID == user.uid else { throw CloudAPIError.sharingNotFound() }
        let now = Clock.unixNow()
        guard record.status == .pending else { throw CloudAPIError.sharingCompleted() }
        guard record.expiredAt > now else { throw CloudAPIError.sharingExpired() }
        let granted = try await database.transaction { transaction -> [String] in
            let store = HomeStore(transaction)
            guard try await store.move(id, from: .pending, to: accept ? .accepted : .refused, now: now) != nil else { throw CloudAPIError.sharingCompleted() }
            guard accept else { return [] }
            try await store.lock(record.homeID)
            guard let inviter = try await store.membership(record.homeID, uid: record.inviterUID), inviter.role != .member else {
                throw CloudAPIError.homeNotFound(detail: "the inviter no longer manages the home")
            }
            guard try await store.membership(record.homeID, uid: user.uid) == nil else { throw CloudAPIError.alreadyHomeMember() }
            try await store.addMember(record.homeID, uid: user.uid, role: record.role, now: now)
            var granted: [String] = []
            for device in try await store.devices(record.homeID) where try await store.grant(user.uid, did: device.did, home: record.homeID, now: now) {
                granted.append(device.did)
            }
            return granted
        }
        for did in granted { await bus.publish(.binding(uid: user.uid, did: did, bound: true)) }
        let name = try await SharingService.displayName(of: user.uid, database)
        try await post(
            to: record.inviterUID, "\(name) \(accept ? "joined" : "declined to join") the home", event: accept ? "home_joined" : "home_refused",
            home: record.homeID,
            invitation: id)
    }

    /// The inviter withdraws a pending invitation.
    func cancel(_ user: AuthenticatedUser, invitation id: Int64) async throws {
        guard let record = try await HomeStore(database).invitation(id), record.inviterUID == user.uid else { throw CloudAPIError.sharingNotFound() }
        guard record.status == .pending else { throw CloudAPIError.sharingCompleted() }
        guard try await HomeStore(database).move(id, from: .pending, to: .cancelled, now: Clock.unixNow()) != nil else {
            throw CloudAPIError.sharingCompleted()
        }
        try await post(to: record.inviteeUID, "An invitation to a home was withdrawn", event: "home_invitation_cancelled", home: record.homeID, invitation: id)
    }

    /// The owner changes a member's role (not its own: 9510; not to owner).
    func setRole(_ user: AuthenticatedUser, id: Int64, uid: String, role: HomeRole) async throws {
        guard role != .owner else { throw CloudAPIError.formInvalid(detail: "role is admin or member") }
        guard uid != user.uid else { throw CloudAPIError.homeOwnerCannotLeave(detail: "the owner keeps its role") }
        try await database.transaction { transaction in
            _ = try await membership(user, id, atLeast: .owner, on: transaction)
            guard try await HomeStore(transaction).setRole(id, uid: uid, role: role) else {
                throw CloudAPIError.guestNotFound(detail: "\(uid) is not a member")
            }
        }
        try await post(to: uid, "Your role in the home is now \(role.rawValue)", event: "home_role_changed", home: id)
    }

    /// A member leaves (removing itself), or the owner or an admin removes one: the owner
    /// removes anyone but itself, an admin only members. Everything the home gave ends at once,
    /// and the devices the leaving member owns leave the home with it.
    func remove(_ user: AuthenticatedUser, id: Int64, uid: String) async throws {
        let (home, ended) = try await database.transaction { transaction -> (HomeRecord, [(uid: String, did: String)]) in
            let (home, role) = try await membership(user, id, on: transaction)
            let store = HomeStore(transaction)
            guard let target = try await store.membership(id, uid: uid) else { throw CloudAPIError.guestNotFound(detail: "\(uid) is not a member") }
            if target.role == .owner { throw CloudAPIError.homeOwnerCannotLeave() }
            if uid != user.uid {
                guard role == .owner || (role == .admin && target.role == .member) else { throw CloudAPIError.homeRoleInsufficient() }
            }
            // One statement per step (no `+= try await`): the Swift 6.3 optimizer crashes splitting
            // this coroutine otherwise (signal 11 in a release build).
            var ended: [(uid: String, did: String)] = []
            let owned = try await store.devices(id, ownedBy: uid)
            for did in owned {
                let taken = try await Self.takeOut(did, home: id, on: transaction)
                ended.append(contentsOf: taken)
            }
            _ = try await store.removeMember(id, uid: uid)
            let revoked = try await store.revoke(home: id, uid: uid)
            ended.append(contentsOf: revoked)
            return (home, ended)
        }
        try await announce(ended)
        if uid != user.uid { try await post(to: uid, "You were removed from the home \(home.name)", event: "home_removed", home: id) }
    }

    // MARK: Helpers

    /// The home and the user's role, requiring at least `needed`: 9505 for strangers (who learn
    /// nothing), 9506 for a role below it. On a transaction, the home's row is locked first, so
    /// the role read is the one the change is made under.
    private func membership(
        _ user: AuthenticatedUser, _ id: Int64, atLeast needed: HomeRole = .member, on executor: (any SQLExecutor)? = nil
    ) async throws -> (HomeRecord, HomeRole) {
        let store = HomeStore(executor ?? database)
        if executor != nil { try await store.lock(id) }
        guard let (home, role) = try await store.membership(id, uid: user.uid) else { throw CloudAPIError.homeNotFound() }
        guard Self.rank(role) >= Self.rank(needed) else { throw CloudAPIError.homeRoleInsufficient(detail: "your role in the home is \(role.rawValue)") }
        return (home, role)
    }

    private static func rank(_ role: HomeRole) -> Int {
        switch role {
        case .member: 0
        case .admin: 1
        case .owner: 2
        }
    }

    /// Access that ended: the users' sessions hear of it and their queued commands fail.
    private func announce(_ ended: [(uid: String, did: String)]) async throws {
        let sharing = SharingService(database: database, bus: bus)
        for (uid, did) in ended { try await sharing.ended(guest: uid, did: did) }
    }

    private func post(to uid: String, _ content: String, event: String, home: Int64, did: String? = nil, invitation: Int64? = nil) async throws {
        var data: JSONObject = ["event": .string(event), "home_id": .int(home)]
        if let did { data["did"] = .string(did) }
        if let invitation { data["invitation_id"] = .int(invitation) }
        try await messages.post(to: uid, type: MessageCentre.homes, content: content, data: .object(data))
    }

    private func body(_ home: HomeRecord, role: HomeRole) async throws -> HomeBody {
        let store = HomeStore(database)
        var members: [HomeMemberBody] = []
        for member in try await store.members(home.id) {
            members.append(
                HomeMemberBody(
                    uid: member.uid, name: try await SharingService.displayName(of: member.uid, database), role: member.role, joinedAt: member.joinedAt))
        }
        return HomeBody(
            id: home.id, name: home.name, geoName: home.geoName, latitude: home.latitude, longitude: home.longitude, role: role,
            rooms: try await store.rooms(home.id), members: members, devices: try await store.devices(home.id), createdAt: home.createdAt)
    }

    static func body(_ record: HomeInvitationRecord, homeName: String) -> HomeInvitationBody {
        HomeInvitationBody(
            id: record.id, homeID: record.homeID, homeName: homeName, inviterUID: record.inviterUID, inviteeUID: record.inviteeUID, role: record.role,
            status: record.status, createdAt: record.createdAt, expiredAt: record.expiredAt)
    }

    private static func validate(_ fields: HomeFieldsBody) throws {
        if let name = fields.name { try validateName(name, field: "name") }
        try Validation.displayText(fields.geoName, field: "geo_name", maximum: 128)
    }

    private static func validateName(_ name: String, field: String) throws {
        guard !name.isEmpty else { throw CloudAPIError.formInvalid(detail: "\(field) is required") }
        try Validation.displayText(name, field: field, maximum: 64)
    }
}

extension HomeBody {
    fileprivate func with(role: HomeRole) -> HomeBody {
        var body = self
        body.role = role
        return body
    }
}
