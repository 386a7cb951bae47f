import Crypto
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
public import NIOCore
import NIOHTTP1
import NIOPosix
public import TetherCloudProtocol
public import TetherCore

/// The cloud's Open API, typed: accounts, bindings, device data and control. Speaks to a
/// Tether cloud or any server of the Gizwits Open API. Every method throws `TetherError`:
/// `TetherError.Code.cloudRefused` with the cloud's code in `TetherError.cloudCode`,
/// `TetherError.Code.notLoggedIn` for an invalid or expired token, connection errors as such.
///
/// ```swift
/// let api = TetherCloudAPI(endpoint: try CloudEndpoint(url: "http://127.0.0.1:8080"), appID: appID)
/// let session = try await api.login(username: "alice", password: "Passw0rd!")
/// for device in try await api.bindings(session) { print(device.did, device.isOnline) }
/// ```
public struct TetherCloudAPI: Sendable {
    /// The cloud.
    public let endpoint: CloudEndpoint
    /// The app ID every request carries (`X-Gizwits-Application-Id`).
    public let appID: String
    /// Needed only for SMS codes (`request_token`). Never logged.
    public let appSecret: String?
    let http: CloudHTTPClient

    /// A client for `endpoint` as the app `appID`; `timeout` bounds each request (connection,
    /// answer and body).
    public init(endpoint: CloudEndpoint, appID: String, appSecret: String? = nil, timeout: Duration = .seconds(15), group: (any EventLoopGroup)? = nil) {
        self.endpoint = endpoint
        self.appID = appID
        self.appSecret = appSecret
        self.http = CloudHTTPClient(endpoint: endpoint, timeout: timeout, group: group ?? MultiThreadedEventLoopGroup.singleton)
    }

    // MARK: Accounts

    /// Registers by user name and password and returns the new user's session.
    public func register(username: String, password: String) async throws(TetherError) -> CloudSession {
        try CloudSession(json: try await call(.POST, "/app/users", body: RegistrationBody.username(username, password: password).json))
    }

    /// Registers by phone with the SMS code sent by ``requestSMSCode(phone:)``.
    public func register(phone: String, code: String, password: String) async throws(TetherError) -> CloudSession {
        try CloudSession(json: try await call(.POST, "/app/users", body: RegistrationBody.phone(phone, code: code, password: password).json))
    }

    /// Registers by e-mail; the user logs in after opening the confirmation link.
    public func register(email: String, password: String) async throws(TetherError) {
        _ = try await call(.POST, "/app/users", body: RegistrationBody.email(email, password: password).json)
    }

    /// An anonymous user tied to a phone identifier: the same user every time for the same id.
    public func loginAnonymously(phoneID: String) async throws(TetherError) -> CloudSession {
        try CloudSession(json: try await call(.POST, "/app/users", body: RegistrationBody.anonymous(phoneID: phoneID).json))
    }

    /// A user of a third party (`src`: `google`, `wechat`, …) whose ID token the cloud verifies.
    public func login(thirdParty source: String, uid: String, token: String) async throws(TetherError) -> CloudSession {
        try CloudSession(json: try await call(.POST, "/app/users", body: RegistrationBody.thirdParty(source: source, uid: uid, token: token).json))
    }

    /// Logs in with a user name, e-mail or phone and the password.
    public func login(username: String, password: String) async throws(TetherError) -> CloudSession {
        try CloudSession(json: try await call(.POST, "/app/login", body: LoginBody(username: username, password: password).json))
    }

    /// A new token for the session's user, valid for the cloud's full token lifetime (Tether
    /// extension: sessions are renewed before they expire, without the password). Throws
    /// `TetherError.Code.notLoggedIn` when the session is already over.
    public func refresh(_ session: CloudSession) async throws(TetherError) -> CloudSession {
        try CloudSession(json: try await call(.POST, "/app/token/refresh", session: session))
    }

    /// Sends an SMS code to `phone` (needs the app secret: the app's token is requested first).
    public func requestSMSCode(phone: String) async throws(TetherError) {
        guard let appSecret else { throw TetherError(.invalidArgument, "SMS codes need the app secret (TetherCloudAPI(appSecret:))") }
        let token = try await call(.POST, "/app/request_token", headers: [("X-Gizwits-Application-Auth", Self.md5Hex(appID + appSecret))])
        guard let appToken = token["token"]?.stringValue else { throw TetherError(.unexpectedCloudResponse, "request_token answered no token") }
        _ = try await call(.POST, "/app/sms_code", body: SMSCodeBody(phone: phone).json, headers: [("X-Gizwits-Application-Token", appToken)])
    }

    /// Resets the password with an SMS code.
    public func resetPassword(phone: String, code: String, newPassword: String) async throws(TetherError) {
        _ = try await call(.POST, "/app/reset_password", body: PasswordResetBody.phone(phone, code: code, newPassword: newPassword).json)
    }

    /// Mails a reset link to `email`.
    public func resetPassword(email: String) async throws(TetherError) {
        _ = try await call(.POST, "/app/reset_password", body: PasswordResetBody.email(email).json)
    }

    /// Changes the password. The cloud revokes every token of the user; the new session is
    /// returned.
    public func changePassword(_ session: CloudSession, old: String, new: String) async throws(TetherError) -> CloudSession {
        let answer = try await call(.PUT, "/app/users", body: UserUpdateBody(oldPassword: old, newPassword: new).json, session: session)
        let updated = try decodeBody("the update's answer", answer, as: UserUpdatedBody.init(json:))
        guard let token = updated.token, let expireAt = updated.expireAt else { return session }
        return CloudSession(uid: session.uid, token: token, expireAt: expireAt)
    }

    /// Turns an anonymous user into a named one, keeping the uid and the bindings.
    public func convertAnonymous(_ session: CloudSession, username: String, password: String) async throws(TetherError) {
        _ = try await call(.PUT, "/app/users", body: UserUpdateBody(username: username, password: password).json, session: session)
    }

    /// The user's profile.
    public func userInfo(_ session: CloudSession) async throws(TetherError) -> CloudUser {
        try CloudUser(json: try await call(.GET, "/app/users", session: session))
    }

    /// A single-use token (valid 10 minutes by default) that a device of the user's presents on
    /// `/sys/{pk}/{dn}/account/bind` to be bound to the user: the channel SDK's `iotToken`
    /// (Tether extension `POST /app/iot_token`).
    public func iotToken(_ session: CloudSession) async throws(TetherError) -> IoTTokenBody {
        try decodeBody("the IoT token", try await call(.POST, "/app/iot_token", session: session), as: IoTTokenBody.init(json:))
    }

    /// Updates profile fields (`name`, `gender`, `birthday`, `address`, `lang`, `remark`).
    public func updateUserInfo(_ session: CloudSession, _ fields: [String: String]) async throws(TetherError) {
        _ = try await call(.PUT, "/app/users", body: UserUpdateBody(profile: fields).json, session: session)
    }

    // MARK: Bindings and devices

    /// Every device bound to the user (all pages).
    public func bindings(_ session: CloudSession) async throws(TetherError) -> [CloudDevice] {
        var devices: [CloudDevice] = []
        while true {
            let answer = try await call(.GET, "/app/bindings?limit=100&skip=\(devices.count)", session: session)
            let page = try decodeBody("a page of bindings", answer, as: DeviceListBody.init(json:))
            devices += page.devices.map(CloudDevice.init(body:))
            if page.devices.count < 100 { return devices }
        }
    }

    /// Binds a device by did and passcode; false when the passcode was wrong.
    public func bind(_ session: CloudSession, did: String, passcode: String, remark: String? = nil, alias: String? = nil) async throws(TetherError) -> Bool {
        let body = BindBody(devices: [.init(did: did, passcode: passcode, remark: remark, alias: alias)])
        let answer = try await call(.POST, "/app/bindings", body: body.json, session: session)
        return try decodeBody("the bindings' results", answer, as: DidResultsBody.init(json:)).success.contains(did)
    }

    /// Binds by product key and MAC, signed with the product secret (the QR flow).
    public func bind(
        _ session: CloudSession, productKey: String, mac: String, productSecret: String, remark: String? = nil, alias: String? = nil
    ) async throws(TetherError) -> CloudDevice {
        let timestamp = String(Int64(Date().timeIntervalSince1970))
        let body = BindMACBody(productKey: productKey, mac: mac, remark: remark, alias: alias)
        let answer = try await call(
            .POST, "/app/bind_mac", body: body.json, session: session,
            headers: [
                ("X-Gizwits-Timestamp", timestamp), ("X-Gizwits-Signature", Self.md5Hex(productSecret + timestamp)),
            ])
        return try CloudDevice(json: answer)
    }

    /// Unbinds devices; returns the dids that were unbound.
    public func unbind(_ session: CloudSession, dids: [String]) async throws(TetherError) -> [String] {
        let answer = try await call(.DELETE, "/app/bindings", body: DidListBody(dids: dids).json, session: session)
        return try decodeBody("the unbindings' results", answer, as: DidResultsBody.init(json:)).success
    }

    /// Sets the user's remark and alias of a bound device; nil leaves one as it is.
    public func updateBinding(_ session: CloudSession, did: String, remark: String? = nil, alias: String? = nil) async throws(TetherError) {
        let body = BindingUpdateBody(remark: remark, alias: alias)
        _ = try await call(.PUT, "/app/bindings/\(did)", body: body.json, session: session)
    }

    /// A product's data-point model as the cloud holds it (`/app/datapoint`), for a device
    /// whose model the app does not carry.
    public func productModel(productKey: String) async throws(TetherError) -> ThingModel {
        guard !productKey.isEmpty, productKey.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) else {
            throw TetherError(.invalidArgument, "a product key is letters and digits, not \"\(productKey)\"")
        }
        let document = try await call(.GET, "/app/datapoint?product_key=\(productKey)")
        var model = try ThingModel(gizwitsJSON: Array(document.serialized().utf8))
        model.productKey = productKey
        return model
    }

    /// One device the user is bound to, with its online state.
    public func device(_ session: CloudSession, did: String) async throws(TetherError) -> CloudDevice {
        try CloudDevice(json: try await call(.GET, "/app/devices/\(did)", session: session))
    }

    /// The device's latest reported data points and when (Unix seconds; 0: none in 24 h).
    public func latest(_ session: CloudSession, did: String) async throws(TetherError) -> (attrs: JSONObject, updatedAt: Int64) {
        let answer = try await call(.GET, "/app/devdata/\(did)/latest", session: session)
        let latest = try decodeBody("the latest data", answer, as: LatestStatusBody.init(json:))
        return (latest.attrs, latest.updatedAt)
    }

    /// Writes data points through the cloud. `queueFor` keeps the command for an offline device
    /// that long (Tether extension); without it an offline device fails at once.
    public func control(_ session: CloudSession, did: String, attrs: JSONObject, queueFor: Duration? = nil) async throws(TetherError) -> CloudCommand {
        let body = ControlBody(.attrs(attrs), queueTTL: queueFor?.components.seconds)
        return try CloudCommand(json: try await call(.POST, "/app/control/\(did)", body: body.json, session: session))
    }

    /// Sends `payload` to a device connected to the cloud's gateway and returns what it answers
    /// (Alink RRPC, Tether extension `POST /app/devices/{did}/rrpc`). Without `topic` the
    /// device gets a system RRPC (`/sys/{pk}/{dn}/rrpc/request/{id}`); with one of its own
    /// topics (`/{pk}/{dn}/user/…`, `/sys/{pk}/{dn}/thing/service/{identifier}`) a custom RRPC
    /// on `/ext/rrpc/{id}{topic}`.
    ///
    /// - Parameter timeout: how long the cloud waits for the device: 100 ms to 30 s.
    /// - Throws: `TetherError.Code.cloudRefused` with the cloud's code: 9500 when the device did
    ///   not answer in time, 9042 when it is not connected, 9017 when the user is not bound to it.
    public func rrpc(
        _ session: CloudSession, did: String, payload: [UInt8], topic: String? = nil, timeout: Duration = .seconds(5)
    ) async throws(TetherError)
        -> RRPCAnswerBody
    {
        let milliseconds = timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000
        guard RRPCCallBody.timeoutRangeMs.contains(milliseconds) else {
            throw TetherError(.invalidArgument, "an RRPC timeout is 100 ms to 30 s, not \(timeout)")
        }
        let body = RRPCCallBody(payload: payload, topic: topic, timeoutMs: milliseconds)
        // The exchange outlives the device's timeout by the client's own, so that the cloud's 9500 arrives.
        let answer = try await call(.POST, "/app/devices/\(did)/rrpc", body: body.json, session: session, timeout: timeout + http.timeout)
        return try decodeBody("the RRPC answer", answer, as: RRPCAnswerBody.init(json:))
    }

    /// The device's shadow (Tether extension `GET /app/devices/{did}/shadow`): what it last
    /// reported, what apps desire, and the version a write must exceed.
    public func shadow(_ session: CloudSession, did: String) async throws(TetherError) -> DeviceShadow {
        try decodeBody("the shadow", try await call(.GET, "/app/devices/\(did)/shadow", session: session), as: DeviceShadowBody.init(json:)).shadow
    }

    /// Writes what the device should be (Tether extension `PUT /app/devices/{did}/shadow`):
    /// keys set, keys removed with `.null`, or the section emptied (``ShadowUpdate/Change/cleared``).
    /// The cloud pushes the shadow to the device if it is connected.
    ///
    /// - Throws: `TetherError.Code.cloudRefused` with 9501 when `version` is not greater than
    ///   the shadow's (read it again and retry), 9017 when the user is not bound to the device.
    public func updateShadow(_ session: CloudSession, did: String, desired: ShadowUpdate.Change, version: Int64) async throws(TetherError) -> DeviceShadow {
        let body = ShadowDesiredBody(desired: desired, version: version)
        let answer = try await call(.PUT, "/app/devices/\(did)/shadow", body: body.json, session: session)
        return try decodeBody("the shadow", answer, as: DeviceShadowBody.init(json:)).shadow
    }

    /// Sends bytes to one of a device's custom topics (Tether extension
    /// `POST /app/devices/{did}/publish`, Aliyun's `Pub`); the device gets them if it is
    /// connected and subscribed to the topic.
    ///
    /// - Throws: `TetherError.Code.cloudRefused` with 9015 for a topic that is not one of the
    ///   device's custom topics of a class its devices subscribe to, 9042 when it is not
    ///   connected, 9017 when the user is not bound to it.
    public func publish(_ session: CloudSession, did: String, topic: String, payload: [UInt8], qos: Int = 0) async throws(TetherError) {
        _ = try await call(.POST, "/app/devices/\(did)/publish", body: DevicePublishBody(topic: topic, payload: payload, qos: qos).json, session: session)
    }

    /// What the device runs, its product's firmware packages and its upgrades (Tether
    /// extension `GET /app/devices/{did}/firmware`).
    public func firmware(_ session: CloudSession, did: String) async throws(TetherError) -> DeviceFirmware {
        DeviceFirmware(
            try decodeBody("the firmware", try await call(.GET, "/app/devices/\(did)/firmware", session: session), as: DeviceFirmwareBody.init(json:)))
    }

    /// Offers firmware package `firmwareID` to the device (Tether extension
    /// `POST /app/devices/{did}/firmware/upgrade`): now if it is connected, else when it
    /// connects within `ttl` (default one day). Returns the ledger entry; progress comes as
    /// ``CloudRealtimeEvent/upgrade(_:)`` to subscribed apps.
    ///
    /// - Throws: `TetherError.Code.cloudRefused` with 9503 for a guest, 9504 while an upgrade of
    ///   the same module is under way, 9015 when the device already runs that version, 9999 for
    ///   a package of another product.
    public func upgradeFirmware(_ session: CloudSession, did: String, firmwareID: Int64, ttl: Duration? = nil) async throws(TetherError) -> CloudCommand {
        let body = FirmwareUpgradeRequestBody(firmwareID: firmwareID, ttl: ttl.map { $0.components.seconds })
        return try CloudCommand(json: try await call(.POST, "/app/devices/\(did)/firmware/upgrade", body: body.json, session: session))
    }

    /// A LAN grant for the device (Tether extension `POST /app/devices/{did}/lan_grant`): what
    /// the SDK logs in with on the LAN when the device takes grants (README, "LAN grants").
    ///
    /// - Throws: `TetherError.Code.cloudRefused` with 9017 when the user is not bound to the
    ///   device (a revoked guest), 9023 when it is disabled.
    public func lanGrant(_ session: CloudSession, did: String) async throws(TetherError) -> LANGrantBody {
        try decodeBody(
            "the LAN grant", try await call(.POST, "/app/devices/\(did.tetherPercentEncoded)/lan_grant", session: session), as: LANGrantBody.init(json:))
    }

    /// The Tuya id, version and local key of a device registered in this cloud (Tether extension
    /// `GET /app/devices/{did}/tuya_local_key`), for its owner.
    ///
    /// - Throws: `TetherError.Code.cloudRefused` with 9511 for a bound user who is not the owner,
    ///   9512 when the cloud has no key for the device, 9017 when not bound.
    public func tuyaLocalKey(_ session: CloudSession, did: String) async throws(TetherError) -> TuyaLocalKeyBody {
        try decodeBody(
            "the Tuya local key", try await call(.GET, "/app/devices/\(did.tetherPercentEncoded)/tuya_local_key", session: session),
            as: TuyaLocalKeyBody.init(json:))
    }

    /// A pairing token for a new device (Tether's `POST /app/pairing_tokens`): valid ten
    /// minutes, once; a product's token binds only that product's devices, a home's places the
    /// device in the home (the user must be its owner or an admin).
    public func pairingToken(_ session: CloudSession, productKey: String? = nil, homeID: Int64? = nil) async throws(TetherError) -> PairingToken {
        PairingToken(
            try decodeBody(
                "the pairing token",
                try await call(.POST, "/app/pairing_tokens", body: PairingTokenRequestBody(productKey: productKey, homeID: homeID).json, session: session),
                as: PairingTokenBody.init(json:)))
    }

    /// Where a pairing stands (Tether's `GET /app/pairing_tokens/{id}`).
    ///
    /// - Throws: `cloudRefused` with 9513 for a token that is not the user's.
    public func pairingStatus(_ session: CloudSession, id: String) async throws(TetherError) -> PairingStatus {
        PairingStatus(
            try decodeBody(
                "the pairing status", try await call(.GET, "/app/pairing_tokens/\(id.tetherPercentEncoded)", session: session),
                as: PairingStatusBody.init(json:)))
    }

    /// Gives up a pairing (Tether's `DELETE /app/pairing_tokens/{id}`): the token ends at once
    /// unless a device used it already.
    public func cancelPairing(_ session: CloudSession, id: String) async throws(TetherError) -> PairingStatus {
        PairingStatus(
            try decodeBody(
                "the pairing status", try await call(.DELETE, "/app/pairing_tokens/\(id.tetherPercentEncoded)", session: session),
                as: PairingStatusBody.init(json:)))
    }

    // MARK: Sharing and messages

    /// Who receives an invitation (to a device, or to a home).
    public enum SharingReceiver: Sendable, Hashable {
        case uid(String)
        case username(String)
        case email(String)
        case phone(String)

        var body: SharingCreateBody.Receiver {
            switch self {
            case .uid(let uid): .uid(uid)
            case .username(let name): .username(name)
            case .email(let email): .email(email)
            case .phone(let phone): .phone(phone)
            }
        }
    }

    /// Invites a user to a device you own (`POST /app/sharing`, type 0; valid 24 h); `duration`
    /// limits the guest's time after accepting (1 minute to 24 hours). Returns the invitation's id.
    ///
    /// - Throws: `TetherError.Code.cloudRefused` with 9081 (not the owner), 9082 (no such user),
    ///   9080 (yourself), 9083 (already bound), 9087 (an invitation is already waiting).
    public func share(_ session: CloudSession, did: String, with receiver: SharingReceiver, duration: Duration? = nil) async throws(TetherError) -> Int64 {
        let body = SharingCreateBody(kind: .user, did: did, receiver: receiver.body, duration: duration.map { $0.components.seconds / 60 })
        return try decodeBody("the invitation", try await call(.POST, "/app/sharing", body: body.json, session: session), as: SharingCreatedBody.init(json:)).id
    }

    /// Makes a QR-code invitation to a device you own (valid 15 minutes, accepted once): the
    /// text to show as a QR code (`type=share&code=…`) and the invitation's id.
    public func shareByQRCode(_ session: CloudSession, did: String, duration: Duration? = nil) async throws(TetherError) -> (id: Int64, qrContent: String) {
        let body = SharingCreateBody(kind: .qrCode, did: did, duration: duration.map { $0.components.seconds / 60 })
        let created = try decodeBody(
            "the invitation", try await call(.POST, "/app/sharing", body: body.json, session: session), as: SharingCreatedBody.init(json:))
        guard let content = created.qrContent else { throw TetherError(.unexpectedCloudResponse, "the cloud made no QR code") }
        return (created.id, content)
    }

    /// Invitations you sent (`sent`) or received, newest first.
    public func invitations(_ session: CloudSession, sent: Bool, status: SharingInvitation.Status? = nil) async throws(TetherError) -> [SharingInvitation] {
        let filter = status.map { "&status=\($0.rawValue)" } ?? ""
        let answer = try await call(.GET, "/app/sharing?sharing_type=\(sent ? 0 : 1)&limit=100\(filter)", session: session)
        return try (answer["objects"]?.arrayValue ?? []).map { entry throws(TetherError) in
            SharingInvitation(try decodeBody("an invitation", entry, as: SharingEntryBody.init(json:)))
        }
    }

    /// Accepts or refuses an invitation you received.
    public func answerInvitation(_ session: CloudSession, id: Int64, accept: Bool) async throws(TetherError) {
        _ = try await call(.PUT, "/app/sharing/\(id)?status=\(accept ? 1 : 2)", session: session)
    }

    /// Accepts the invitation a scanned QR code holds (`type=share&code=…`).
    public func acceptInvitation(_ session: CloudSession, qrContent: String) async throws(TetherError) {
        guard let code = SharingCreatedBody.code(inQRContent: qrContent) else {
            throw TetherError(.invalidArgument, "not a sharing QR code (type=share&code=…)")
        }
        _ = try await call(.POST, "/app/sharing/code/\(code.tetherPercentEncoded)", session: session)
    }

    /// Cancels an invitation you sent that is still pending, or revokes one that was accepted
    /// (the guest loses the device at once).
    public func cancelInvitation(_ session: CloudSession, id: Int64) async throws(TetherError) {
        _ = try await call(.DELETE, "/app/sharing/\(id)", session: session)
    }

    /// Hands a device you own to one of its guests; you are unbound.
    public func transfer(_ session: CloudSession, did: String, to uid: String) async throws(TetherError) {
        _ = try await call(.POST, "/app/sharing/\(did.tetherPercentEncoded)/transfer?uid=\(uid.tetherPercentEncoded)", session: session)
    }

    /// Your message centre, newest first.
    public func messages(_ session: CloudSession, limit: Int = 20, skip: Int = 0) async throws(TetherError) -> [CloudMessage] {
        let answer = try await call(.GET, "/app/messages?limit=\(limit)&skip=\(skip)", session: session)
        return try (answer["objects"]?.arrayValue ?? []).map { entry throws(TetherError) in
            CloudMessage(try decodeBody("a message", entry, as: MessageBody.init(json:)))
        }
    }

    /// Marks a message read, or deletes it.
    public func markMessage(_ session: CloudSession, id: Int64, delete: Bool = false) async throws(TetherError) {
        _ = try await call(.PUT, "/app/messages/\(id)?status=\(delete ? 2 : 1)", session: session)
    }

    /// A command of the ledger (Tether extension).
    public func command(_ session: CloudSession, id: Int64) async throws(TetherError) -> CloudCommand {
        try CloudCommand(json: try await call(.GET, "/app/commands/\(id)", session: session))
    }

    // MARK: Transport

    func call(
        _ method: HTTPMethod, _ path: String, body: JSONValue? = nil, session: CloudSession? = nil, headers extra: [(String, String)] = [],
        timeout: Duration? = nil
    ) async throws(TetherError) -> JSONValue {
        var headers = [("X-Gizwits-Application-Id", appID)]
        if let session { headers.append(("X-Gizwits-User-token", session.token)) }
        headers += extra
        let response = try await http.send(CloudHTTPRequest(method: method, path: path, headers: headers, body: body, timeout: timeout))
        if (200..<300).contains(response.status) { return response.body ?? .object([:]) }
        guard case .int(let code)? = response.body?["error_code"] else {
            throw TetherError(.unexpectedCloudResponse, "\(method) \(path) answered HTTP \(response.status) without an Open API error")
        }
        let message = [response.body?["error_message"]?.stringValue, response.body?["detail"]?.stringValue].compactMap { $0 }.filter { !$0.isEmpty }.joined(
            separator: ": ")
        // 9004 token invalid, 9006 token expired: the session is over.
        let kind: TetherError.Code = code == 9004 || code == 9006 ? .notLoggedIn : .cloudRefused
        throw TetherError(kind, "\(method) \(path): \(message)", cloudCode: Int(code))
    }

    /// The Open API's signatures are MD5 hex digests.
    static func md5Hex(_ text: String) -> String {
        Insecure.MD5.hash(data: Array(text.utf8)).map { byte in
            let hex = String(byte, radix: 16)
            return byte < 16 ? "0" + hex : hex
        }.joined()
    }
}
