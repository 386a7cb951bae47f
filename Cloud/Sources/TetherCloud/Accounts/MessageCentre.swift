import TetherCloudProtocol
import TetherCore

/// The message centre (`gizwits-openapi.md` §2.2): entries for a user, listed, marked read or
/// deleted by that user alone, and pushed to the user's live sessions the moment they are made.
struct MessageCentre: Sendable {
    let database: any SQLDatabase
    let bus: any ClusterBus

    /// Type 1: device sharing.
    static let sharing: Int64 = 1
    /// Type 5 (Tether): homes: invitations, membership, devices placed and taken out.
    static let homes: Int64 = 5

    /// Leaves `content` for `uid` and tells the user's sessions.
    func post(to uid: String, type: Int64 = MessageCentre.sharing, content: String, data: JSONValue) async throws {
        let message = try await MessageStore(database).insert(uid: uid, type: type, content: content, data: data, now: Clock.unixNow())
        await bus.publish(.message(uid: uid, message))
    }

    func list(_ user: AuthenticatedUser, type: Int64?, limit: Int64, skip: Int64) async throws -> (messages: [MessageBody], total: Int64) {
        try await MessageStore(database).list(uid: user.uid, type: type, limit: limit, skip: skip)
    }

    /// `PUT /app/devices/{did}/notices` (Tether): what the user wants to hear of a device they are
    /// bound to: `alert` and `error` events, `offline`.
    func setNotices(_ user: AuthenticatedUser, did: String, kinds: [String]) async throws -> [String] {
        guard kinds.allSatisfy(DeviceNotices.kinds.contains) else {
            throw CloudAPIError.formInvalid(detail: "kinds are alert, error and offline")
        }
        let unique = Array(Set(kinds)).sorted()
        guard try await BindingStore(database).setNotify(user.uid, did: did, unique) else { throw CloudAPIError.deviceNotBound() }
        return unique
    }

    /// `PUT /app/messages/{id}?status=1|2`.
    func mark(_ user: AuthenticatedUser, id: Int64, status: MessageBody.Status) async throws {
        guard status != .unread else { throw CloudAPIError.formInvalid(detail: "status is 1 (read) or 2 (delete)") }
        guard let message = try await MessageStore(database).owner(of: id) else { throw CloudAPIError.messageNotFound() }
        guard message.uid == user.uid else { throw CloudAPIError.onlyReceiverCanMarkMessage() }
        guard message.status != .deleted else { throw CloudAPIError.messageAlreadyDeleted() }
        try await MessageStore(database).setStatus(id, status, now: Clock.unixNow())
    }
}
