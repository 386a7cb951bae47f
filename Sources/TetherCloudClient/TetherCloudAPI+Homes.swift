import NIOHTTP1
public import TetherCloudProtocol
public import TetherCore

/// A home as its members read it (Tether extension): `role` is yours.
public typealias Home = HomeBody
/// A room of a home.
public typealias HomeRoom = RoomBody
/// A member of a home (their name masked).
public typealias HomeMember = HomeMemberBody
/// An invitation to join a home.
public typealias HomeInvitation = HomeInvitationBody

extension TetherCloudAPI {
    // MARK: Homes (Tether extension)

    /// The homes you belong to, with your role in each.
    public func homes(_ session: CloudSession) async throws(TetherError) -> [Home] {
        let answer = try await call(.GET, "/app/homes", session: session)
        return try (answer.arrayValue ?? []).map { entry throws(TetherError) in try decodeBody("a home", entry, as: HomeBody.init(json:)) }
    }

    /// Makes a home; you are its owner.
    public func createHome(
        _ session: CloudSession, name: String, geoName: String? = nil, latitude: Double? = nil, longitude: Double? = nil
    ) async throws(TetherError) -> Home {
        let body = HomeFieldsBody(name: name, geoName: geoName, latitude: latitude, longitude: longitude)
        return try decodeBody("the home", try await call(.POST, "/app/homes", body: body.json, session: session), as: HomeBody.init(json:))
    }

    /// One home you belong to (9505 otherwise).
    public func home(_ session: CloudSession, id: Int64) async throws(TetherError) -> Home {
        try decodeBody("the home", try await call(.GET, "/app/homes/\(id)", session: session), as: HomeBody.init(json:))
    }

    /// Renames or relocates a home (owner or admin).
    public func updateHome(_ session: CloudSession, id: Int64, _ fields: HomeFieldsBody) async throws(TetherError) -> Home {
        try decodeBody("the home", try await call(.PUT, "/app/homes/\(id)", body: fields.json, session: session), as: HomeBody.init(json:))
    }

    /// Deletes a home (owner only): every member's access through it ends.
    public func deleteHome(_ session: CloudSession, id: Int64) async throws(TetherError) {
        _ = try await call(.DELETE, "/app/homes/\(id)", session: session)
    }

    /// Adds a room (owner or admin).
    public func addRoom(_ session: CloudSession, home: Int64, name: String) async throws(TetherError) -> HomeRoom {
        try decodeBody(
            "the room", try await call(.POST, "/app/homes/\(home)/rooms", body: RoomFieldsBody(name: name).json, session: session), as: RoomBody.init(json:))
    }

    public func renameRoom(_ session: CloudSession, home: Int64, room: Int64, name: String) async throws(TetherError) {
        _ = try await call(.PUT, "/app/homes/\(home)/rooms/\(room)", body: RoomFieldsBody(name: name).json, session: session)
    }

    /// Deletes a room; its devices stay in the home, in no room.
    public func deleteRoom(_ session: CloudSession, home: Int64, room: Int64) async throws(TetherError) {
        _ = try await call(.DELETE, "/app/homes/\(home)/rooms/\(room)", session: session)
    }

    /// Places a device you own in a home (and a room), or moves it to another room: every
    /// member gets it. 9507 when it is in another home.
    public func placeDevice(_ session: CloudSession, did: String, home: Int64, room: Int64? = nil) async throws(TetherError) {
        _ = try await call(.PUT, "/app/homes/\(home)/devices/\(did.tetherPercentEncoded)", body: HomePlacementBody(roomID: room).json, session: session)
    }

    /// Takes a device out of a home: the members who had it through the home lose it.
    public func removeDevice(_ session: CloudSession, did: String, home: Int64) async throws(TetherError) {
        _ = try await call(.DELETE, "/app/homes/\(home)/devices/\(did.tetherPercentEncoded)", session: session)
    }

    /// Invites a user to join a home as `role` (admin: owner only); valid 24 hours.
    public func inviteToHome(
        _ session: CloudSession, home: Int64, _ receiver: SharingReceiver, role: HomeRole = .member
    ) async throws(TetherError)
        -> HomeInvitation
    {
        let body = HomeInvitationCreateBody(receiver: receiver.body, role: role)
        return try decodeBody(
            "the invitation", try await call(.POST, "/app/homes/\(home)/members", body: body.json, session: session), as: HomeInvitationBody.init(json:))
    }

    /// Invitations to homes you received (or sent), newest first.
    public func homeInvitations(_ session: CloudSession, sent: Bool = false) async throws(TetherError) -> [HomeInvitation] {
        let answer = try await call(.GET, "/app/home_invitations?sent=\(sent ? 1 : 0)", session: session)
        return try (answer.arrayValue ?? []).map { entry throws(TetherError) in try decodeBody("an invitation", entry, as: HomeInvitationBody.init(json:)) }
    }

    /// Accepts (joining the home, with its devices) or refuses an invitation.
    public func answerHomeInvitation(_ session: CloudSession, id: Int64, accept: Bool) async throws(TetherError) {
        _ = try await call(.PUT, "/app/home_invitations/\(id)?status=\(accept ? 1 : 2)", session: session)
    }

    /// Withdraws a pending invitation you sent.
    public func cancelHomeInvitation(_ session: CloudSession, id: Int64) async throws(TetherError) {
        _ = try await call(.DELETE, "/app/home_invitations/\(id)", session: session)
    }

    /// Changes a member's role (owner only).
    public func setHomeRole(_ session: CloudSession, home: Int64, uid: String, role: HomeRole) async throws(TetherError) {
        _ = try await call(.PUT, "/app/homes/\(home)/members/\(uid.tetherPercentEncoded)", body: HomeRoleBody(role: role).json, session: session)
    }

    /// Removes a member (the owner anyone, an admin members), or leaves (your own uid).
    public func removeHomeMember(_ session: CloudSession, home: Int64, uid: String) async throws(TetherError) {
        _ = try await call(.DELETE, "/app/homes/\(home)/members/\(uid.tetherPercentEncoded)", session: session)
    }
}
