import TetherCloudProtocol
import TetherCore

/// Sharing (`gizwits-openapi.md` §2.5), the same rules for REST and every other path: only the
/// owner shares (the special user of a product with sharing becomes owner, and its normal users
/// guests, when it first shares); an invitation to a user lasts 24 h, a QR code 15 minutes and
/// serves once; the receiver accepts (and is bound as a guest, for `duration` minutes when the
/// invitation says so) or refuses; the owner cancels a pending invitation to a user, or revokes an
/// accepted one: the guest is unbound at once, their real-time subscription ends and their
/// queued commands are failed.
struct SharingService: Sendable {
    let database: any SQLDatabase
    let bus: any ClusterBus

    private var messages: MessageCentre { MessageCentre(database: database, bus: bus) }

    static let userInvitationSeconds: Int64 = 24 * 3600
    static let codeSeconds: Int64 = 15 * 60

    // MARK: Creating

    func create(_ user: AuthenticatedUser, _ body: SharingCreateBody) async throws -> SharingCreatedBody {
        let now = Clock.unixNow()
        let guestUID: String?
        switch body.receiver {
        case .uid(let uid)?: guestUID = try await UserStore(database).profile(uid: uid) == nil ? nil : uid
        case .username(let name)?: guestUID = try await UserStore(database).uid(appID: user.appID, .username(name))
        case .email(let email)?: guestUID = try await UserStore(database).uid(appID: user.appID, .email(email.lowercased()))
        case .phone(let phone)?: guestUID = try await UserStore(database).uid(appID: user.appID, .phone(phone))
        case nil: guestUID = nil
        }
        if body.kind == .user {
            guard let guestUID else { throw CloudAPIError.guestNotFound() }
            guard guestUID != user.uid else { throw CloudAPIError.cannotShareToSelf() }
        }
        let code = body.kind == .qrCode ? Secrets.hex(bytes: 16) : nil
        let record = try await database.transaction { transaction in
            guard try await DeviceStore(transaction).find(body.did, lockingForUpdate: true) != nil else { throw CloudAPIError.deviceNotFound() }
            try await becomeOwner(user.uid, did: body.did, on: transaction)
            let sharing = SharingStore(transaction)
            if let guestUID {
                guard try await !BindingStore(transaction).isBound(guestUID, did: body.did) else { throw CloudAPIError.guestAlreadyBound() }
                guard try await sharing.pending(did: body.did, guestUID: guestUID, now: now) == nil else { throw CloudAPIError.sharingWaitingForAccept() }
            }
            return try await sharing.insert(
                SharingStore.NewInvitation(
                    did: body.did, ownerUID: user.uid, guestUID: guestUID, kind: body.kind, codeHash: code.map(Secrets.sha256), durationMinutes: body.duration,
                    expiredAt: now + (body.kind == .user ? Self.userInvitationSeconds : Self.codeSeconds)),
                now: now)
        }
        let device = try await deviceNames(body.did, aliasOf: user.uid).display
        if let guestUID {
            let ownerName = try await name(of: user.uid)
            try await messages.post(to: guestUID, content: "\(ownerName) shared \(device) with you", data: event("invited", record))
            try await messages.post(to: user.uid, content: "You shared \(device) with \(try await name(of: guestUID))", data: event("invited", record))
        }
        return SharingCreatedBody(id: record.id, qrContent: code.map { "type=share&code=\($0)" })
    }

    /// Only the owner shares. The special user of a product with sharing becomes owner on its
    /// first invitation, and the normal users become its guests.
    private func becomeOwner(_ uid: String, did: String, on transaction: any SQLExecutor) async throws {
        let roles = try await BindingStore(transaction).roles(of: did)
        switch roles.first(where: { $0.uid == uid })?.role {
        case .owner?:
            return
        case .special?:
            guard let device = try await DeviceStore(transaction).find(did), let product = try await ProductStore(transaction).find(device.productKey),
                product.sharingEnabled
            else { throw CloudAPIError.onlyOwnerCanShare(detail: "the device's product does not allow sharing") }
            try await BindingStore(transaction).makeOwnerOnFirstShare(uid, did: did)
        case nil:
            throw CloudAPIError.deviceNotBound()
        default:
            throw CloudAPIError.onlyOwnerCanShare()
        }
    }

    // MARK: Reading

    /// `GET /app/sharing`: sent (`sent`) or received, newest first, and how many match; `did`
    /// only for sent ones.
    func list(
        _ user: AuthenticatedUser, sent: Bool, status: SharingEntryBody.Status?, did: String?, limit: Int64, skip: Int64
    ) async throws
        -> (entries: [SharingEntryBody], total: Int64)
    {
        guard did == nil || sent else { throw CloudAPIError.formInvalid(detail: "did filters the invitations sent (sharing_type=0) only") }
        let page = try await SharingStore(database).list(uid: user.uid, sent: sent, status: status, did: did, limit: limit, skip: skip)
        var entries: [SharingEntryBody] = []
        for record in page.records {
            let other = sent ? record.guestUID : record.ownerUID
            let profile: UserBody? = if let other { try await UserStore(database).profile(uid: other) } else { nil }
            let (productName, alias, _) = try await deviceNames(record.did, aliasOf: record.ownerUID)
            entries.append(
                SharingEntryBody(
                    id: record.id, kind: record.kind, uid: other ?? "", username: Self.mask(profile?.username ?? ""),
                    userAlias: sent ? record.guestAlias : record.ownerAlias, email: Self.mask(profile?.email ?? ""), phone: Self.mask(profile?.phone ?? ""),
                    did: record.did, productName: productName, deviceAlias: alias, status: record.status, createdAt: record.createdAt,
                    updatedAt: record.updatedAt, expiredAt: record.expiredAt))
        }
        return (entries, page.total)
    }

    /// `GET /app/sharing/code/{code}`: what the QR code offers, for anyone but its owner.
    func inspect(_ user: AuthenticatedUser, code: String) async throws -> SharingCodeBody {
        let record = try await pendingCode(code, for: user)
        let owner = try await UserStore(database).profile(uid: record.ownerUID)
        let (productName, alias, _) = try await deviceNames(record.did, aliasOf: record.ownerUID)
        return SharingCodeBody(
            owner: Self.mask(owner?.username.isEmpty == false ? owner!.username : owner?.email ?? ""), productName: productName, deviceAlias: alias,
            expiredAt: record.expiredAt)
    }

    // MARK: Answering

    /// `PUT /app/sharing/{id}?status=1|2`: the receiver accepts or refuses.
    func answer(_ user: AuthenticatedUser, id: Int64, accept: Bool) async throws {
        guard let record = try await SharingStore(database).find(id), record.guestUID == user.uid, record.kind == .user else {
            throw CloudAPIError.sharingNotFound()
        }
        try await settle(record, guest: user.uid, accept: accept)
    }

    /// `POST /app/sharing/code/{code}`: anyone but the owner accepts a QR code, once.
    func accept(_ user: AuthenticatedUser, code: String) async throws {
        try await settle(try await pendingCode(code, for: user), guest: user.uid, accept: true)
    }

    private func settle(_ record: SharingRecord, guest uid: String, accept: Bool) async throws {
        let now = Clock.unixNow()
        guard record.status == .pending else { throw CloudAPIError.sharingCompleted() }
        guard record.expiredAt > now else { throw CloudAPIError.sharingExpired() }
        try await database.transaction { transaction in
            guard try await DeviceStore(transaction).find(record.did, lockingForUpdate: true) != nil else { throw CloudAPIError.deviceNotFound() }
            guard let moved = try await SharingStore(transaction).move(record.id, from: .pending, to: accept ? .accepted : .refused, guestUID: uid, now: now)
            else { throw CloudAPIError.sharingCompleted() }
            guard accept else { return }
            let roles = try await BindingStore(transaction).roles(of: record.did)
            guard roles.contains(where: { $0.uid == moved.ownerUID && $0.role == .owner }) else {
                throw CloudAPIError.onlyOwnerCanShare(detail: "the one who shared no longer owns the device")
            }
            guard !roles.contains(where: { $0.uid == uid }) else { throw CloudAPIError.guestAlreadyBound() }
            try await BindingStore(transaction).insert(uid, did: record.did, role: .guest, remark: nil, alias: nil, at: now)
            if let minutes = moved.durationMinutes {
                try await SharingStore(transaction).limitBinding(uid: uid, did: record.did, expiresAt: now + minutes * 60)
            }
        }
        if accept { await bus.publish(.binding(uid: uid, did: record.did, bound: true)) }
        let device = try await deviceNames(record.did, aliasOf: record.ownerUID).display
        let guestName = try await name(of: uid)
        try await messages.post(
            to: record.ownerUID, content: "\(guestName) \(accept ? "accepted" : "refused") \(device)", data: event(accept ? "accepted" : "refused", record))
        if accept { try await messages.post(to: uid, content: "You can now use \(device)", data: event("accepted", record)) }
    }

    private func pendingCode(_ code: String, for user: AuthenticatedUser) async throws -> SharingRecord {
        guard (1...64).contains(code.utf8.count), let record = try await SharingStore(database).find(codeHash: Secrets.sha256(code)) else {
            throw CloudAPIError.sharingNotFound()
        }
        guard record.ownerUID != user.uid else { throw CloudAPIError.onlyGuestCanCheckQRCode() }
        guard record.status == .pending else { throw CloudAPIError.sharingCompleted() }
        guard record.expiredAt > Clock.unixNow() else { throw CloudAPIError.sharingExpired() }
        return record
    }

    // MARK: Cancelling and revoking

    /// `DELETE /app/sharing/{id}`: the owner cancels a pending invitation to a user, or revokes
    /// an accepted invitation (of either kind).
    func cancel(_ user: AuthenticatedUser, id: Int64) async throws {
        guard let record = try await SharingStore(database).find(id) else { throw CloudAPIError.sharingNotFound() }
        guard record.ownerUID == user.uid else { throw CloudAPIError.onlyOwnerCanOperate() }
        let now = Clock.unixNow()
        switch record.status {
        case .cancelled:
            throw CloudAPIError.sharingAlreadyCancelled()
        case .refused:
            throw CloudAPIError.sharingCompleted()
        case .pending:
            guard record.kind == .user else { throw CloudAPIError.sharingCompleted(detail: "a QR code cannot be withdrawn; it expires in 15 minutes") }
            guard try await SharingStore(database).move(id, from: .pending, to: .cancelled, now: now) != nil else { throw CloudAPIError.sharingCompleted() }
            if let guest = record.guestUID {
                let device = try await deviceNames(record.did, aliasOf: record.ownerUID).display
                try await messages.post(to: guest, content: "The invitation to \(device) was withdrawn", data: event("cancelled", record))
            }
        case .accepted:
            guard let guest = record.guestUID else { throw CloudAPIError.sharingCompleted() }
            try await database.transaction { transaction in
                guard try await SharingStore(transaction).move(id, from: .accepted, to: .cancelled, now: now) != nil else {
                    throw CloudAPIError.sharingAlreadyCancelled()
                }
                // The share's binding only: what a home gave stays with the home.
                try await BindingStore(transaction).deleteShared(guest, did: record.did)
            }
            try await ended(guest: guest, did: record.did)
            let device = try await deviceNames(record.did, aliasOf: record.ownerUID).display
            try await messages.post(to: guest, content: "Your access to \(device) was revoked", data: event("revoked", record))
            try await messages.post(to: user.uid, content: "You revoked \(try await name(of: guest))'s access to \(device)", data: event("revoked", record))
        }
    }

    /// `PUT /app/sharing/{id}/alias?user_alias=`: the owner names the guest, the guest the owner.
    func setAlias(_ user: AuthenticatedUser, id: Int64, alias: String) async throws {
        try Validation.displayText(alias, field: "user_alias", maximum: 64)
        guard let record = try await SharingStore(database).find(id) else { throw CloudAPIError.sharingNotFound() }
        guard user.uid == record.ownerUID || user.uid == record.guestUID else { throw CloudAPIError.onlySelfCanModifyAlias() }
        try await SharingStore(database).setAlias(id, ofGuest: user.uid == record.ownerUID, alias, now: Clock.unixNow())
    }

    /// `GET /app/{did}/bindings`: the owner lists the device's guests, masked.
    func guests(_ user: AuthenticatedUser, did: String) async throws -> JSONValue {
        try await requireOwner(user, did: did)
        var list: [JSONValue] = []
        for guest in try await BindingStore(database).guests(of: did) {
            let profile = try await UserStore(database).profile(uid: guest.uid)
            list.append([
                "uid": .string(guest.uid), "username": .string(Self.mask(profile?.username ?? "")), "phone": .string(Self.mask(profile?.phone ?? "")),
                "email": .string(Self.mask(profile?.email ?? "")), "created_at": .int(guest.boundAt),
            ])
        }
        return .array(list)
    }

    /// `DELETE /app/{did}/bindings?uid=`: the owner removes a guest (not itself: 9095), as a
    /// revocation does.
    func removeGuest(_ user: AuthenticatedUser, did: String, uid: String) async throws {
        try await requireOwner(user, did: did)
        guard uid != user.uid else { throw CloudAPIError.ownerCannotUnbindSelf() }
        let removed = try await database.transaction { transaction -> Bool in
            // A guest by sharing; a home's members lose the device when it leaves the home.
            guard try await BindingStore(transaction).deleteShared(uid, did: did) else { return false }
            try await SharingStore(transaction).revokeAccepted(did: did, guest: uid, now: Clock.unixNow())
            return true
        }
        guard removed else { throw CloudAPIError.guestNotFound(detail: "\(uid) is not a guest of \(did)") }
        try await ended(guest: uid, did: did)
        let device = try await deviceNames(did, aliasOf: user.uid).display
        try await messages.post(to: uid, content: "Your access to \(device) was revoked", data: ["event": "revoked", "did": .string(did)])
    }

    private func requireOwner(_ user: AuthenticatedUser, did: String) async throws {
        guard try await BindingStore(database).roles(of: did).contains(where: { $0.uid == user.uid && $0.role == .owner }) else {
            throw CloudAPIError.onlyOwnerCanOperate()
        }
    }

    /// `POST /app/sharing/{did}/transfer?uid=`: the owner hands the device to one of its guests
    /// and is unbound; the other guests stay, as the new owner's.
    func transfer(_ user: AuthenticatedUser, did: String, to uid: String) async throws {
        let leftHome = try await database.transaction { transaction -> [String] in
            // Homes are locked before devices, everywhere.
            let homes = HomeStore(transaction)
            if let home = try await homes.home(of: did) { try await homes.lock(home) }
            guard try await DeviceStore(transaction).find(did, lockingForUpdate: true) != nil else { throw CloudAPIError.deviceNotFound() }
            let roles = try await BindingStore(transaction).roles(of: did)
            guard roles.contains(where: { $0.uid == user.uid && $0.role == .owner }) else { throw CloudAPIError.onlyOwnerCanOperate() }
            guard uid != user.uid, roles.contains(where: { $0.uid == uid && $0.role == .guest }) else {
                throw CloudAPIError.guestNotFound(detail: "the new owner must be a guest of the device")
            }
            try await BindingStore(transaction).makeOwner(uid, did: did)
            _ = try await BindingStore(transaction).delete(user.uid, did: did)
            // The device leaves the old owner's home, and the members who had it through it lose it.
            guard let home = try await homes.home(of: did) else { return [] }
            return try await HomeService.takeOut(did, home: home, on: transaction).map(\.uid)
        }
        for member in leftHome { try await ended(guest: member, did: did) }
        await bus.publish(.binding(uid: user.uid, did: did, bound: false))
        let device = try await deviceNames(did, aliasOf: uid).display
        try await messages.post(to: uid, content: "You now own \(device)", data: ["event": "transferred", "did": .string(did)])
        try await messages.post(
            to: user.uid, content: "You handed \(device) to \(try await name(of: uid))", data: ["event": "transferred", "did": .string(did)])
    }

    /// A guest's access ended: their sessions hear of it (and stop receiving the device), and what
    /// they queued for it will not be sent.
    func ended(guest uid: String, did: String) async throws {
        await bus.publish(.binding(uid: uid, did: did, bound: false))
        for command in try await CommandLedger(database: database).failWaiting(did: did, uid: uid, message: "the user's access to the device ended") {
            await bus.publish(.command(command.update))
        }
    }

    // MARK: Helpers

    private func event(_ name: String, _ record: SharingRecord) -> JSONValue {
        ["event": .string(name), "sharing_id": .int(record.id), "did": .string(record.did)]
    }

    private func name(of uid: String) async throws -> String { try await Self.displayName(of: uid, database) }

    /// A user as the other party sees them in messages and lists: masked.
    static func displayName(of uid: String, _ executor: any SQLExecutor) async throws -> String {
        guard let profile = try await UserStore(executor).profile(uid: uid) else { return "someone" }
        let name = [profile.username, profile.email, profile.phone].first { !$0.isEmpty } ?? ""
        return name.isEmpty ? "someone" : mask(name)
    }

    private func deviceNames(_ did: String, aliasOf uid: String) async throws -> (product: String, alias: String, display: String) {
        guard let device = try await DeviceStore(database).find(did) else { return ("", "", did) }
        let product = try await ProductStore(database).find(device.productKey)
        let alias = try await BindingStore(database).binding(uid, did: did)?.alias ?? ""
        return (product?.name ?? "", alias, alias.isEmpty ? (product?.name ?? did) : alias)
    }

    /// `alice` → `a***e`, `alice@example.com` → `a***e@example.com`: enough to recognise, not to harvest.
    static func mask(_ text: String) -> String {
        guard !text.isEmpty else { return "" }
        let (local, domain): (Substring, Substring) =
            if let at = text.firstIndex(of: "@") { (text[..<at], text[at...]) } else { (Substring(text), "") }
        guard local.count > 2 else { return String(local.prefix(1)) + "***" + domain }
        return String(local.prefix(1)) + "***" + String(local.suffix(1)) + domain
    }
}
