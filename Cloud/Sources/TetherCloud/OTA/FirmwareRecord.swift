/// A firmware package of a product's module, as stored.
public struct FirmwareRecord: Sendable, Equatable {
    public var id: Int64
    public var productKey: String
    /// The device's module it is for (`default` for the whole device).
    public var module: String
    public var version: String
    /// Bytes.
    public var size: Int64
    /// Lowercase hex digests of the whole package.
    public var sha256: String
    public var md5: String
    public var createdAt: Int64
    /// Bytes per stored chunk (the last one may be shorter).
    var chunkSize: Int64

    init(row: SQLRow) throws(StorageError) {
        id = try row.int("id")
        productKey = try row.text("product_key")
        module = try row.text("module")
        version = try row.text("version")
        size = try row.int("size")
        chunkSize = try row.int("chunk_size")
        sha256 = try row.text("sha256")
        md5 = try row.text("md5")
        createdAt = try row.int("created_at")
    }

    static let columns = "id, product_key, module, version, size, chunk_size, sha256, md5, created_at"
}
