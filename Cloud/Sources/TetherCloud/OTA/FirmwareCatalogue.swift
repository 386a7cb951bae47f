import Crypto
import Foundation
import TetherCore

/// Firmware packages: added by an administrator with their digests, listed, and served by range.
public struct FirmwareCatalogue: Sendable {
    let database: any SQLDatabase

    /// The largest package accepted.
    public static let maximumSize = 64 * 1024 * 1024
    /// Bytes per stored chunk: a range read touches only the chunks it needs.
    static let chunkSize = 64 * 1024

    public init(database: any SQLDatabase) { self.database = database }

    /// Stores a package of `productKey`'s `module` (`default` for the whole device).
    public func add(productKey: String, module: String = "default", version: String, bytes: [UInt8]) async throws -> FirmwareRecord {
        guard (1...Self.maximumSize).contains(bytes.count) else {
            throw CloudAPIError.formInvalid(detail: "a firmware package is 1 byte to \(Self.maximumSize / (1024 * 1024)) MiB")
        }
        for (name, value) in [("version", version), ("module", module)] {
            guard (1...64).contains(value.utf8.count), value.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "/") }) else {
                throw CloudAPIError.formInvalid(detail: "a firmware \(name) is 1 to 64 printable characters without spaces or /")
            }
        }
        guard try await ProductStore(database).find(productKey) != nil else { throw CloudAPIError.productKeyInvalid(detail: "no product \(productKey)") }
        let package = FirmwareStore.NewPackage(
            productKey: productKey, module: module, version: version,
            sha256: Secrets.lowercaseHex(SHA256.hash(data: bytes)), md5: Secrets.lowercaseHex(Insecure.MD5.hash(data: bytes)), chunkSize: Self.chunkSize)
        do {
            return try await database.transaction { transaction in
                try await FirmwareStore(transaction).insert(package, bytes: bytes, now: Clock.unixNow())
            }
        } catch {
            guard let storage = error as? StorageError, storage.kind == .uniqueViolation else { throw error }
            throw CloudAPIError.formInvalid(detail: "\(productKey) already has \(module) version \(version)")
        }
    }

    public func packages(productKey: String) async throws -> [FirmwareRecord] {
        try await FirmwareStore(database).list(productKey: productKey)
    }

    public func package(_ id: Int64) async throws -> FirmwareRecord? {
        try await FirmwareStore(database).find(id)
    }

    /// Bytes `range` of a package, chunk by chunk, to `write`.
    func read(_ package: FirmwareRecord, range: ClosedRange<Int64>, _ write: ([UInt8]) async throws -> Void) async throws {
        let first = range.lowerBound / package.chunkSize
        let last = range.upperBound / package.chunkSize
        // A few chunks per query: memory stays bounded whatever the package's size.
        var index = first
        while index <= last {
            let upTo = min(index + 7, last)
            let chunks = try await FirmwareStore(database).chunks(of: package.id, from: index, through: upTo)
            for (offset, chunk) in chunks.enumerated() {
                let start = (index + Int64(offset)) * package.chunkSize
                let from = max(range.lowerBound - start, 0)
                let to = min(range.upperBound - start, Int64(chunk.count) - 1)
                guard from <= to else { continue }
                try await write(Array(chunk[Int(from)...Int(to)]))
            }
            index = upTo + 1
        }
    }
}
