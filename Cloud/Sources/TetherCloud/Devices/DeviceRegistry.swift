import Foundation

/// Devices registering themselves, as GAgent does: `POST /dev/devices` with
/// `mac`, `product_key` and `passcode`.
public struct DeviceRegistry: Sendable {
    let database: any SQLDatabase
    let endpoint: M2MEndpoint

    public init(database: any SQLDatabase, endpoint: M2MEndpoint) {
        self.database = database
        self.endpoint = endpoint
    }

    /// Returns the device's did. A device registering again (same product and MAC) keeps its
    /// did and gets the passcode it sends now, as a module does after a factory reset.
    func register(form: RequestForm) async throws -> String {
        let productKey = try form.string("product_key")
        let mac = try Validation.mac(try form.string("mac"))
        let passcode = try form.string("passcode")
        guard (1...32).contains(passcode.count), passcode.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) else {
            throw CloudAPIError.formInvalid(detail: "passcode must be 1 to 32 letters or digits")
        }
        guard try await ProductRecord.find(productKey, in: database) != nil else {
            throw CloudAPIError.productKeyInvalid()
        }
        let now = Clock.unixNow()
        for _ in 0..<2 {
            let updated = try await database.query(
                "UPDATE devices SET passcode = $3, is_disabled = 0, updated_at = $4 WHERE product_key = $1 AND mac = $2 RETURNING did",
                .text(productKey), .text(mac), .text(passcode), .int(now)
            )
            if let did = updated.first?.optionalText("did") { return did }
            let did = Secrets.did()
            do {
                try await database.query(
                    """
                    INSERT INTO devices (did, product_key, mac, passcode, device_name, device_secret, created_at, updated_at)
                    VALUES ($1, $2, $3, $4, $5, $6, $7, $7)
                    """,
                    .text(did), .text(productKey), .text(mac), .text(passcode), .text(mac),
                    .text(Secrets.hex(bytes: 16)), .int(now)
                )
                return did
            } catch {
                // The same module registered twice at once: the other insert won; update it.
                guard error.kind == .uniqueViolation else { throw error }
            }
        }
        throw CloudAPIError.serverError(detail: "registration did not settle")
    }

    /// `GET /dev/devices/{did}`: where the module's MQTT broker is, as `host=…&port=…`.
    func brokerAddress(did: String) async throws -> String {
        guard try await DeviceRecord.find(did, in: database) != nil else { throw CloudAPIError.deviceNotFound() }
        return "host=\(endpoint.host)&port=\(endpoint.mqttPort)"
    }
}
