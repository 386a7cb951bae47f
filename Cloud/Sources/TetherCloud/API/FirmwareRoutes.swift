import HTTPTypes
import Hummingbird
import NIOCore
import TetherCloudProtocol
import TetherCore

/// Firmware downloads by signed URL (`GET /ota/firmware/{id}?expires=&signature=`), whole or by
/// one `Range: bytes=…` so that an interrupted download resumes where it stopped. The stored
/// chunks are read a few at a time while the answer is written, so memory stays bounded.
struct FirmwareRoutes<Context: RequestContext> {
    let catalogue: FirmwareCatalogue
    let downloads: FirmwareDownloads

    func register(on router: DocumentedRouter<Context>) {
        router.on(
            .init(
                method: .get, path: "/ota/firmware/{id}",
                summary: "Tether: a firmware package by its signed, expiring URL; Range: bytes=FIRST-[LAST] answers 206 (resuming a download)",
                tag: "ota", security: .none,
                parameters: [.query("expires", JSONSchema.integer(minimum: 0), required: true), .query("signature", JSONSchema.string, required: true)],
                success: .binary(200, "the package's bytes")
            )
        ) { request, context in
            let text = try context.pathParameter("id")
            let expires = try request.integerQuery("expires", default: -1, range: -1...Int64.max)
            guard let id = Int64(text),
                try await downloads.verify(id: id, expires: expires, signature: request.query("signature") ?? "", now: Clock.unixNow())
            else { throw CloudAPIError.downloadURLInvalid() }
            guard let package = try await catalogue.package(id) else { throw CloudAPIError.notFound(detail: "no firmware \(id)") }
            var headers: HTTPFields = [.contentType: "application/octet-stream", .acceptRanges: "bytes", .eTag: "\"\(package.sha256)\""]
            var status = HTTPResponse.Status.ok
            var range: ClosedRange<Int64> = 0...(package.size - 1)
            // A range that cannot be served is ignored (RFC 9110 §14.2 allows it): the whole package.
            if let header = request.headers[.range], let requested = Self.range(header, size: package.size) {
                range = requested
                status = .partialContent
                headers[.contentRange] = "bytes \(range.lowerBound)-\(range.upperBound)/\(package.size)"
            }
            let sent = range
            let body = ResponseBody(contentLength: Int(sent.count)) { writer in
                try await catalogue.read(package, range: sent) { bytes in try await writer.write(ByteBuffer(bytes: bytes)) }
                try await writer.finish(nil)
            }
            return Response(status: status, headers: headers, body: body)
        }
    }

    /// One range, `bytes=FIRST-LAST`, `bytes=FIRST-` or `bytes=-SUFFIX`, inside the package; nil otherwise.
    static func range(_ header: String, size: Int64) -> ClosedRange<Int64>? {
        guard header.hasPrefix("bytes="), !header.contains(",") else { return nil }
        let spec = header.dropFirst("bytes=".count)
        guard let dash = spec.firstIndex(of: "-") else { return nil }
        let first = spec[..<dash], last = spec[spec.index(after: dash)...]
        if first.isEmpty {
            guard let suffix = Int64(last), suffix > 0 else { return nil }
            return max(size - suffix, 0)...(size - 1)
        }
        guard let start = Int64(first), start < size else { return nil }
        guard !last.isEmpty else { return start...(size - 1) }
        guard let end = Int64(last), end >= start else { return nil }
        return start...min(end, size - 1)
    }
}
