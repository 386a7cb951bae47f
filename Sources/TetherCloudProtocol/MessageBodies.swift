public import TetherCore

/// One entry of the message centre (`gizwits-openapi.md` §2.2): `GET /app/messages` lists them,
/// and the WebSocket pushes each new one as the Tether frame `s2c_message`.
public struct MessageBody: Sendable, Hashable {
    /// 0 unread, 1 read, 2 deleted.
    public enum Status: Int64, Sendable, Hashable {
        case unread = 0
        case read = 1
        case deleted = 2
    }

    public var id: Int64
    /// 1: device sharing.
    public var type: Int64
    public var status: Status
    /// What happened, for people.
    public var content: String
    /// Tether: what the message is about, for apps (`{"event", "sharing_id", "did"}` for sharing).
    public var data: JSONValue
    /// Unix seconds.
    public var createdAt: Int64
    public var updatedAt: Int64

    public init(id: Int64, type: Int64, status: Status, content: String, data: JSONValue = .object([:]), createdAt: Int64, updatedAt: Int64) {
        self.id = id
        self.type = type
        self.status = status
        self.content = content
        self.data = data
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }

    public init(json: JSONValue) throws(CloudBodyError) {
        let reader = try BodyReader(json)
        guard let status = Status(rawValue: try reader.int("status")) else { throw CloudBodyError(field: "status", "is 0, 1 or 2") }
        self.init(
            id: try reader.int("id"), type: try reader.int("type"), status: status, content: try reader.string("content"),
            data: reader.value("data") ?? .object([:]), createdAt: try reader.optionalInt("created_at") ?? 0,
            updatedAt: try reader.optionalInt("updated_at") ?? 0)
    }

    public var json: JSONValue {
        [
            "id": .int(id), "type": .int(type), "status": .int(status.rawValue), "content": .string(content), "data": data,
            "created_at": .int(createdAt), "updated_at": .int(updatedAt),
        ]
    }
}
