import Foundation
import TetherCore

/// What `tether-cloud admin` does: apps, products and devices made by the operator.
public struct Administration: Sendable {
    let database: any SQLDatabase

    public init(database: any SQLDatabase) { self.database = database }

    public struct CreatedApp: Sendable, Equatable {
        public var appID: String
        public var appSecret: String
    }

    public func createApp(name: String) async throws -> CreatedApp {
        let trimmed = name.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty else { throw CloudAPIError.formInvalid(detail: "the app needs a name") }
        let app = CreatedApp(appID: Secrets.hex(bytes: 16), appSecret: Secrets.hex(bytes: 16))
        try await database.query(
            "INSERT INTO apps (app_id, name, secret, created_at) VALUES ($1, $2, $3, $4)",
            .text(app.appID), .text(trimmed), .text(app.appSecret), .int(Clock.unixNow())
        )
        return app
    }

    /// Turns third-party login on for an app (or off, with nil).
    public func configureThirdParty(appID: String, issuer: ThirdPartyIssuer?) async throws {
        if let issuer {
            guard let url = URL(string: issuer.jwksURL), ["http", "https"].contains(url.scheme ?? ""), url.host != nil else {
                throw CloudAPIError.formInvalid(detail: "the JWKS URL must be an http or https URL")
            }
        }
        let rows = try await database.query(
            "UPDATE apps SET jwks_url = $2, jwt_issuer = $3, jwt_audience = $4 WHERE app_id = $1 RETURNING app_id",
            .text(appID), .optional(issuer?.jwksURL), .optional(issuer?.issuer), .optional(issuer?.audience)
        )
        guard !rows.isEmpty else { throw CloudAPIError.appIDInvalid(detail: "no app has this id") }
    }

    public struct CreatedProduct: Sendable, Equatable {
        public var productKey: String
        public var productSecret: String
    }

    /// Imports a product model, Gizwits data-point JSON or Aliyun TSL, validated on import
    /// (a model that fails is refused with the data point and the rule it breaks). The model is
    /// kept in the format it came in.
    ///
    /// `unsignedRegistration` accepts GAgent's unsigned `POST /dev/devices` form for new
    /// devices of this product (firmware that cannot sign); leave it off otherwise.
    public func createProduct(
        name: String, modelFile: [UInt8], format: ModelFormat, sharingEnabled: Bool = false, unsignedRegistration: Bool = false
    ) async throws -> CreatedProduct {
        let trimmed = name.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty else { throw CloudAPIError.formInvalid(detail: "the product needs a name") }
        let product = CreatedProduct(productKey: Secrets.hex(bytes: 16), productSecret: Secrets.hex(bytes: 16))
        var model = try format.load(modelFile)
        model.productKey = product.productKey
        model.name = trimmed
        try await database.query(
            """
            INSERT INTO products (product_key, name, secret, model_format, model_json, sharing_enabled, unsigned_registration, created_at)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
            """,
            .text(product.productKey), .text(trimmed), .text(product.productSecret), .text(format.rawValue),
            .text(try format.serialize(model)), .bool(sharingEnabled), .bool(unsignedRegistration), .int(Clock.unixNow())
        )
        return product
    }

    public func products() async throws -> [ProductRecord] {
        try await database.query("SELECT * FROM products ORDER BY name, product_key").map { row throws(StorageError) in
            try ProductRecord(row: row)
        }
    }

    public struct CreatedDevice: Sendable, Equatable {
        public var did: String
        public var productKey: String
        public var deviceName: String
        public var deviceSecret: String
        public var passcode: String
        /// 12 lowercase hex digits, when the device was registered with one.
        public var mac: String?

        public init(did: String, productKey: String, deviceName: String, deviceSecret: String, passcode: String, mac: String? = nil) {
            self.did = did
            self.productKey = productKey
            self.deviceName = deviceName
            self.deviceSecret = deviceSecret
            self.passcode = passcode
            self.mac = mac
        }
    }

    /// A device with its own secret for the MQTT gateway.
    public func createDevice(productKey: String, name: String, mac: String?) async throws -> CreatedDevice {
        guard try await ProductRecord.find(productKey, in: database) != nil else {
            throw CloudAPIError.productKeyInvalid(detail: "no product has this key")
        }
        guard (1...64).contains(name.count), name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "-_@.:".contains($0)) }) else {
            throw CloudAPIError.formInvalid(detail: "a device name has 1 to 64 of the characters A-Z a-z 0-9 - _ @ . :")
        }
        var normalizedMAC: String?
        if let mac { normalizedMAC = try Validation.mac(mac) }
        let device = CreatedDevice(
            did: Secrets.did(), productKey: productKey, deviceName: name,
            deviceSecret: Secrets.hex(bytes: 16), passcode: Secrets.passcode(), mac: normalizedMAC
        )
        let credentials = DeviceCredentials(
            did: device.did, productKey: productKey, deviceName: name, passcode: device.passcode, deviceSecret: device.deviceSecret,
            registeredAt: 0, isActivated: false, isDisabled: false
        )
        do {
            try await DeviceStore(database).insert(credentials, mac: normalizedMAC, at: Clock.unixNow())
        } catch {
            guard error.kind == .uniqueViolation else { throw error }
            throw CloudAPIError.macAlreadyRegistered(detail: "this product already has a device with this name or MAC")
        }
        return device
    }

    /// Disables an account (its sessions end and it logs in nowhere) or enables it again.
    /// `bus` tells the running nodes at once; without one (SQLite, a separate process) they
    /// notice within a minute, when live sessions re-check their tokens.
    public func setUserDisabled(uid: String, _ disabled: Bool, bus: (any ClusterBus)? = nil) async throws {
        let updated = try await database.transaction { transaction in
            let rows = try await transaction.query(
                "UPDATE users SET is_disabled = $2, updated_at = $3 WHERE uid = $1 RETURNING uid", .text(uid), .bool(disabled), .int(Clock.unixNow())
            )
            if disabled, !rows.isEmpty { try await transaction.query("DELETE FROM user_tokens WHERE uid = $1", .text(uid)) }
            return !rows.isEmpty
        }
        guard updated else { throw CloudAPIError.userNotExist(detail: "no user has this uid") }
        await bus?.publish(.credentialsChanged(uid: uid))
    }
}
