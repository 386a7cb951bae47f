import Foundation
import TetherAlink
import TetherCore

/// Devices registering themselves: `POST /dev/devices` (README, "Device registration").
///
/// A registration must prove who sends it: a signature with the product secret (the device or
/// its maker) or with the device's own secret. GAgent's unsigned form is accepted only for
/// products an operator opened to it, and then it can only create a device, never change one.
public struct DeviceRegistry: Sendable {
    let database: any SQLDatabase
    let endpoint: M2MEndpoint
    let limiter: RateLimiter
    let policy: AbusePolicy
    /// How far a signed registration's timestamp may be from the server's clock.
    var timestampSkew: Int64 = 300

    public init(database: any SQLDatabase, endpoint: M2MEndpoint, policy: AbusePolicy = AbusePolicy()) {
        self.database = database
        self.endpoint = endpoint
        self.limiter = RateLimiter(database: database)
        self.policy = policy
    }

    /// A registration as the route read it.
    struct Request: Sendable {
        var productKey: String
        /// 12 lower-case hex digits.
        var mac: String
        var passcode: String?
        /// Nil for GAgent's unsigned form.
        var proof: Proof?

        struct Proof: Sendable {
            var authority: DeviceRegistrationForm.Authority
            /// As sent, because the signature covers the text.
            var timestampText: String
            var timestamp: Int64
            var sign: String
        }

        var signingContent: String {
            DeviceRegistrationForm.signingContent(
                authority: proof?.authority.rawValue ?? "", mac: mac, passcode: passcode ?? "", productKey: productKey,
                timestamp: proof?.timestampText ?? ""
            )
        }

        init(productKey: String, mac: String, passcode: String?, proof: Proof?) {
            self.productKey = productKey
            self.mac = mac
            self.passcode = passcode
            self.proof = proof
        }

        /// Reads and checks the fields; an unsigned form has neither `sign` nor `timestamp`.
        init(form: RequestForm) throws(CloudAPIError) {
            productKey = try form.string("product_key")
            mac = try Validation.mac(try form.string("mac"))
            passcode = try form.optionalString("passcode").flatMap { $0.isEmpty ? nil : $0 }
            if let passcode { try Validation.passcode(passcode) }
            let sign = try form.optionalString("sign")
            let timestamp: String? =
                switch form.object["timestamp"] {
                case nil, .null?: nil
                case .string(let text)?: text
                case .int(let seconds)?: String(seconds)
                default: throw .timestampInvalid(detail: "timestamp is Unix seconds")
                }
            guard sign != nil || timestamp != nil else {
                proof = nil
                return
            }
            guard let timestamp, let seconds = Int64(timestamp), (0...100_000_000_000).contains(seconds) else {
                throw .timestampInvalid(detail: "timestamp is required with sign, in Unix seconds")
            }
            guard let sign, !sign.isEmpty else { throw .signatureInvalid(detail: "sign is required with timestamp") }
            let authorityText = try form.optionalString("auth") ?? DeviceRegistrationForm.Authority.product.rawValue
            guard let authority = DeviceRegistrationForm.Authority(rawValue: authorityText) else {
                throw .formInvalid(detail: "auth is product or device")
            }
            proof = Proof(authority: authority, timestampText: timestamp, timestamp: seconds, sign: sign)
        }
    }

    /// Registers a device or, properly authenticated, gives an existing one a new passcode.
    ///
    /// The product's budget counts only registrations whose signature holds (or unsigned ones,
    /// for a product open to them): a stranger, who knows product keys, must not be able to
    /// spend it and block the product's devices.
    func register(_ request: Request, source: ClientSource) async throws -> DeviceRegistrationAnswer {
        try await limiter.consume("register:source:\(source.key)", policy.registrationsPerSource).require("too many registrations from this address")
        guard let product = try await ProductStore(database).find(request.productKey) else {
            throw CloudAPIError.productKeyInvalid()
        }
        for _ in 0..<2 {
            let existing = try await DeviceStore(database).credentials(productKey: product.productKey, mac: request.mac)
            do {
                if let proof = request.proof {
                    return try await signedRegistration(request, proof: proof, product: product, existing: existing)
                }
                return try await unsignedRegistration(request, product: product, existing: existing)
            } catch let error as StorageError where error.kind == .uniqueViolation {
                // The same device registered twice at once: the other insert won; go again as an
                // existing device.
                continue
            }
        }
        throw CloudAPIError.serverError(detail: "registration did not settle")
    }

    private func signedRegistration(
        _ request: Request, proof: Request.Proof, product: ProductRecord, existing: DeviceCredentials?
    ) async throws -> DeviceRegistrationAnswer {
        guard abs(proof.timestamp - Clock.unixNow()) <= timestampSkew else {
            throw CloudAPIError.timestampInvalid(detail: "more than \(timestampSkew) s from the server's clock")
        }
        let key: String
        switch proof.authority {
        case .product:
            key = product.secret
        case .device:
            guard let existing else {
                throw CloudAPIError.signatureInvalid(detail: "auth=device: no device of this product has this MAC")
            }
            key = existing.deviceSecret
        }
        guard AlinkSignMethod.hmacsha256.verify(Array(proof.sign.utf8), content: request.signingContent, key: key) else {
            throw CloudAPIError.signatureInvalid(detail: "sign is not HMAC-SHA256 of the form with the \(proof.authority.rawValue) secret")
        }
        try await consumeProductBudget(product)
        let passcode = request.passcode ?? Secrets.passcode()
        guard let existing else {
            let created = try await insert(productKey: product.productKey, mac: request.mac, passcode: passcode, registeredAt: proof.timestamp)
            return DeviceRegistrationAnswer(did: created.did, passcode: passcode, deviceSecret: created.deviceSecret)
        }
        // Each signed registration of a device is newer than the last: one sent again (a replay)
        // is refused, whether it would undo a newer one or choose a new passcode for whoever
        // replayed it.
        guard proof.timestamp > existing.registeredAt else {
            throw CloudAPIError.timestampInvalid(detail: "not newer than this device's last registration (a replay?)")
        }
        // Every unit of a product carries the product secret: once a device has connected, only
        // its own secret changes its passcode.
        if proof.authority == .product, existing.isActivated {
            throw CloudAPIError.macAlreadyRegistered(detail: "this device has connected before; sign with its own secret (auth=device) to change its passcode")
        }
        // Conditional on the timestamp, so that of two registrations racing the newer one wins.
        let updated = try await DeviceStore(database).updatePasscode(did: existing.did, passcode: passcode, registeredAt: proof.timestamp, at: Clock.unixNow())
        guard updated else {
            throw CloudAPIError.timestampInvalid(detail: "not newer than this device's last registration (a replay?)")
        }
        let secret = proof.authority == .product ? existing.deviceSecret : nil
        return DeviceRegistrationAnswer(did: existing.did, passcode: passcode, deviceSecret: secret)
    }

    /// GAgent's form: only for products opened to it, it creates a device and answers an
    /// existing one's did only when the passcode is the one it already has.
    private func unsignedRegistration(_ request: Request, product: ProductRecord, existing: DeviceCredentials?) async throws -> DeviceRegistrationAnswer {
        guard product.unsignedRegistration else {
            throw CloudAPIError.signatureInvalid(
                detail: "sign the registration (timestamp, sign) with the product secret; see the README's Device registration")
        }
        guard let passcode = request.passcode else {
            throw CloudAPIError.formInvalid(detail: "passcode is required in an unsigned registration")
        }
        try await consumeProductBudget(product)
        guard let existing else {
            let created = try await insert(productKey: product.productKey, mac: request.mac, passcode: passcode, registeredAt: 0)
            return DeviceRegistrationAnswer(did: created.did)
        }
        guard Secrets.constantTimeEquals(existing.passcode, passcode) else {
            throw CloudAPIError.macAlreadyRegistered(detail: "a signed registration changes an existing device's passcode")
        }
        return DeviceRegistrationAnswer(did: existing.did)
    }

    private func consumeProductBudget(_ product: ProductRecord) async throws {
        try await limiter.consume("register:product:\(product.productKey)", policy.registrationsPerProduct).require("too many registrations for this product")
    }

    private func insert(
        productKey: String, mac: String, passcode: String, registeredAt: Int64
    ) async throws(StorageError) -> (did: String, deviceSecret: String) {
        // A GAgent device's Alink name is its MAC.
        let device = DeviceCredentials(
            did: Secrets.did(), productKey: productKey, deviceName: mac, passcode: passcode, deviceSecret: Secrets.hex(bytes: 16),
            registeredAt: registeredAt, isActivated: false, isDisabled: false
        )
        try await DeviceStore(database).insert(device, mac: mac, at: Clock.unixNow())
        return (device.did, device.deviceSecret)
    }

    /// `GET /dev/devices/{did}`: where the module's MQTT broker is, as `host=…&port=…`.
    func brokerAddress(did: String) async throws -> String {
        guard try await DeviceStore(database).find(did) != nil else { throw CloudAPIError.deviceNotFound() }
        return "host=\(endpoint.host)&port=\(endpoint.mqttPort)"
    }
}
