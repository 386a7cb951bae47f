import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import Testing
import TetherCloudProtocol
import TetherCore
@testable import TetherCloud

/// OTA firmware packages: stored in chunks with their digests, downloaded by signed and
/// expiring URLs, whole or by range (a download resumed).
@Suite("OTA firmware packages: storage, signed URLs, ranged downloads", .timeLimit(.minutes(2)))
struct FirmwareTests {
    static func download(_ cloud: CloudHarness, _ path: String, range: String? = nil) async throws -> (HTTPResponse.Status, HTTPFields, [UInt8]) {
        var headers: HTTPFields = [:]
        if let range { headers[.range] = range }
        let response = try await cloud.client.execute(uri: path, method: .get, headers: headers, body: nil)
        return (response.status, response.headers, Array(response.body.readableBytesView))
    }

    @Test("a package is stored with its digests and served whole, by range and by suffix, to signed URLs only", arguments: TestEngine.allCases)
    func downloads(engine: TestEngine) async throws {
        try await CloudHarness.run(engine) { cloud in
            let product = try await GatewayFixtures.lampProduct(cloud)
            let admin = Administration(database: cloud.database)
            let bytes = (0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 8) }
            let package = try await admin.addFirmware(productKey: product.productKey, module: "default", version: "1.0.1", bytes: bytes)
            #expect(package.size == 200_000 && package.version == "1.0.1")
            let abc = try await admin.addFirmware(productKey: product.productKey, module: "wifi", version: "2", bytes: Array("abc".utf8))
            #expect(abc.sha256 == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" && abc.md5 == "900150983cd24fb0d6963f7d28e17f72")
            #expect(try await admin.firmware(productKey: product.productKey).map(\.id) == [package.id, abc.id])
            await #expect(throws: CloudAPIError.self) { _ = try await admin.addFirmware(productKey: product.productKey, module: "default", version: "1.0.1", bytes: [1]) }
            await #expect(throws: CloudAPIError.self) { _ = try await admin.addFirmware(productKey: "nope", module: "default", version: "1", bytes: [1]) }
            await #expect(throws: CloudAPIError.self) { _ = try await admin.addFirmware(productKey: product.productKey, module: "default", version: "a b", bytes: [1]) }
            await #expect(throws: CloudAPIError.self) { _ = try await admin.addFirmware(productKey: product.productKey, module: "default", version: "3", bytes: []) }

            let url = try await admin.firmwareURL(id: package.id, publicURL: "http://cloud.test/", lifetime: 60)
            #expect(url.hasPrefix("http://cloud.test/ota/firmware/\(package.id)?expires="))
            let path = String(url.dropFirst("http://cloud.test".count))
            let (status, headers, whole) = try await Self.download(cloud, path)
            #expect(status == .ok && whole == bytes && headers[.acceptRanges] == "bytes" && headers[.contentLength] == "200000")
            // Resumed across chunk boundaries, open-ended, and the last bytes.
            let (partial, partialHeaders, middle) = try await Self.download(cloud, path, range: "bytes=65530-131080")
            #expect(partial == .partialContent && middle == Array(bytes[65530...131080]) && partialHeaders[.contentRange] == "bytes 65530-131080/200000")
            #expect(try await Self.download(cloud, path, range: "bytes=199990-").2 == Array(bytes[199990...]))
            #expect(try await Self.download(cloud, path, range: "bytes=-10").2 == Array(bytes[199990...]))
            // A range that cannot be served is ignored: the whole package.
            let (ignored, _, all) = try await Self.download(cloud, path, range: "bytes=300000-")
            #expect(ignored == .ok && all.count == bytes.count)

            // Tampered, expired, for another package, or unsigned: 9502.
            let tampered = path.replacingOccurrences(of: "signature=", with: "signature=0")
            let expiredQuery = try await FirmwareDownloads(database: cloud.database).query(id: package.id, expires: Clock.unixNow() - 1)
            let otherQuery = String(try await admin.firmwareURL(id: abc.id, publicURL: "http://x", lifetime: 60).split(separator: "?")[1])
            for refused in [tampered, "/ota/firmware/\(package.id)?\(expiredQuery)", "/ota/firmware/\(package.id)?\(otherQuery)", "/ota/firmware/\(package.id)?expires=9999999999&signature=00"] {
                let answer = try await cloud.call(.get, refused)
                #expect(answer.errorCode == 9502 && answer.status == .forbidden, "\(refused): \(answer.text)")
            }
            // A valid signature for a package that is not there: 404.
            let missing = try await FirmwareDownloads(database: cloud.database).query(id: 999_999, expires: Clock.unixNow() + 60)
            #expect(try await cloud.call(.get, "/ota/firmware/999999?\(missing)").status == .notFound)
            await #expect(throws: CloudAPIError.self) { _ = try await admin.firmwareURL(id: package.id, publicURL: "http://x", lifetime: 8 * 24 * 3600) }
        }
    }

    @Test("Range headers: one range inside the package, or nothing")
    func ranges() {
        typealias Routes = FirmwareRoutes<CloudRequestContext>
        #expect(Routes.range("bytes=0-99", size: 1000) == 0...99)
        #expect(Routes.range("bytes=900-", size: 1000) == 900...999)
        #expect(Routes.range("bytes=990-5000", size: 1000) == 990...999)
        #expect(Routes.range("bytes=-10", size: 1000) == 990...999)
        #expect(Routes.range("bytes=-5000", size: 1000) == 0...999)
        for refused in [
            "bytes=1000-", "bytes=5-4", "bytes=0-1,5-6", "bytes=-0", "bytes=-", "bytes=a-b", "items=0-1", "bytes=0", "bytes= 0-1", "bytes=--1",
            "bytes=99999999999999999999-", "bytes=-99999999999999999999", "",
        ] {
            #expect(Routes.range(refused, size: 1000) == nil, "\(refused)")
        }
    }
}
