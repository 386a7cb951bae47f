public import Logging
public import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import Crypto
import TetherCore

/// A device's download of a firmware package over HTTP(S): streamed (nothing but the current
/// piece in memory), resumable from any byte with a `Range` request, and abandoned when the
/// server stays silent for ``timeout``.
public struct FirmwareDownloader: Sendable {
    /// How long the server may stay silent (connecting, or between two pieces of the body).
    public var timeout: Duration
    let group: any EventLoopGroup
    let logger: Logger

    /// - Parameter group: the event loops to connect on; nil for NIO's shared singleton.
    public init(timeout: Duration = .seconds(30), group: (any EventLoopGroup)? = nil, logger: Logger = Logger(label: "tether.ota")) {
        self.timeout = timeout
        self.group = group ?? MultiThreadedEventLoopGroup.singleton
        self.logger = logger
    }

    /// GETs `url` from byte `offset` on and hands each piece of the body to `receive`, in order.
    /// Returns the package's whole size (from `Content-Range`, or `Content-Length` plus
    /// `offset`). A server that ignores the range sends everything: the first `offset` bytes
    /// are skipped. `downloadFailed` when the server refuses (any status but 200 or 206) or the
    /// connection ends before the last byte; errors `receive` throws end the download as they are.
    @discardableResult
    public func fetch(_ url: String, from offset: Int64 = 0, _ receive: (ByteBuffer) async throws -> Void) async throws -> Int64 {
        let target = try HTTPURL(parsing: url)
        let timeout = self.timeout
        let channel: NIOAsyncChannel<HTTPClientResponsePart, HTTPClientRequestPart>
        do {
            channel = try await ClientBootstrap(group: group)
                .connectTimeout(TimeAmount(timeout))
                .connect(host: target.host, port: target.port) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        if target.isSecure {
                            let context = try NIOSSLContext(configuration: .makeClientConfiguration())
                            try channel.pipeline.syncOperations.addHandler(
                                NIOSSLClientHandler(context: context, serverHostname: target.hostIsAddress ? nil : target.host))
                        }
                        try channel.pipeline.syncOperations.addHandler(IdleStateHandler(readTimeout: TimeAmount(timeout)))
                        try channel.pipeline.syncOperations.addHandler(CloseWhenIdle())
                        try channel.pipeline.syncOperations.addHTTPClientHandlers()
                        return try NIOAsyncChannel<HTTPClientResponsePart, HTTPClientRequestPart>(wrappingChannelSynchronously: channel)
                    }
                }
        } catch {
            throw TetherError(.downloadFailed, "cannot reach \(target.hostHeader): \(error)")
        }
        return try await channel.executeThenClose { inbound, outbound in
            var head = HTTPRequestHead(version: .http1_1, method: .GET, uri: target.target.isEmpty ? "/" : target.target)
            head.headers.add(name: "Host", value: target.hostHeader)
            head.headers.add(name: "Connection", value: "close")
            head.headers.add(name: "User-Agent", value: "Tether-Device/" + TetherVersion.current)
            if offset > 0 { head.headers.add(name: "Range", value: "bytes=\(offset)-") }
            try await outbound.write(.head(head))
            try await outbound.write(.end(nil))
            var total: Int64?
            var skip: Int64 = 0
            var received: Int64 = 0
            var expected: Int64?
            for try await part in inbound {
                switch part {
                case .head(let response):
                    let length = response.headers.first(name: "Content-Length").flatMap { Int64($0) }
                    switch response.status.code {
                    case 206:
                        guard let range = Self.contentRange(response.headers.first(name: "Content-Range")), range.first == offset else {
                            throw TetherError(.downloadFailed, "the server answered bytes the download did not ask for")
                        }
                        total = range.total
                        expected = range.total - offset
                    case 200:
                        skip = offset
                        total = length
                        expected = length
                    default:
                        throw TetherError(.downloadFailed, "the server refused the download: \(response.status.code) \(response.status.reasonPhrase)")
                    }
                case .body(var piece):
                    if skip > 0 {
                        let dropped = min(Int64(piece.readableBytes), skip)
                        piece.moveReaderIndex(forwardBy: Int(dropped))
                        skip -= dropped
                        received += dropped
                        guard piece.readableBytes > 0 else { continue }
                    }
                    received += Int64(piece.readableBytes)
                    try await receive(piece)
                case .end:
                    if let expected, received < expected { break }
                    return total ?? received
                }
            }
            throw TetherError(.downloadFailed, "the connection ended after \(received) of \(expected.map(String.init) ?? "?") bytes")
        }
    }

    /// Downloads the package `notice` offers, handing each piece to `receive` and the bytes
    /// reached so far to `progress`; resumes from the byte reached after a `downloadFailed`
    /// (at most `resumptions` times), then checks the size and the digest the notice names.
    /// `digestMismatch` when either differs: `receive` got bytes that must not be installed.
    public func download(
        _ notice: FirmwareUpgradeNotice, resumptions: Int = 3, receive: (ByteBuffer) async throws -> Void, progress: (Int64) async -> Void = { _ in }
    ) async throws {
        var digest = FirmwareDigest(notice.signMethod)
        var reached: Int64 = 0
        var attempt = 0
        while true {
            do {
                try await fetch(notice.url, from: reached) { piece in
                    try await receive(piece)
                    digest.update(piece)
                    reached += Int64(piece.readableBytes)
                    await progress(reached)
                }
                break
            } catch let error as TetherError where error.code == .downloadFailed && attempt < resumptions && !Task.isCancelled {
                attempt += 1
                logger.info("resuming a firmware download", metadata: ["from": "\(reached)", "attempt": "\(attempt)", "error": "\(error.message)"])
            }
        }
        guard reached == notice.size else {
            throw TetherError(.digestMismatch, "the package has \(reached) bytes, the notice said \(notice.size)")
        }
        let sign = digest.finalize()
        guard sign == notice.sign else {
            throw TetherError(.digestMismatch, "the package's \(notice.signMethod.rawValue) is \(sign), the notice said \(notice.sign)")
        }
    }

    /// `bytes FIRST-LAST/TOTAL`.
    static func contentRange(_ value: String?) -> (first: Int64, total: Int64)? {
        guard let value, value.hasPrefix("bytes ") else { return nil }
        let parts = value.dropFirst("bytes ".count).split(separator: "/")
        guard parts.count == 2, let total = Int64(parts[1]), let dash = parts[0].firstIndex(of: "-"), let first = Int64(parts[0][..<dash]) else { return nil }
        return (first, total)
    }
}

/// A package's digest, computed piece by piece as it downloads (across resumptions).
public struct FirmwareDigest: Sendable {
    private enum State {
        case sha256(SHA256)
        case md5(Insecure.MD5)
    }

    private var state: State

    public init(_ method: FirmwareSignMethod) {
        state = method == .sha256 ? .sha256(SHA256()) : .md5(Insecure.MD5())
    }

    public mutating func update(_ piece: ByteBuffer) {
        piece.withUnsafeReadableBytes { bytes in
            switch state {
            case .sha256(var hash):
                hash.update(bufferPointer: bytes)
                state = .sha256(hash)
            case .md5(var hash):
                hash.update(bufferPointer: bytes)
                state = .md5(hash)
            }
        }
    }

    /// Lowercase hex, as upgrade notices carry it.
    public func finalize() -> String {
        switch state {
        case .sha256(let hash): return Array(hash.finalize()).tetherHex
        case .md5(let hash): return Array(hash.finalize()).tetherHex
        }
    }
}

/// Closes a connection the server left silent too long: the download's loop then ends.
private final class CloseWhenIdle: ChannelInboundHandler, Sendable {
    typealias InboundIn = NIOAny

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is IdleStateHandler.IdleStateEvent {
            context.close(promise: nil)
        } else {
            context.fireUserInboundEventTriggered(event)
        }
    }
}
