public import TetherCloudProtocol

extension TetherClient {
    /// Homes, rooms and members (Tether extension), with the logged-in user's session.
    public var homes: Homes { Homes(client: self) }
}

/// Homes with rooms and members. A home's devices reach every member as devices they are bound
/// to (role `guest`, ``Device/homeID``); leaving or being removed takes them away on every path.
/// Invitations and membership changes also arrive as ``TetherClientEvent/message(_:)`` (type 5)
/// while the real-time connection is up. Errors carry the cloud's code (`TetherError.cloudCode`:
/// 9505 not a member, 9506 not allowed by your role, 9507 in another home).
public struct Homes: Sendable {
    let client: TetherClient

    /// The homes you belong to, with your role in each.
    public func list() async throws(TetherError) -> [Home] {
        try await call { api, session throws(TetherError) in try await api.homes(session) }
    }

    /// Makes a home; you are its owner.
    public func create(name: String, geoName: String? = nil, latitude: Double? = nil, longitude: Double? = nil) async throws(TetherError) -> Home {
        try await call { api, session throws(TetherError) in
            try await api.createHome(session, name: name, geoName: geoName, latitude: latitude, longitude: longitude)
        }
    }

    public func home(_ id: Int64) async throws(TetherError) -> Home {
        try await call { api, session throws(TetherError) in try await api.home(session, id: id) }
    }

    public func rename(_ id: Int64, to name: String) async throws(TetherError) -> Home {
        try await call { api, session throws(TetherError) in try await api.updateHome(session, id: id, HomeFieldsBody(name: name)) }
    }

    /// Deletes a home you own; its members lose its devices.
    public func delete(_ id: Int64) async throws(TetherError) {
        try await call { api, session throws(TetherError) in try await api.deleteHome(session, id: id) }
    }

    public func addRoom(_ name: String, to home: Int64) async throws(TetherError) -> HomeRoom {
        try await call { api, session throws(TetherError) in try await api.addRoom(session, home: home, name: name) }
    }

    public func deleteRoom(_ room: Int64, of home: Int64) async throws(TetherError) {
        try await call { api, session throws(TetherError) in try await api.deleteRoom(session, home: home, room: room) }
    }

    /// Places a device you own in a home (and a room); the device list shows where.
    public func place(_ did: String, in home: Int64, room: Int64? = nil) async throws(TetherError) {
        try await call { api, session throws(TetherError) in try await api.placeDevice(session, did: did, home: home, room: room) }
        _ = try await client.refreshBindings()
    }

    public func remove(_ did: String, from home: Int64) async throws(TetherError) {
        try await call { api, session throws(TetherError) in try await api.removeDevice(session, did: did, home: home) }
        _ = try await client.refreshBindings()
    }

    /// Invites a user to join a home.
    @discardableResult
    public func invite(_ receiver: TetherCloudAPI.SharingReceiver, to home: Int64, as role: HomeRole = .member) async throws(TetherError) -> HomeInvitation {
        try await call { api, session throws(TetherError) in try await api.inviteToHome(session, home: home, receiver, role: role) }
    }

    public func invitations(sent: Bool = false) async throws(TetherError) -> [HomeInvitation] {
        try await call { api, session throws(TetherError) in try await api.homeInvitations(session, sent: sent) }
    }

    /// Accepts (the home's devices join ``TetherClient/devices``) or refuses an invitation.
    public func answer(_ invitation: Int64, accept: Bool) async throws(TetherError) {
        try await call { api, session throws(TetherError) in try await api.answerHomeInvitation(session, id: invitation, accept: accept) }
        if accept { _ = try await client.refreshBindings() }
    }

    public func cancel(_ invitation: Int64) async throws(TetherError) {
        try await call { api, session throws(TetherError) in try await api.cancelHomeInvitation(session, id: invitation) }
    }

    public func setRole(_ role: HomeRole, of uid: String, in home: Int64) async throws(TetherError) {
        try await call { api, session throws(TetherError) in try await api.setHomeRole(session, home: home, uid: uid, role: role) }
    }

    /// Removes a member, or leaves the home when `uid` is yours; the home's devices go.
    public func removeMember(_ uid: String, from home: Int64) async throws(TetherError) {
        try await call { api, session throws(TetherError) in try await api.removeHomeMember(session, home: home, uid: uid) }
        _ = try await client.refreshBindings()
    }

    private func call<Result: Sendable>(_ body: (TetherCloudAPI, CloudSession) async throws(TetherError) -> Result) async throws(TetherError) -> Result {
        try await client.withCloudSession(body)
    }
}
