import TetherCloudProtocol
import TetherCore

/// Groups of devices (reference §2.6): each a user's own, seen by no one else (9517 for anyone
/// else's). A device joins only a group of a user bound to it (9017 otherwise), of the group's
/// product when the group has one (9015), and leaves it with its binding. A single-product group
/// is controlled as one: each device through the control path, each with its own result.
struct GroupService: Sendable {
    let database: any SQLDatabase
    let control: ControlService

    static let maximumGroups = 100
    static let maximumDevices = 500

    func create(_ user: AuthenticatedUser, _ fields: GroupFieldsBody) async throws -> GroupBody {
        if let productKey = fields.productKey {
            guard try await ProductStore(database).find(productKey) != nil else { throw CloudAPIError.productKeyInvalid(detail: "no product \(productKey)") }
        }
        let id = "gr_" + Secrets.hex(bytes: 10)
        let now = Clock.unixNow()
        try await database.transaction { transaction in
            let store = GroupStore(transaction)
            guard try await store.count(uid: user.uid) < Self.maximumGroups else {
                throw CloudAPIError.formInvalid(detail: "a user has at most \(Self.maximumGroups) groups")
            }
            try await store.insert(id: id, uid: user.uid, fields, now: now)
        }
        return try await group(user, id: id)
    }

    func list(_ user: AuthenticatedUser) async throws -> [GroupBody] {
        try await GroupStore(database).list(uid: user.uid)
    }

    func group(_ user: AuthenticatedUser, id: String) async throws -> GroupBody {
        guard id.utf8.count <= 64, let group = try await GroupStore(database).find(id: id, uid: user.uid) else {
            throw CloudAPIError.groupNotFound(detail: "no group \(id) of yours")
        }
        return group
    }

    /// Renames a group; its product stays what it was made with.
    func rename(_ user: AuthenticatedUser, id: String, _ fields: GroupFieldsBody) async throws {
        guard try await GroupStore(database).rename(id: id, uid: user.uid, name: fields.name, now: Clock.unixNow()) else {
            throw CloudAPIError.groupNotFound(detail: "no group \(id) of yours")
        }
    }

    func delete(_ user: AuthenticatedUser, id: String) async throws {
        let deleted = try await database.transaction { transaction in try await GroupStore(transaction).delete(id: id, uid: user.uid) }
        guard deleted else { throw CloudAPIError.groupNotFound(detail: "no group \(id) of yours") }
    }

    func devices(_ user: AuthenticatedUser, id: String) async throws -> [GroupDeviceBody] {
        _ = try await group(user, id: id)
        return try await GroupStore(database).members(groupID: id)
    }

    /// Adds devices, each on its own: those the user is bound to (and of the group's product)
    /// join; a device already in the group counts as added.
    func add(_ user: AuthenticatedUser, id: String, dids: [String]) async throws -> GroupDevicesResultBody {
        let group = try await group(user, id: id)
        var result = GroupDevicesResultBody(success: [], failed: [])
        let now = Clock.unixNow()
        for did in dids {
            do {
                try await database.transaction { transaction in
                    guard let device = try await BindingStore(transaction).device(boundBy: user.uid, did: did) else { throw CloudAPIError.deviceNotBound() }
                    if group.isSingleProduct, device.productKey != group.productKey {
                        throw CloudAPIError.formInvalid(detail: "\(did) is of product \(device.productKey), the group of \(group.productKey)")
                    }
                    let store = GroupStore(transaction)
                    guard try await store.memberCount(groupID: id) < Self.maximumDevices else {
                        throw CloudAPIError.formInvalid(detail: "a group holds at most \(Self.maximumDevices) devices")
                    }
                    try await store.add(groupID: id, uid: user.uid, did: did, now: now)
                }
                result.success.append(did)
            } catch let error as CloudAPIError {
                result.failed.append(.init(did: did, errorCode: error.code, message: error.detail.isEmpty ? error.message : error.detail))
            }
        }
        return result
    }

    func remove(_ user: AuthenticatedUser, id: String, dids: [String]) async throws -> GroupDevicesResultBody {
        _ = try await group(user, id: id)
        var result = GroupDevicesResultBody(success: [], failed: [])
        let store = GroupStore(database)
        for did in dids {
            if try await store.remove(groupID: id, did: did) {
                result.success.append(did)
            } else {
                result.failed.append(.init(did: did, errorCode: CloudError.deviceNotFound.code, message: "\(did) is not in the group"))
            }
        }
        return result
    }

    /// Controls every device of a single-product group as the user would one by one: a result
    /// per device, true when its command went into the ledger.
    func control(_ user: AuthenticatedUser, id: String, _ body: ControlBody) async throws -> [GroupControlResultBody] {
        let group = try await group(user, id: id)
        guard group.isSingleProduct else { throw CloudAPIError.formInvalid(detail: "only a single-product group is controlled as one") }
        let request: ControlService.Request =
            switch body.command {
            case .attrs(let attrs): .attrs(attrs)
            case .raw(let bytes): .raw(bytes)
            }
        var results: [GroupControlResultBody] = []
        for member in try await GroupStore(database).members(groupID: id) {
            do {
                let record = try await control.control(user, did: member.did, request, queueSeconds: body.queueTTL)
                results.append(GroupControlResultBody(did: member.did, result: true, commandID: record.id))
            } catch let error as CloudAPIError {
                // A value the model refuses is refused for every device alike: the request is wrong.
                if error.code == CloudError.attrInvalid.code || error.code == CloudError.formInvalid.code { throw error }
                results.append(GroupControlResultBody(did: member.did, result: false, errorCode: error.code))
            }
        }
        return results
    }
}
