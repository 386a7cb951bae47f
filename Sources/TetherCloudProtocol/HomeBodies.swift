public import TetherCore

/// A member's role in a home (Tether extension): the owner (who made it) manages everything and
/// alone deletes it; an admin renames it, manages rooms and places devices, and invites members;
/// a member sees and controls the home's devices.
public enum HomeRole: String, Sendable, Hashable, CaseIterable {
    case owner
    case admin
    case member
}

/// `POST /app/homes` (name required) and `PUT /app/homes/{id}` (what changes).
public struct HomeFieldsBody: Sendable, Hashable {
    public var name: String?
    /// A place name for people ("Berlin, Prenzlauer Berg").
    public var geoName: String?
    public var latitude: Double?
    public var longitude: Double?

    public init(name: String? = nil, geoName: String? = nil, latitude: Double? = nil, longitude: Double? = nil) {
        self.name = name
        self.geoName = geoName
        self.latitude = latitude
        self.longitude = longitude
    }

    public init(json: JSONValue) throws(CloudBodyError) {
        let reader = try BodyReader(json)
        let latitude = try reader.optionalNumber("latitude")
        let longitude = try reader.optionalNumber("longitude")
        if let latitude, !(-90...90).contains(latitude) { throw CloudBodyError(field: "latitude", "is -90 to 90") }
        if let longitude, !(-180...180).contains(longitude) { throw CloudBodyError(field: "longitude", "is -180 to 180") }
        self.init(name: try reader.optionalString("name"), geoName: try reader.optionalString("geo_name"), latitude: latitude, longitude: longitude)
    }

    public var json: JSONValue {
        var object = JSONObject()
        if let name { object["name"] = .string(name) }
        if let geoName { object["geo_name"] = .string(geoName) }
        if let latitude { object["latitude"] = .double(latitude) }
        if let longitude { object["longitude"] = .double(longitude) }
        return .object(object)
    }
}

/// A room of a home.
public struct RoomBody: Sendable, Hashable {
    public var id: Int64
    public var name: String

    public init(id: Int64, name: String) {
        self.id = id
        self.name = name
    }

    public init(json: JSONValue) throws(CloudBodyError) {
        let reader = try BodyReader(json)
        self.init(id: try reader.int("id"), name: try reader.string("name"))
    }

    public var json: JSONValue { ["id": .int(id), "name": .string(name)] }
}

/// A member of a home as the other members see them (the name masked, as sharing does).
public struct HomeMemberBody: Sendable, Hashable {
    public var uid: String
    public var name: String
    public var role: HomeRole
    public var joinedAt: Int64

    public init(uid: String, name: String, role: HomeRole, joinedAt: Int64) {
        self.uid = uid
        self.name = name
        self.role = role
        self.joinedAt = joinedAt
    }

    public init(json: JSONValue) throws(CloudBodyError) {
        let reader = try BodyReader(json)
        guard let role = HomeRole(rawValue: try reader.string("role")) else { throw CloudBodyError(field: "role", "is owner, admin or member") }
        self.init(uid: try reader.string("uid"), name: try reader.string("name"), role: role, joinedAt: try reader.int("joined_at"))
    }

    public var json: JSONValue { ["uid": .string(uid), "name": .string(name), "role": .string(role.rawValue), "joined_at": .int(joinedAt)] }
}

/// A device placed in a home, and its room.
public struct HomeDeviceBody: Sendable, Hashable {
    public var did: String
    public var roomID: Int64?

    public init(did: String, roomID: Int64? = nil) {
        self.did = did
        self.roomID = roomID
    }

    public init(json: JSONValue) throws(CloudBodyError) {
        let reader = try BodyReader(json)
        self.init(did: try reader.string("did"), roomID: try reader.optionalInt("room_id"))
    }

    public var json: JSONValue { ["did": .string(did), "room_id": roomID.map(JSONValue.int) ?? .null] }
}

/// A home as its members read it (`GET /app/homes`, `GET /app/homes/{id}`): `role` is the
/// reader's own.
public struct HomeBody: Sendable, Hashable {
    public var id: Int64
    public var name: String
    public var geoName: String
    public var latitude: Double?
    public var longitude: Double?
    public var role: HomeRole
    public var rooms: [RoomBody]
    public var members: [HomeMemberBody]
    public var devices: [HomeDeviceBody]
    public var createdAt: Int64

    public init(
        id: Int64, name: String, geoName: String = "", latitude: Double? = nil, longitude: Double? = nil, role: HomeRole, rooms: [RoomBody] = [],
        members: [HomeMemberBody] = [], devices: [HomeDeviceBody] = [], createdAt: Int64
    ) {
        self.id = id
        self.name = name
        self.geoName = geoName
        self.latitude = latitude
        self.longitude = longitude
        self.role = role
        self.rooms = rooms
        self.members = members
        self.devices = devices
        self.createdAt = createdAt
    }

    public init(json: JSONValue) throws(CloudBodyError) {
        let reader = try BodyReader(json)
        guard let role = HomeRole(rawValue: try reader.string("role")) else { throw CloudBodyError(field: "role", "is owner, admin or member") }
        self.init(
            id: try reader.int("id"), name: try reader.string("name"), geoName: try reader.optionalString("geo_name") ?? "",
            latitude: try reader.optionalNumber("latitude"), longitude: try reader.optionalNumber("longitude"), role: role,
            rooms: try reader.list("rooms", maximum: 1000).map { room throws(CloudBodyError) in try RoomBody(json: .object(room.object)) },
            members: try reader.list("members", maximum: 1000).map { member throws(CloudBodyError) in try HomeMemberBody(json: .object(member.object)) },
            devices: try reader.list("devices", maximum: 10_000).map { device throws(CloudBodyError) in try HomeDeviceBody(json: .object(device.object)) },
            createdAt: try reader.int("created_at"))
    }

    public var json: JSONValue {
        [
            "id": .int(id), "name": .string(name), "geo_name": .string(geoName), "latitude": latitude.map(JSONValue.double) ?? .null,
            "longitude": longitude.map(JSONValue.double) ?? .null, "role": .string(role.rawValue), "rooms": .array(rooms.map(\.json)),
            "members": .array(members.map(\.json)), "devices": .array(devices.map(\.json)), "created_at": .int(createdAt),
        ]
    }
}

/// `POST /app/homes/{id}/members`: invites a user (by uid, username, e-mail or phone) to join
/// with `role` (admin or member); valid 24 hours, answered like a sharing invitation.
public struct HomeInvitationCreateBody: Sendable, Hashable {
    public var receiver: SharingCreateBody.Receiver
    public var role: HomeRole

    public init(receiver: SharingCreateBody.Receiver, role: HomeRole = .member) {
        self.receiver = receiver
        self.role = role
    }

    public init(json: JSONValue) throws(CloudBodyError) {
        let reader = try BodyReader(json)
        let receivers: [SharingCreateBody.Receiver] = [
            try reader.optionalString("uid").map(SharingCreateBody.Receiver.uid),
            try reader.optionalString("username").map(SharingCreateBody.Receiver.username),
            try reader.optionalString("email").map(SharingCreateBody.Receiver.email), try reader.optionalString("phone").map(SharingCreateBody.Receiver.phone),
        ].compactMap { $0 }
        guard receivers.count == 1 else { throw CloudBodyError(field: "uid", "one of uid, username, email or phone names the receiver") }
        let role = try reader.optionalString("role").map { text throws(CloudBodyError) -> HomeRole in
            guard let role = HomeRole(rawValue: text), role != .owner else { throw CloudBodyError(field: "role", "is admin or member") }
            return role
        }
        self.init(receiver: receivers[0], role: role ?? .member)
    }

    public var json: JSONValue {
        var object: JSONObject = ["role": .string(role.rawValue)]
        switch receiver {
        case .uid(let uid): object["uid"] = .string(uid)
        case .username(let name): object["username"] = .string(name)
        case .email(let email): object["email"] = .string(email)
        case .phone(let phone): object["phone"] = .string(phone)
        }
        return .object(object)
    }
}

/// An invitation to join a home (`GET /app/home_invitations`), with the statuses of sharing:
/// 0 pending, 1 accepted, 2 refused, 3 cancelled.
public struct HomeInvitationBody: Sendable, Hashable {
    public var id: Int64
    public var homeID: Int64
    public var homeName: String
    public var inviterUID: String
    public var inviteeUID: String
    public var role: HomeRole
    public var status: SharingEntryBody.Status
    public var createdAt: Int64
    public var expiredAt: Int64

    public init(
        id: Int64, homeID: Int64, homeName: String, inviterUID: String, inviteeUID: String, role: HomeRole, status: SharingEntryBody.Status, createdAt: Int64,
        expiredAt: Int64
    ) {
        self.id = id
        self.homeID = homeID
        self.homeName = homeName
        self.inviterUID = inviterUID
        self.inviteeUID = inviteeUID
        self.role = role
        self.status = status
        self.createdAt = createdAt
        self.expiredAt = expiredAt
    }

    public init(json: JSONValue) throws(CloudBodyError) {
        let reader = try BodyReader(json)
        guard let role = HomeRole(rawValue: try reader.string("role")) else { throw CloudBodyError(field: "role", "is owner, admin or member") }
        guard let status = SharingEntryBody.Status(rawValue: try reader.int("status")) else { throw CloudBodyError(field: "status", "is 0 to 3") }
        self.init(
            id: try reader.int("id"), homeID: try reader.int("home_id"), homeName: try reader.string("home_name"), inviterUID: try reader.string("inviter_uid"),
            inviteeUID: try reader.string("invitee_uid"), role: role, status: status, createdAt: try reader.int("created_at"),
            expiredAt: try reader.int("expired_at"))
    }

    public var json: JSONValue {
        [
            "id": .int(id), "home_id": .int(homeID), "home_name": .string(homeName), "inviter_uid": .string(inviterUID), "invitee_uid": .string(inviteeUID),
            "role": .string(role.rawValue), "status": .int(status.rawValue), "created_at": .int(createdAt), "expired_at": .int(expiredAt),
        ]
    }
}

/// `POST /app/homes/{id}/rooms` and `PUT …/rooms/{room_id}`: the room's name.
public struct RoomFieldsBody: Sendable, Hashable {
    public var name: String

    public init(name: String) { self.name = name }

    public init(json: JSONValue) throws(CloudBodyError) {
        self.init(name: try BodyReader(json).text("name"))
    }

    public var json: JSONValue { ["name": .string(name)] }
}

/// `PUT /app/homes/{id}/devices/{did}`: the room to put the device in (none: the home only).
public struct HomePlacementBody: Sendable, Hashable {
    public var roomID: Int64?

    public init(roomID: Int64? = nil) { self.roomID = roomID }

    public init(json: JSONValue) throws(CloudBodyError) {
        self.init(roomID: try BodyReader(json).optionalInt("room_id"))
    }

    public var json: JSONValue { roomID.map { ["room_id": .int($0)] } ?? .object([:]) }
}

/// `PUT /app/homes/{id}/members/{uid}`: the member's new role (admin or member).
public struct HomeRoleBody: Sendable, Hashable {
    public var role: HomeRole

    public init(role: HomeRole) { self.role = role }

    public init(json: JSONValue) throws(CloudBodyError) {
        guard let role = HomeRole(rawValue: try BodyReader(json).text("role")), role != .owner else {
            throw CloudBodyError(field: "role", "is admin or member")
        }
        self.init(role: role)
    }

    public var json: JSONValue { ["role": .string(role.rawValue)] }
}
