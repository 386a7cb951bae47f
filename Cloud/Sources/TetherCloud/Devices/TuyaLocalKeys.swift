import TetherCloudProtocol
import TetherCore

/// Tuya local keys held for devices registered here (Tether extension, README "Tuya local
/// protocol"). A local key gives full LAN control and cannot be revoked (it changes only when the
/// device is paired again), so only the device's owner receives it: a guest, a home member or a
/// former owner could otherwise keep control after losing access.
struct TuyaLocalKeys: Sendable {
    let database: any SQLDatabase

    static let versions: Set<String> = ["3.1", "3.2", "3.3", "3.4", "3.5"]

    /// The key, for the device's owner: `9017` when `user` is not bound, `9023` when the device
    /// is disabled, `9511` for a bound user who is not its owner, `9512` when there is none.
    func key(for user: AuthenticatedUser, did: String) async throws -> TuyaLocalKeyBody {
        _ = try await DeviceAccess(database: database).controllable(by: user, did: did)
        guard try await BindingStore(database).ownsDirectly(user.uid, did: did) else {
            throw CloudAPIError.onlyOwnerGetsLocalKey(detail: "a Tuya local key cannot be revoked: only the device's owner receives it")
        }
        guard let key = try await TuyaKeyStore(database).key(did: did) else {
            throw CloudAPIError.noTuyaLocalKey(detail: "no Tuya local key was registered for this device")
        }
        return key
    }

    /// Registers (or replaces) a device's key (the operator, `tether-cloud admin device tuya-key`).
    func set(did: String, _ key: TuyaLocalKeyBody, now: Int64 = Clock.unixNow()) async throws {
        guard try await DeviceStore(database).find(did) != nil else { throw CloudAPIError.deviceNotFound(detail: "no device has this did") }
        guard (1...64).contains(key.tuyaID.utf8.count), key.tuyaID.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) else {
            throw CloudAPIError.formInvalid(detail: "a Tuya id is 1 to 64 letters and digits")
        }
        guard key.localKey.utf8.count == 16 else { throw CloudAPIError.formInvalid(detail: "a Tuya local key is 16 characters") }
        guard Self.versions.contains(key.version) else { throw CloudAPIError.formInvalid(detail: "the Tuya version is 3.1, 3.2, 3.3, 3.4 or 3.5") }
        try await TuyaKeyStore(database).set(did: did, key, at: now)
    }
}
