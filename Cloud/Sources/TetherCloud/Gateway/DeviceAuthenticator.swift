import Logging
import Synchronization
import TetherAlink
import TetherCore
import TetherMQTT

/// Decides who may connect to the gateway, by the Alink signing schemes
/// (`shared/reference/alink-mqtt.md` §2): a device signs its CONNECT with its own secret, or
/// registers itself with its product's secret.
struct DeviceAuthenticator: Sendable {
    let database: any SQLDatabase
    /// Where signed CONNECTs' credentials are read, many devices to a query.
    let lookups: DeviceCredentialLookups
    let configuration: GatewayConfiguration
    let logger: Logger
    var now: @Sendable () -> Int64 = { Clock.unixNow() }

    func authenticate(_ request: MQTTConnectRequest) async -> MQTTAuthentication {
        let refusal: (MQTTReasonCode, String)
        do {
            return .accepted(try await principal(for: request))
        } catch let error as Refusal {
            refusal = (error.code, error.reason)
        } catch {
            logger.error("device authentication failed", metadata: ["error": "\(error)"])
            return .refused(.serverUnavailable)
        }
        logger.info(
            "device connection refused",
            metadata: [
                "mqtt.username": "\(request.username ?? "")", "reason": "\(refusal.1)", "remote": "\(request.remoteAddress)",
            ])
        return .refused(refusal.0)
    }

    struct Refusal: Error {
        var code: MQTTReasonCode
        var reason: String
        init(_ code: MQTTReasonCode, _ reason: String) {
            self.code = code
            self.reason = reason
        }
    }

    private func principal(for request: MQTTConnectRequest) async throws -> MQTTPrincipal {
        guard let username = request.username, let device = try? AlinkDeviceIdentity(username: username) else {
            throw Refusal(.badUserNameOrPassword, "the user name is not DEVICENAME&PRODUCTKEY")
        }
        guard let clientID = AlinkClientID(parsing: request.clientID) else {
            throw Refusal(.clientIdentifierNotValid, "the client id's |…| extension is malformed")
        }
        let password = request.password ?? []
        if let authType = clientID.authType, authType != "connwl" {
            return try await registration(device, clientID: clientID, authType: authType, password: password, isSecure: request.isSecure)
        }
        guard configuration.keepAliveRange.contains(request.keepAlive) else {
            throw Refusal(
                .unspecifiedError,
                "keep-alive \(request.keepAlive) s is outside \(configuration.keepAliveRange.lowerBound)…\(configuration.keepAliveRange.upperBound) s")
        }
        if clientID.secureMode == 2, !request.isSecure {
            throw Refusal(.notAuthorized, "securemode=2 (TLS) on a plain connection")
        }
        if clientID.secureMode == -2 {
            return try await tokenConnection(
                device, password: password, serverSideSubscriptions: clientID.wantsServerSideSubscriptions, isSecure: request.isSecure)
        }
        try checkTimestamp(clientID.timestamp)
        guard let stored = try await lookups.credentials(productKey: device.productKey, deviceName: device.deviceName) else {
            throw Refusal(.badUserNameOrPassword, "no device \(device)")
        }
        let method = clientID.signMethod ?? (clientID["signmethod"] == nil ? .hmacmd5 : nil)
        guard let method else { throw Refusal(.badUserNameOrPassword, "unknown signmethod \(clientID["signmethod"] ?? "")") }
        let content = AlinkCredentials.signContent(device: device, clientIDPrefix: clientID.prefix, timestamp: clientID.timestamp)
        guard method.verify(password, content: content, key: stored.deviceSecret) else {
            throw Refusal(.badUserNameOrPassword, "the signature does not match")
        }
        guard !stored.isDisabled else { throw Refusal(.notAuthorized, "device \(device) is disabled") }
        return Self.devicePrincipal(device, did: stored.did, serverSideSubscriptions: clientID.wantsServerSideSubscriptions, userTopics: stored.userTopics)
    }

    /// One copy of each product's classes for all its connections (a principal lives as long
    /// as its connection, and most products keep the defaults).
    private static let internedTopics = Mutex<Set<String>>([])

    private static func interned(_ text: String) -> String {
        internedTopics.withLock { table in
            if let existing = table.firstIndex(of: text) { return table[existing] }
            if table.count < 10_000 { table.insert(text) }
            return text
        }
    }

    private static func devicePrincipal(_ device: AlinkDeviceIdentity, did: String, serverSideSubscriptions: Bool, userTopics: String) -> MQTTPrincipal {
        DevicePrincipal(did: did, device: device, serverSideSubscriptions: serverSideSubscriptions, userTopics: interned(userTopics)).principal
    }

    /// A whitelist-free device's reconnection (`authType=connwl,securemode=-2`): the password is
    /// the token it got on `/ext/regnwl`. The token is a secret sent as it is, so TLS is needed
    /// as for registration.
    private func tokenConnection(
        _ device: AlinkDeviceIdentity, password: [UInt8], serverSideSubscriptions: Bool, isSecure: Bool
    ) async throws -> MQTTPrincipal {
        guard isSecure || configuration.allowRegistrationWithoutTLS else {
            throw Refusal(.notAuthorized, "a token connection (securemode=-2) sends the device token and needs TLS")
        }
        guard let stored = try await DeviceStore(database).credentials(productKey: device.productKey, deviceName: device.deviceName),
            !stored.tokenHash.isEmpty, !password.isEmpty, password.count <= 256,
            Secrets.constantTimeEquals(stored.tokenHash, Secrets.sha256(String(decoding: password, as: UTF8.self)))
        else {
            throw Refusal(.badUserNameOrPassword, "the device token does not match")
        }
        guard !stored.isDisabled else { throw Refusal(.notAuthorized, "device \(device) is disabled") }
        return Self.devicePrincipal(device, did: stored.did, serverSideSubscriptions: serverSideSubscriptions, userTopics: stored.userTopics)
    }

    /// One product, one secret (§2.3): the product secret signs the request; a device created
    /// beforehand gets its own secret back on `/ext/register`; with `regnwl`, on a product that
    /// allows it, a device is created if there is none and gets a token on `/ext/regnwl`.
    private func registration(
        _ device: AlinkDeviceIdentity, clientID: AlinkClientID, authType: String, password: [UInt8], isSecure: Bool
    ) async throws -> MQTTPrincipal {
        guard let type = AlinkRegistrationType(rawValue: authType) else {
            throw Refusal(.notAuthorized, "authType=\(authType) is not supported (register and regnwl are)")
        }
        guard isSecure || configuration.allowRegistrationWithoutTLS else {
            throw Refusal(.notAuthorized, "registration sends the device secret and needs TLS")
        }
        guard let random = clientID["random"], !random.isEmpty, clientID.signMethod == .hmacsha256 else {
            throw Refusal(.badUserNameOrPassword, "registration needs random=… and signmethod=hmacsha256")
        }
        guard let productSecret = try await ProductStore(database).secret(device.productKey) else {
            throw Refusal(.badUserNameOrPassword, "no product \(device.productKey)")
        }
        let content = AlinkCredentials.registrationContent(device: device, random: random)
        guard AlinkSignMethod.hmacsha256.verify(password, content: content, key: productSecret) else {
            throw Refusal(.badUserNameOrPassword, "the registration signature does not match")
        }
        var existing = try await DeviceStore(database).credentials(productKey: device.productKey, deviceName: device.deviceName)
        if type == .regnwl {
            guard try await ProductStore(database).find(device.productKey)?.whitelistFreeRegistration == true else {
                throw Refusal(.notAuthorized, "product \(device.productKey) does not allow whitelist-free registration")
            }
            if existing == nil { existing = try await createDevice(device) }
        }
        guard let stored = existing, !stored.isDisabled else {
            throw Refusal(.notAuthorized, "device \(device) was not created beforehand")
        }
        // Every unit of a product carries its secret: once a device has connected with its own
        // secret, the product secret no longer obtains it.
        guard !stored.isActivated else {
            throw Refusal(.notAuthorized, "device \(device) is already activated; registration is for devices that never connected")
        }
        var principal = DevicePrincipal(did: stored.did, device: device)
        principal.registration = DevicePrincipal.Registration(type: type, random: random)
        return principal.principal
    }

    /// A whitelist-free unit's device, created on its first registration; of two racing, the
    /// second reads the first's.
    private func createDevice(_ device: AlinkDeviceIdentity) async throws -> DeviceCredentials? {
        let store = DeviceStore(database)
        let created = DeviceCredentials.new(productKey: device.productKey, deviceName: device.deviceName)
        do {
            try await store.insert(created, mac: nil, at: now())
            logger.notice("device created by whitelist-free registration", metadata: ["alink.device": "\(device)"])
        } catch {
            // A unique violation: created meanwhile by another registration of the same name.
            guard error.kind == .uniqueViolation else { throw error }
        }
        return try await store.credentials(productKey: device.productKey, deviceName: device.deviceName)
    }

    private func checkTimestamp(_ text: String?) throws {
        guard let text else {
            if configuration.requireTimestamp { throw Refusal(.badUserNameOrPassword, "the client id carries no timestamp") }
            return
        }
        // Bounded before any arithmetic: a client-chosen number must not overflow a subtraction.
        guard var stamp = Int64(text), (0...100_000_000_000_000).contains(stamp) else {
            throw Refusal(.badUserNameOrPassword, "the timestamp is not a plausible Unix time")
        }
        // Some device SDKs sign milliseconds.
        if stamp > 100_000_000_000 { stamp /= 1000 }
        let difference = now() - stamp
        guard abs(difference) <= configuration.timestampSkew else {
            throw Refusal(.badUserNameOrPassword, "the timestamp is \(difference) s from the server's clock (a replay?)")
        }
    }
}
