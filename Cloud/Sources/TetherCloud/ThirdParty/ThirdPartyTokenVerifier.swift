import AsyncHTTPClient
import Foundation
import JWTKit
public import Logging
import NIOCore
import NIOHTTP1
import Synchronization

/// Where an app's third-party ID tokens come from: the issuer's key set (JWKS) and, when set,
/// the issuer and audience the tokens must name. Configured per app with `tether-cloud admin app`.
public struct ThirdPartyIssuer: Sendable, Equatable {
    public var jwksURL: String
    public var issuer: String?
    public var audience: String?

    public init(jwksURL: String, issuer: String? = nil, audience: String? = nil) {
        self.jwksURL = jwksURL
        self.issuer = issuer
        self.audience = audience
    }
}

/// Verifies ID tokens (JWTs) against their issuer's published keys. Key sets are cached for
/// `cacheLifetime` and fetched again at once when a token names a key the cache lacks (the
/// issuer rotated its keys), at most once per `minimumRefetchInterval`.
public final class ThirdPartyTokenVerifier: Sendable {
    private struct CachedKeys {
        var keys: JWTKeyCollection
        var fetchedAt: ContinuousClock.Instant
    }

    private let cache = Mutex<[String: CachedKeys]>([:])
    private let logger: Logger
    private let cacheLifetime: Duration
    private let minimumRefetchInterval: Duration
    private let fetchTimeout: TimeAmount = .seconds(5)
    /// Key sets larger than this are refused.
    static let maximumKeySetSize = 256 * 1024

    public init(logger: Logger, cacheLifetime: Duration = .seconds(600), minimumRefetchInterval: Duration = .seconds(10)) {
        self.logger = logger
        self.cacheLifetime = cacheLifetime
        self.minimumRefetchInterval = minimumRefetchInterval
    }

    /// The token's subject, once its signature, expiry, issuer and audience check out.
    func verify(_ token: String, issuer: ThirdPartyIssuer) async throws -> String {
        var keys = try await keySet(for: issuer.jwksURL, forceRefresh: false)
        let payload: IDTokenPayload
        do {
            payload = try await keys.verify(token, as: IDTokenPayload.self)
        } catch let error as JWTError where error.errorType == .unknownKID {
            keys = try await keySet(for: issuer.jwksURL, forceRefresh: true)
            payload = try await Self.mapped { try await keys.verify(token, as: IDTokenPayload.self) }
        } catch {
            throw Self.apiError(error)
        }
        if let expected = issuer.issuer, payload.iss.value != expected {
            throw CloudAPIError.tokenInvalid(detail: "the token's issuer is not the one configured for this app")
        }
        if let audience = issuer.audience {
            guard let claim = payload.aud else {
                throw CloudAPIError.tokenInvalid(detail: "the token names no audience")
            }
            do {
                try claim.verifyIntendedAudience(includes: audience)
            } catch {
                throw CloudAPIError.tokenInvalid(detail: "the token is meant for another audience")
            }
        }
        return payload.sub.value
    }

    private static func mapped<T>(_ body: () async throws -> T) async throws -> T {
        do { return try await body() } catch { throw apiError(error) }
    }

    private static func apiError(_ error: any Error) -> any Error {
        if error is CloudAPIError { return error }
        if let error = error as? JWTError, error.errorType == .claimVerificationFailure, error.failedClaim is ExpirationClaim {
            return CloudAPIError.tokenExpired(detail: "the third party's token has expired")
        }
        return CloudAPIError.tokenInvalid(detail: "the third party's token does not verify")
    }

    private func keySet(for url: String, forceRefresh: Bool) async throws -> JWTKeyCollection {
        let now = ContinuousClock.now
        if let cached = cache.withLock({ $0[url] }) {
            let age = now - cached.fetchedAt
            if !forceRefresh && age < cacheLifetime { return cached.keys }
            if forceRefresh && age < minimumRefetchInterval { return cached.keys }
        }
        let keys = try await fetch(url)
        cache.withLock { $0[url] = CachedKeys(keys: keys, fetchedAt: now) }
        return keys
    }

    private func fetch(_ url: String) async throws -> JWTKeyCollection {
        do {
            var request = HTTPClientRequest(url: url)
            request.headers.add(name: "Accept", value: "application/json")
            let response = try await HTTPClient.shared.execute(request, timeout: fetchTimeout)
            guard response.status == .ok else {
                throw CloudAPIError.serverError(detail: "the key set at \(url) answered \(response.status.code)")
            }
            let body = try await response.body.collect(upTo: Self.maximumKeySetSize)
            return try await JWTKeyCollection().add(jwksJSON: String(buffer: body))
        } catch let error as CloudAPIError {
            logger.error("fetching a JWKS failed", metadata: ["url": "\(url)", "error": "\(error)"])
            throw error
        } catch {
            logger.error("fetching a JWKS failed", metadata: ["url": "\(url)", "error": "\(error)"])
            throw CloudAPIError.serverError(detail: "the third party's key set could not be read")
        }
    }
}
