import TetherAlink
import TetherCore

/// The `products` table: each product's key, secret, model and the rules it was created with.
struct ProductStore: Sendable {
    let executor: any SQLExecutor

    init(_ executor: any SQLExecutor) { self.executor = executor }

    /// What a new product is stored with; the model already serialized in its format.
    struct NewProduct: Sendable {
        var productKey: String
        var name: String
        var secret: String
        var format: ModelFormat
        var modelJSON: String
        var sharingEnabled: Bool
        var unsignedRegistration: Bool
        var whitelistFreeRegistration = false
        var userTopics = AlinkTopicClasses.standard
    }

    /// False when there is no such product.
    func setUserTopics(productKey: String, _ classes: AlinkTopicClasses) async throws(StorageError) -> Bool {
        try await executor.first(
            "UPDATE products SET user_topics = $2 WHERE product_key = $1 RETURNING product_key", .text(productKey), .text(classes.encoded)) != nil
    }

    func insert(_ product: NewProduct, now: Int64) async throws(StorageError) {
        try await executor.query(
            """
            INSERT INTO products (
                product_key, name, secret, model_format, model_json, sharing_enabled, unsigned_registration, whitelist_free_registration, created_at,
                user_topics)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
            """,
            .text(product.productKey), .text(product.name), .text(product.secret), .text(product.format.rawValue),
            .text(product.modelJSON), .bool(product.sharingEnabled), .bool(product.unsignedRegistration), .bool(product.whitelistFreeRegistration),
            .int(now), .text(product.userTopics.encoded)
        )
    }

    func find(_ productKey: String) async throws(StorageError) -> ProductRecord? {
        try await executor.first("SELECT * FROM products WHERE product_key = $1", .text(productKey)).map { row throws(StorageError) in
            try ProductRecord(row: row)
        }
    }

    /// The product's secret alone, without loading its model (device registration asks on every attempt).
    func secret(_ productKey: String) async throws(StorageError) -> String? {
        try await executor.first("SELECT secret FROM products WHERE product_key = $1", .text(productKey))?.text("secret")
    }

    /// Every product, by name.
    func all() async throws(StorageError) -> [ProductRecord] {
        try await executor.query("SELECT * FROM products ORDER BY name, product_key").map { row throws(StorageError) in
            try ProductRecord(row: row)
        }
    }
}
