import Foundation
import HTTPTypes
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Hummingbird
public import NIOCore

/// Who a request counts as for rate limits and lockouts: its address, or behind a trusted
/// reverse proxy the address the proxy names in `X-Forwarded-For`. An IPv6 source is its /64,
/// because one host is routinely given a whole /64 and could otherwise change address freely.
public struct ClientSource: Sendable, Hashable, CustomStringConvertible {
    /// The key counters use: `192.0.2.7` or `2001:db8:1:2::/64`.
    public let key: String

    public var description: String { key }

    init(key: String) { self.key = key }

    /// - Parameters:
    ///   - remote: the connection's peer.
    ///   - forwardedFor: the request's `X-Forwarded-For`, read only when `remote` is one of
    ///     `trustedProxies` (the rightmost address not itself a trusted proxy).
    public init(remote: SocketAddress?, forwardedFor: String?, trustedProxies: Set<String>) {
        let peer = remote.flatMap(Self.canonicalIP) ?? "unknown"
        let trustedProxies = Self.canonical(trustedProxies)
        guard trustedProxies.contains(peer), let forwardedFor else {
            self.init(key: Self.normalize(remote))
            return
        }
        let hops = forwardedFor.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        let client = hops.last { !trustedProxies.contains(Self.canonicalIP($0) ?? $0) } ?? peer
        if let address = try? SocketAddress(ipAddress: client, port: 0) {
            self.init(key: Self.normalize(address))
        } else {
            // A proxy that forwards something that is not an address: count by the proxy.
            self.init(key: peer)
        }
    }

    /// An address as one text whatever way it was written: IPv6 in its shortest lower-case form,
    /// IPv4-mapped IPv6 as IPv4. Nil for what is not an IP address.
    static func canonicalIP(_ text: String) -> String? {
        (try? SocketAddress(ipAddress: text, port: 0)).flatMap(canonicalIP)
    }

    static func canonicalIP(_ address: SocketAddress) -> String? {
        guard let ip = address.ipAddress else { return nil }
        guard case .v6(let v6) = address else { return ip }
        let bytes = addressBytes(v6)
        if bytes[0..<10].allSatisfy({ $0 == 0 }), bytes[10] == 0xff, bytes[11] == 0xff {
            return bytes[12..<16].map(String.init).joined(separator: ".")
        }
        return ip.lowercased()
    }

    /// The 16 bytes of an IPv6 address. Read at `sin6_addr`'s offset (8 on Linux and Darwin)
    /// rather than through the field: in a build that also loads NIO's C module (the
    /// benchmarks), the field belongs to that module and `MemberImportVisibility` refuses it.
    private static func addressBytes(_ v6: SocketAddress.IPv6Address) -> [UInt8] {
        withUnsafeBytes(of: v6.address) { Array($0[8..<24]) }
    }

    /// Addresses people configured, each in its canonical form (unparseable ones kept as given).
    static func canonical(_ addresses: Set<String>) -> Set<String> {
        Set(addresses.map { canonicalIP($0) ?? $0 })
    }

    static func normalize(_ address: SocketAddress?) -> String {
        guard let address, let ip = address.ipAddress else { return "unknown" }
        guard case .v6(let v6) = address else { return ip }
        // IPv4 mapped into IPv6 (::ffff:a.b.c.d) counts as the IPv4 address.
        let bytes = addressBytes(v6)
        if bytes[0..<10].allSatisfy({ $0 == 0 }), bytes[10] == 0xff, bytes[11] == 0xff {
            return bytes[12..<16].map(String.init).joined(separator: ".")
        }
        let groups = stride(from: 0, to: 8, by: 2).map { String(UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]), radix: 16) }
        return groups.joined(separator: ":") + "::/64"
    }
}

/// Reads a request's ``ClientSource`` the same way in every route.
struct ClientSourceResolver: Sendable {
    var trustedProxies: Set<String> = []

    func source(of request: Request, context: some RemoteAddressRequestContext) -> ClientSource {
        ClientSource(
            remote: context.remoteAddress, forwardedFor: request.headers[.xForwardedFor], trustedProxies: trustedProxies
        )
    }
}

extension HTTPField.Name {
    static let xForwardedFor = Self("X-Forwarded-For")!
}
