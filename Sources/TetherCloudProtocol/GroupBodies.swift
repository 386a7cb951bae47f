public import TetherCore

/// `POST /app/group` and `PUT /app/group/{id}`: a group's name, and for a new group the one
/// product its devices are of (a single-product group, which can be controlled as one); without
/// it the group is mixed. The product cannot change once the group exists.
public struct GroupFieldsBody: Sendable, Hashable {
    public var name: String
    public var productKey: String?

    public static let maximumName = 64

    public init(name: String, productKey: String? = nil) {
        self.name = name
        self.productKey = productKey
    }

    public init(json: JSONValue) throws(CloudBodyError) {
        let reader = try BodyReader(json)
        let name = try reader.text("group_name")
        guard name.utf8.count <= Self.maximumName else { throw CloudBodyError(field: "group_name", "must be at most \(Self.maximumName) bytes") }
        let productKey = try reader.optionalString("product_key")
        self.init(name: name, productKey: productKey?.isEmpty == true ? nil : productKey)
    }

    public var json: JSONValue {
        var object: JSONObject = ["group_name": .string(name)]
        if let productKey { object["product_key"] = .string(productKey) }
        return .object(object)
    }
}

/// A group as `GET /app/group` lists it: `product_key` and `verbose_name` (the product's name)
/// are empty for a mixed group. Times are Unix seconds.
public struct GroupBody: Sendable, Hashable {
    public var id: String
    public var name: String
    public var productKey: String
    public var productName: String
    public var createdAt: Int64
    public var updatedAt: Int64

    public init(id: String, name: String, productKey: String, productName: String, createdAt: Int64, updatedAt: Int64) {
        self.id = id
        self.name = name
        self.productKey = productKey
        self.productName = productName
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }

    public init(json: JSONValue) throws(CloudBodyError) {
        let reader = try BodyReader(json)
        self.init(
            id: try reader.text("id"), name: try reader.string("group_name"), productKey: try reader.optionalString("product_key") ?? "",
            productName: try reader.optionalString("verbose_name") ?? "", createdAt: try reader.optionalInt("created_at") ?? 0,
            updatedAt: try reader.optionalInt("updated_at") ?? 0)
    }

    /// A single-product group: controllable as one.
    public var isSingleProduct: Bool { !productKey.isEmpty }

    public var json: JSONValue {
        [
            "id": .string(id), "group_name": .string(name), "product_key": .string(productKey), "verbose_name": .string(productName),
            "created_at": .int(createdAt), "updated_at": .int(updatedAt),
        ]
    }
}

/// A device of a group (`GET /app/group/{id}/devices`).
public struct GroupDeviceBody: Sendable, Hashable {
    public var did: String
    public var type: String
    public var productName: String
    public var alias: String
    public var productKey: String

    public init(did: String, type: String, productName: String, alias: String, productKey: String) {
        self.did = did
        self.type = type
        self.productName = productName
        self.alias = alias
        self.productKey = productKey
    }

    public init(json: JSONValue) throws(CloudBodyError) {
        let reader = try BodyReader(json)
        self.init(
            did: try reader.text("did"), type: try reader.optionalString("type") ?? "normal", productName: try reader.optionalString("verbose_name") ?? "",
            alias: try reader.optionalString("dev_alias") ?? "", productKey: try reader.optionalString("product_key") ?? "")
    }

    public var json: JSONValue {
        ["did": .string(did), "type": .string(type), "verbose_name": .string(productName), "dev_alias": .string(alias), "product_key": .string(productKey)]
    }
}

/// `POST` and `DELETE /app/group/{id}/devices`: `{"dids": […]}`, 1 to 100 devices.
public struct GroupDidsBody: Sendable, Hashable {
    public var dids: [String]

    public static let maximumDevices = 100

    public init(dids: [String]) { self.dids = dids }

    public init(json: JSONValue) throws(CloudBodyError) {
        let reader = try BodyReader(json)
        guard let dids = try reader.optionalStrings("dids"), !dids.isEmpty, dids.count <= Self.maximumDevices else {
            throw CloudBodyError(field: "dids", "must list 1 to \(Self.maximumDevices) devices")
        }
        guard dids.allSatisfy({ !$0.isEmpty && $0.utf8.count <= 64 }) else { throw CloudBodyError(field: "dids", "must hold dids") }
        self.init(dids: dids)
    }

    public var json: JSONValue { ["dids": .array(dids.map(JSONValue.string))] }
}

/// What adding or removing devices answers: the dids done and those not, and with
/// `show_detail=1` why each failed.
public struct GroupDevicesResultBody: Sendable, Hashable {
    public struct Failure: Sendable, Hashable {
        public var did: String
        public var errorCode: Int
        public var message: String

        public init(did: String, errorCode: Int, message: String) {
            self.did = did
            self.errorCode = errorCode
            self.message = message
        }
    }

    public var success: [String]
    public var failed: [Failure]

    public init(success: [String], failed: [Failure]) {
        self.success = success
        self.failed = failed
    }

    public init(json: JSONValue) throws(CloudBodyError) {
        let reader = try BodyReader(json)
        let details = try reader.list("detail", maximum: 1_000)
        var reasons: [String: Failure] = [:]
        for detail in details {
            // The failed list is the answer; a reason names one of its entries, whatever it holds.
            let did = try detail.optionalString("did") ?? ""
            reasons[did] = Failure(
                did: did, errorCode: Int(clamping: try detail.optionalInt("error_code") ?? 0), message: try detail.optionalString("error_message") ?? "")
        }
        self.init(
            success: try reader.optionalStrings("success") ?? [],
            failed: try (reader.optionalStrings("failed") ?? []).map { reasons[$0] ?? Failure(did: $0, errorCode: 0, message: "") })
    }

    public func json(detail: Bool) -> JSONValue {
        var object: JSONObject = ["success": .array(success.map(JSONValue.string)), "failed": .array(failed.map { .string($0.did) })]
        if detail {
            object["detail"] = .array(
                failed.map {
                    ["did": .string($0.did), "error_code": .int(Int64($0.errorCode)), "error_message": .string($0.message), "detail_msg": .string($0.message)]
                })
        }
        return .object(object)
    }
}

/// One device's outcome of a group's control (`POST /app/group/{id}/control`): `result` true when
/// the command went into the ledger for it (`command_id`, Tether), false with the code why not.
public struct GroupControlResultBody: Sendable, Hashable {
    public var did: String
    public var result: Bool
    public var commandID: Int64?
    public var errorCode: Int?

    public init(did: String, result: Bool, commandID: Int64? = nil, errorCode: Int? = nil) {
        self.did = did
        self.result = result
        self.commandID = commandID
        self.errorCode = errorCode
    }

    public init(json: JSONValue) throws(CloudBodyError) {
        let reader = try BodyReader(json)
        guard let result = try reader.optionalBool("result") else { throw CloudBodyError(field: "result", "is required") }
        self.init(
            did: try reader.text("did"), result: result, commandID: try reader.optionalInt("command_id"),
            errorCode: try reader.optionalInt("error_code").map { Int(clamping: $0) })
    }

    public var json: JSONValue {
        var object: JSONObject = ["did": .string(did), "result": .bool(result)]
        if let commandID { object["command_id"] = .int(commandID) }
        if let errorCode { object["error_code"] = .int(Int64(errorCode)) }
        return .object(object)
    }
}
