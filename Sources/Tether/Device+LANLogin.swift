import Logging
import Synchronization
import TetherCloudProtocol
import TetherCore
import TetherGizwitsLAN

/// A LAN grant the SDK holds for a device, with when it arrived and when it lapses, both by this
/// machine's clock.
struct HeldLANGrant: Sendable {
    var text: String
    var expiresAt: Int64
    var receivedAt: Int64

    /// Renewed once four fifths of its life have passed, so that a connection never outlives it.
    var renewAt: Int64 { receivedAt + max(1, (expiresAt - receivedAt) * 4 / 5) }
}

extension Device {
    /// Connects and logs in on the LAN: with the passcode (from the cloud's binding list, or
    /// asked for in the binding window), or with a grant from the cloud when the device takes
    /// grants (README, "LAN grants"). A device that asks for a grant gets one on a second
    /// connection; one that does not know grants (it refuses the text like a wrong passcode)
    /// gets the passcode on a second connection. Either is remembered for the next login.
    func connectAndLogin() async throws(TetherError) -> GizwitsLANClient {
        var grant: HeldLANGrant?
        if state.withLock({ $0.requiresLANGrant || ($0.passcode == nil && link != nil) }) {
            grant = await lanGrant(renewing: false)
        }
        for attempt in 0..<2 {
            let last = attempt == 1
            let connection = try await connectToLAN()
            do throws(TetherError) {
                if let held = grant {
                    switch try await login(connection, with: held.text) {
                    case .success:
                        state.withLock { $0.requiresLANGrant = true }
                        return connection
                    case .refused:
                        // A device without the extension, or one the cloud has not activated yet.
                        state.withLock { $0.requiresLANGrant = false }
                        grant = nil
                    case .grantExpired where !last:
                        grant = await lanGrant(renewing: true)
                    case .grantExpired:
                        throw TetherError(.lanGrantRefused, "device \(id) finds the grant expired (is its clock right?)")
                    default:
                        state.withLock { $0.lanGrant = nil }
                        throw TetherError(
                            .lanGrantRefused, "device \(id) refused the grant: it does not trust the key that signed it, or it was made for another device")
                    }
                    await connection.close()
                    continue
                }
                let passcode = try await passcode(on: connection)
                switch try await login(connection, with: passcode) {
                case .success:
                    state.withLock { $0.passcode = passcode }
                    return connection
                case .grantRequired:
                    state.withLock { $0.requiresLANGrant = true }
                    guard !last, let renewed = await lanGrant(renewing: false) else {
                        throw TetherError(
                            .lanGrantRequired,
                            "device \(id) logs in only with a grant from the cloud outside its binding window, and none could be obtained (not bound, or the cloud is unreachable)"
                        )
                    }
                    grant = renewed
                    await connection.close()
                default:
                    throw TetherError(.loginFailed, "device \(id) refused the passcode")
                }
            } catch {
                await connection.close()
                if error.code == .connectionClosed {
                    throw TetherError(.loginFailed, "device \(id) closed the connection before login completed (it may already serve its maximum of clients)")
                }
                throw error
            }
        }
        throw TetherError(.loginFailed, "device \(id) refused both the grant and the passcode")
    }

    private func connectToLAN() async throws(TetherError) -> GizwitsLANClient {
        guard let endpoint = lanEndpoint else {
            throw TetherError(.deviceOffline, "device \(id) has not been seen on the LAN")
        }
        return try await GizwitsLANClient.connect(host: endpoint.host, port: endpoint.port, configuration: lan.clientConfiguration)
    }

    private func passcode(on connection: GizwitsLANClient) async throws(TetherError) -> String {
        if let known = state.withLock({ $0.passcode }) { return known }
        guard case .passcodeResponse(let given?) = try await connection.request(.passcodeRequest) else {
            throw TetherError(.notInBindingWindow, "device \(id) is not in its binding window and no passcode is known")
        }
        return given
    }

    func login(_ connection: GizwitsLANClient, with text: String) async throws(TetherError) -> GizwitsLoginResult {
        guard case .loginResult(let result) = try await connection.request(.login(passcode: text)) else {
            throw TetherError(.unexpectedResponse, "device \(id) answered the login with something else")
        }
        return result
    }

    /// A grant from the cloud for this device: the one held while it is young enough (unless
    /// `renewing`), else a new one. Nil without a cloud session or did, or when the cloud
    /// refuses (the user is not bound) or cannot be reached and the held one has expired.
    func lanGrant(renewing: Bool) async -> HeldLANGrant? {
        let now = TetherAccount.unixNow()
        let held = state.withLock { $0.lanGrant }
        if !renewing, let held, now < held.renewAt { return held }
        guard link != nil, !did.isEmpty else { return nil }
        do throws(TetherError) {
            let body = try await withCloudCall { api, session, did throws(TetherError) in try await api.lanGrant(session, did: did) }
            // Timed by this machine's clock alone: the grant's own life (its exp − iat) from when
            // it arrived, so that a phone whose clock is off neither renews in a loop nor too late.
            let received = TetherAccount.unixNow()
            let lifetime = LANGrant.parse(body.grant).map { $0.grant.expiresAt - $0.grant.issuedAt } ?? (body.expiresAt - received)
            let fresh = HeldLANGrant(text: body.grant, expiresAt: received + max(1, lifetime), receivedAt: received)
            state.withLock { $0.lanGrant = fresh }
            return fresh
        } catch {
            logger.debug("no LAN grant from the cloud", metadata: ["tether.device": "\(id)", "tether.error": "\(error)"])
            if error.code == .cloudRefused { state.withLock { $0.lanGrant = nil } }
            guard let held, now < held.expiresAt else { return nil }
            return held
        }
    }

    /// While a grant-logged connection lasts: a new grant before the old one lapses, presented
    /// on the same connection. When no new one comes (the user was revoked), the device ends the
    /// connection at the old one's expiry.
    func renewLANGrant(on connection: GizwitsLANClient) async {
        while !Task.isCancelled {
            guard state.withLock({ $0.requiresLANGrant }), let held = state.withLock({ $0.lanGrant }) else { return }
            let wait = max(1, held.renewAt - TetherAccount.unixNow())
            do { try await Task.sleep(for: .seconds(wait)) } catch { return }
            guard let renewed = await lanGrant(renewing: true), renewed.text != held.text else {
                // Tried again later; meanwhile the held grant keeps the connection.
                do { try await Task.sleep(for: .seconds(max(1, (held.expiresAt - held.receivedAt) / 10))) } catch { return }
                continue
            }
            do throws(TetherError) {
                guard try await login(connection, with: renewed.text) == .success else {
                    await connection.close()
                    return
                }
            } catch {
                return
            }
        }
    }
}
