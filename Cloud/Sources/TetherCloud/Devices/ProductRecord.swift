public import TetherAlink
public import TetherCore

/// A product: its key and secret, and its data-point model.
public struct ProductRecord: Sendable, Equatable {
    public var productKey: String
    public var name: String
    public var secret: String
    public var model: ThingModel
    public var sharingEnabled: Bool
    /// GAgent's unsigned registration form is accepted for this product (new devices only).
    public var unsignedRegistration: Bool
    /// Alink's whitelist-free registration (`authType=regnwl`): a unit with the product secret
    /// creates its own device on first connection and reconnects with a token.
    public var whitelistFreeRegistration: Bool
    /// What its devices may publish and subscribe to under `/{pk}/{dn}/user/`.
    public var userTopics: AlinkTopicClasses
    public var createdAt: Int64

    init(row: SQLRow) throws(StorageError) {
        productKey = try row.text("product_key")
        name = try row.text("name")
        secret = try row.text("secret")
        do {
            let format = ModelFormat(rawValue: try row.text("model_format")) ?? .tsl
            model = try format.load(Array(try row.text("model_json").utf8))
        } catch {
            throw StorageError(.unexpectedValue, "the stored model of product \(productKey) does not load: \(error)")
        }
        sharingEnabled = try row.bool("sharing_enabled")
        unsignedRegistration = try row.bool("unsigned_registration")
        whitelistFreeRegistration = try row.bool("whitelist_free_registration")
        do {
            userTopics = try AlinkTopicClasses(encoded: try row.text("user_topics"))
        } catch {
            throw StorageError(.unexpectedValue, "the stored topic classes of product \(productKey) do not read: \(error)")
        }
        createdAt = try row.int("created_at")
    }
}
