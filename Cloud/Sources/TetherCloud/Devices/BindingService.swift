import Foundation
import TetherCloudProtocol
import TetherCore

/// Users' bindings of devices (`/app/bindings`, `/app/bind_mac`, `/app/devices/{did}`), with
/// the reference's roles. Every operation acts only on the caller's own bindings.
public struct BindingService: Sendable {
    let database: any SQLDatabase
    let endpoint: M2MEndpoint
    /// How far `X-Gizwits-Timestamp` may be from the server's clock (the reference: 5 minutes).
    var timestampSkew: Int64 = 300

    /// Where binding changes are announced (`s2c_binding_changed`).
    let bus: (any ClusterBus)?
    let limiter: RateLimiter
    let policy: AbusePolicy

    public init(database: any SQLDatabase, endpoint: M2MEndpoint, bus: (any ClusterBus)? = nil, policy: AbusePolicy = AbusePolicy()) {
        self.database = database
        self.endpoint = endpoint
        self.bus = bus
        self.limiter = RateLimiter(database: database)
        self.policy = policy
    }

    // MARK: Binding

    /// `POST /app/bindings {devices: [{did, passcode, remark?, dev_alias?}]}`: binds each device
    /// whose passcode is right; a wrong passcode binds nothing and lands in `failed`.
    ///
    /// Wrong passcodes are counted per user and per device (``AbusePolicy``): past either limit
    /// the remaining entries are not checked (they fail), and a request that bound nothing
    /// because of it is answered 9041, so a hundred guesses in one request get a few answers.
    func bind(_ user: AuthenticatedUser, _ body: BindBody) async throws -> DidResultsBody {
        let userKey = "bind:user:\(user.uid)"
        var throttled = RateLimiter.Decision.allowed
        var success: [String] = []
        var failed: [String] = []
        for entry in body.devices {
            let (did, passcode, remark, alias) = (entry.did, entry.passcode, entry.remark, entry.alias)
            try Validation.displayText(remark, field: "remark")
            try Validation.displayText(alias, field: "dev_alias")
            let deviceKey = "bind:device:\(did)"
            guard throttled.isAllowed else {
                failed.append(did)
                continue
            }
            // Counted before the passcode is compared, so that parallel requests cannot all pass
            // a check made before any of them was counted; a success takes its counts back.
            throttled = try await limiter.consume(userKey, policy.bindFailuresPerUser)
            // A user already over the limit does not spend the device's budget too.
            if throttled.isAllowed { throttled = try await limiter.consume(deviceKey, policy.bindFailuresPerDevice) }
            guard throttled.isAllowed else {
                failed.append(did)
                continue
            }
            do {
                try await database.transaction { transaction in
                    guard let device = try await DeviceStore(transaction).find(did, lockingForUpdate: true),
                        Secrets.constantTimeEquals(device.passcode, passcode)
                    else {
                        throw CloudAPIError.didPasscodeInvalid()
                    }
                    _ = try await addBinding(uid: user.uid, device: device, setOwner: false, remark: remark, alias: alias, on: transaction)
                }
                success.append(did)
                try await limiter.refund(userKey, policy.bindFailuresPerUser)
                try await limiter.refund(deviceKey, policy.bindFailuresPerDevice)
                await bus?.publish(.binding(uid: user.uid, did: did, bound: true))
            } catch let error as CloudAPIError {
                failed.append(did)
                if error.code != CloudAPIError.didPasscodeInvalid().code {
                    // Refused for another reason than the passcode (a disabled device, an owner
                    // already there): no guess was made.
                    try await limiter.refund(userKey, policy.bindFailuresPerUser)
                    try await limiter.refund(deviceKey, policy.bindFailuresPerDevice)
                }
            }
        }
        if success.isEmpty { try throttled.require("too many wrong passcodes; try again later") }
        return DidResultsBody(success: success, failed: failed)
    }

    /// `POST /app/bind_mac`: binds by product key and MAC, proven by
    /// `X-Gizwits-Signature` = md5(product_secret + timestamp).
    func bindByMAC(_ user: AuthenticatedUser, _ body: BindMACBody, timestamp: String?, signature: String?) async throws -> DeviceBody {
        guard let timestamp, let seconds = Int64(timestamp) else {
            throw CloudAPIError.timestampInvalid(detail: "X-Gizwits-Timestamp is required, in Unix seconds")
        }
        guard abs(seconds - Clock.unixNow()) <= timestampSkew else {
            throw CloudAPIError.timestampInvalid(detail: "more than \(timestampSkew) s from the server's clock")
        }
        let (productKey, remark, alias, setOwner) = (body.productKey, body.remark, body.alias, body.setOwner)
        let mac = try Validation.mac(body.mac)
        try Validation.displayText(remark, field: "remark")
        try Validation.displayText(alias, field: "dev_alias")
        guard let product = try await ProductStore(database).find(productKey) else {
            throw CloudAPIError.productKeyInvalid()
        }
        guard let signature, Secrets.constantTimeEquals(signature.lowercased(), Secrets.md5(product.secret + timestamp)) else {
            throw CloudAPIError.signatureInvalid()
        }
        let (did, answer) = try await database.transaction { transaction -> (String, DeviceBody) in
            let devices = DeviceStore(transaction)
            guard let did = try await devices.did(productKey: productKey, mac: mac),
                let device = try await devices.find(did, lockingForUpdate: true)
            else {
                throw CloudAPIError.deviceNotFound(detail: "no device of this product has this MAC; it registers when it first reaches the cloud")
            }
            _ = try await addBinding(uid: user.uid, device: device, setOwner: setOwner, remark: remark, alias: alias, on: transaction)
            return (device.did, try await deviceBody(user, did: device.did, on: transaction))
        }
        await bus?.publish(.binding(uid: user.uid, did: did, bound: true))
        return answer
    }

    /// The role rules of the reference (the device's row is locked, so that two first binders
    /// cannot both become `special`): without sharing the first binder is `special` and later
    /// ones `normal`; with sharing the first binder is the `owner` and nobody else binds directly.
    /// A device's own `account/bind` (the channel SDK's): the user whose IoT token the device
    /// presented binds it, under the same roles as a bind by passcode (on a product with
    /// sharing, not when someone else owns it). Binding again changes nothing.
    func bindByDevice(_ user: AuthenticatedUser, did: String) async throws -> BindingRole {
        let role = try await database.transaction { transaction in
            guard let device = try await DeviceStore(transaction).find(did, lockingForUpdate: true) else { throw CloudAPIError.deviceNotFound() }
            return try await addBinding(uid: user.uid, device: device, setOwner: false, remark: nil, alias: nil, on: transaction)
        }
        await bus?.publish(.binding(uid: user.uid, did: did, bound: true))
        return role
    }

    private func addBinding(
        uid: String, device: DeviceRecord, setOwner: Bool, remark: String?, alias: String?,
        on transaction: any SQLExecutor
    ) async throws -> BindingRole {
        if device.isDisabled { throw CloudAPIError.deviceDisabled() }
        let bindings = BindingStore(transaction)
        let existing = try await bindings.roles(of: device.did)
        if let mine = existing.first(where: { $0.uid == uid }) {
            try await bindings.rename(uid, did: device.did, remark: remark, alias: alias, labels: nil)
            return mine.role
        }
        guard let product = try await ProductStore(transaction).find(device.productKey) else {
            throw CloudAPIError.productKeyInvalid()
        }
        let roles = existing.map(\.role)
        let role: BindingRole
        if product.sharingEnabled {
            guard !roles.contains(.owner) else {
                throw CloudAPIError.onlyOwnerCanBind()
            }
            role = roles.isEmpty || setOwner ? .owner : .normal
        } else {
            role = roles.isEmpty ? .special : .normal
        }
        try await bindings.insert(uid, did: device.did, role: role, remark: remark, alias: alias, at: Clock.unixNow())
        return role
    }

    // MARK: Unbinding

    /// `DELETE /app/bindings {devices: [{did}]}`. When the special user leaves, the longest-bound
    /// normal user becomes special; when the owner leaves, every guest's binding ends too.
    func unbind(_ user: AuthenticatedUser, _ body: DidListBody) async throws -> DidResultsBody {
        var success: [String] = []
        var failed: [String] = []
        for did in body.dids {
            // The users whose binding ended: the caller, and the guests when the owner leaves.
            let ended = try await database.transaction { transaction -> [String] in
                // Homes are locked before devices, everywhere.
                let homes = HomeStore(transaction)
                if let home = try await homes.home(of: did) { try await homes.lock(home) }
                guard try await DeviceStore(transaction).find(did, lockingForUpdate: true) != nil else { return [] }
                let bindings = BindingStore(transaction)
                guard let role = try await bindings.delete(user.uid, did: did) else { return [] }
                // The one who could place the device in a home leaves: it leaves the home too.
                var ended = [user.uid]
                if role == .special || role == .owner, let home = try await homes.home(of: did) {
                    ended += try await HomeService.takeOut(did, home: home, on: transaction).map(\.uid)
                }
                switch role {
                case .special: try await bindings.promoteOldestNormal(did: did)
                case .owner: ended += try await bindings.deleteAll(did: did)
                case .normal, .guest: break
                }
                return ended
            }
            if ended.isEmpty { failed.append(did) } else { success.append(did) }
            for uid in ended { await bus?.publish(.binding(uid: uid, did: did, bound: false)) }
        }
        return DidResultsBody(success: success, failed: failed)
    }

    // MARK: Reading and naming

    /// `PUT /app/bindings/{did}`: the caller's own remark, alias and labels; answers all three.
    func update(_ user: AuthenticatedUser, did: String, _ body: BindingUpdateBody) async throws -> BindingUpdateBody {
        let (remark, alias, labels) = (body.remark, body.alias, body.labels)
        try Validation.displayText(remark, field: "remark")
        try Validation.displayText(alias, field: "dev_alias")
        guard (labels?.count ?? 0) <= 32 else { throw CloudAPIError.formInvalid(detail: "at most 32 labels") }
        for label in labels ?? [] { try Validation.displayText(label, field: "dev_label", maximum: 64) }
        return try await database.transaction { transaction in
            let bindings = BindingStore(transaction)
            guard try await bindings.isBound(user.uid, did: did) else { throw CloudAPIError.deviceNotBound() }
            try await bindings.rename(user.uid, did: did, remark: remark, alias: alias, labels: labels)
            guard let binding = try await bindings.binding(user.uid, did: did) else { throw CloudAPIError.deviceNotBound() }
            return BindingUpdateBody(remark: binding.remark, alias: binding.alias, labels: binding.labels)
        }
    }

    /// `GET /app/bindings`: the caller's devices, oldest binding first.
    func list(_ user: AuthenticatedUser, limit: Int64, skip: Int64, showDisabled: Bool) async throws -> DeviceListBody {
        let devices = try await BindingStore(database).boundDevices(user.uid, includingDisabled: showDisabled, limit: limit, skip: skip)
        return DeviceListBody(devices: devices.map(deviceBody))
    }

    /// `GET /app/devices/{did}`: one bound device; 9017 when the caller has not bound it.
    func device(_ user: AuthenticatedUser, did: String) async throws -> DeviceBody {
        try await deviceBody(user, did: did, on: database)
    }

    /// `GET /app/datapoint?product_key=`: a product's model, which any app may read (an app needs
    /// it to show a device before binding it).
    func productModel(_ productKey: String?) async throws -> ThingModel {
        guard let productKey, !productKey.isEmpty else { throw CloudAPIError.formInvalid(detail: "product_key is required") }
        guard let product = try await ProductStore(database).find(productKey) else { throw CloudAPIError.productKeyInvalid() }
        return product.model
    }

    private func deviceBody(_ user: AuthenticatedUser, did: String, on executor: any SQLExecutor) async throws -> DeviceBody {
        guard let bound = try await BindingStore(executor).boundDevice(user.uid, did: did) else { throw CloudAPIError.deviceNotBound() }
        return deviceBody(bound)
    }

    /// The reference's *Device* object plus what pygizwits also reads (`product_name`,
    /// `protoc`, `mcu_soft_version`, `mcu_hard_version`).
    private func deviceBody(_ bound: BoundDevice) -> DeviceBody {
        let (device, binding) = (bound.device, bound.binding)
        return DeviceBody(
            // Guests (by sharing or a home) get no passcode: one learned stays valid after their
            // access ends, on the LAN and for binding again. They log in on the LAN with grants.
            did: device.did, productKey: device.productKey, productName: bound.productName, mac: device.mac ?? "",
            passcode: binding.role == .guest ? "" : device.passcode, isOnline: device.isOnline, isDisabled: device.isDisabled, type: device.type,
            remark: binding.remark, alias: binding.alias, labels: binding.labels, role: binding.role.rawValue,
            host: endpoint.host, port: Int64(endpoint.mqttPort), tlsPort: Int64(endpoint.mqttTLSPort),
            webSocketPort: Int64(endpoint.webSocketPort), secureWebSocketPort: Int64(endpoint.secureWebSocketPort),
            protocolVersion: device.protocolVersion, wifiSoftVersion: device.wifiSoftVersion,
            mcuSoftVersion: device.mcuSoftVersion, mcuHardVersion: device.mcuHardVersion, homeID: bound.homeID, roomID: bound.roomID
        )
    }
}
