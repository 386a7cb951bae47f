public import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization
public import TetherCore
import TetherProvisioning

/// How a simulated device offers ESP-IDF provisioning over SoftAP HTTP.
public struct ESPProvisioningConfiguration: Sendable, CustomStringConvertible {
    public var host: String
    /// ESP-IDF: port 80 on 192.168.4.1; 0 lets the system choose.
    public var port: Int
    /// 0, 1 or 2.
    public var security: Int
    /// The proof of possession of security 1 (empty: none, capability `no_pop`). A secret.
    public var pop: [UInt8]
    /// Security 2's username and password (ESP-IDF's examples: `wifiprov` / `abcd1234`). A secret.
    public var sec2Username: String
    public var sec2Password: String
    /// Security 2's `sec_patch_ver`: 1 counts the GCM nonce, 0 reuses it (old firmware).
    public var sec2PatchVersion: Int
    /// The device's station: a ``SimulatedRouter``, or ``NetworkManagerStation`` on a real device.
    public var router: any WiFiStation

    /// Without the PoP and the SRP password.
    public var description: String { "ESPProvisioningConfiguration(\(host):\(port), security \(security))" }

    public init(
        host: String = "0.0.0.0", port: Int = 80, security: Int = 1, pop: [UInt8] = [], sec2Username: String = "wifiprov",
        sec2Password: String = "abcd1234", sec2PatchVersion: Int = 1, router: any WiFiStation = SimulatedRouter()
    ) {
        self.host = host
        self.port = port
        self.security = security
        self.pop = pop
        self.sec2Username = sec2Username
        self.sec2Password = sec2Password
        self.sec2PatchVersion = sec2PatchVersion
        self.router = router
    }
}

/// The device's side of ESP-IDF `wifi_provisioning` over HTTP (`shared/reference/provisioning.md`
/// §1–§3): `proto-ver`, the `prov-session` handshake (security 0 or 1, bound to the connection;
/// `Set-Cookie: session=…` on its first answer), and `prov-config` (set, apply, status), the
/// network joined through the simulated router. A device that joins leaves onboarding mode.
public final class ESPProvisioningServer: Sendable {
    public let device: VirtualDevice
    public let configuration: ESPProvisioningConfiguration
    let logger: Logger
    private let bound = AsyncPromise<Int, TetherError>()
    /// Security 2's salt and verifier, made once as firmware stores them.
    let sec2Credential: ESPSecurity2.Credential
    /// Open client connections, closed when the server stops.
    private let connections = Mutex<[ObjectIdentifier: any Channel]>([:])
    /// The station's work (scans, joins), one at a time as a device's radio does it, run in the
    /// server's scope: the HTTP handlers hand it over and hear back on their event loop.
    private let stationWork = AsyncStream.makeStream(of: (@Sendable () async -> Void).self)
    /// A join handed to the station and not finished: one at a time, whichever connection asked.
    private let joinInFlight = Mutex(false)

    public init(device: VirtualDevice, configuration: ESPProvisioningConfiguration, logger: Logger = Logger(label: "tether.agent.esp-prov")) {
        self.device = device
        self.configuration = configuration
        self.logger = logger
        self.sec2Credential = ESPSecurity2.Credential(username: configuration.sec2Username, password: configuration.sec2Password)
    }

    /// The TCP port, once listening.
    public func port() async throws(TetherError) -> Int {
        try await bound.value(ifCancelled: { TetherError(.cancelled, "stopped waiting for the provisioning socket") })
    }

    /// Listens until cancelled.
    public func run() async throws {
        let server: any Channel
        do {
            server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .childChannelInitializer { channel in
                    let key = ObjectIdentifier(channel)
                    self.connections.withLock { $0[key] = channel }
                    channel.closeFuture.whenComplete { _ in _ = self.connections.withLock { $0.removeValue(forKey: key) } }
                    return channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                        try channel.pipeline.syncOperations.addHandler(ESPProvisioningHandler(server: self))
                    }
                }
                .bind(host: configuration.host, port: configuration.port).get()
        } catch {
            let failure = TetherError(.bindFailed, "cannot listen on \(configuration.host) TCP \(configuration.port): \(error)")
            bound.resolve(.failure(failure))
            throw failure
        }
        bound.resolve(.success(server.localAddress?.port ?? configuration.port))
        await withTaskCancellationHandler {
            await withDiscardingTaskGroup { group in
                group.addTask { for await work in self.stationWork.stream { await work() } }
                try? await server.closeFuture.get()
                group.cancelAll()
            }
        } onCancel: {
            server.close(promise: nil)
            for connection in self.connections.withLock({ Array($0.values) }) { connection.close(promise: nil) }
        }
    }

    /// Takes the device's one join, if it is still onboarding and no join is under way.
    func beginJoin() -> Bool {
        guard device.isOnboarding else { return false }
        return joinInFlight.withLock { busy in
            defer { busy = true }
            return !busy
        }
    }

    func endJoin() { joinInFlight.withLock { $0 = false } }

    /// Runs `work` on the station after what was handed over before it.
    func station(_ work: @escaping @Sendable () async -> Void) { stationWork.continuation.yield(work) }

    /// `proto-ver`'s answer.
    var versionDocument: [UInt8] {
        // `tether_pairing`: the custom endpoint for a pairing token.
        var capabilities: [JSONValue] = ["wifi_scan", "tether_pairing"]
        if configuration.security == 0 { capabilities.append("no_sec") }
        if configuration.security == 1, configuration.pop.isEmpty { capabilities.append("no_pop") }
        let patch = configuration.security == 2 ? configuration.sec2PatchVersion : 0
        let prov: JSONObject = [
            "ver": "v1.1", "sec_ver": .int(Int64(configuration.security)), "sec_patch_ver": .int(Int64(patch)), "cap": .array(capabilities),
        ]
        return JSONValue.object(["prov": .object(prov)]).serializedBytes()
    }
}

/// One client connection: its security session and what it configured.
final class ESPProvisioningHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let server: ESPProvisioningServer
    private var head: HTTPRequestHead?
    private var body: [UInt8] = []
    /// The connection's security session, once a client began one.
    private var security: (any ESPDeviceSecurity)?
    private var cookieSent = false
    private var credentials: (ssid: [UInt8], password: [UInt8])?
    private var wifi = ESPWiFiStatus(state: .disconnected)
    /// Counts joins, so that the outcome of one the app reset since is ignored.
    private var joinGeneration = 0
    /// The last scan's networks, strongest first; nil before a scan finished.
    private var scanned: [ESPWiFiNetwork]?
    /// The pairing token the app sent (`tether-pairing`), handed to the device when it joins.
    private var pairingToken: String?
    private static let maximumTokenLength = 128
    private static let maximumBody = 16 * 1024

    init(server: ESPProvisioningServer) {
        self.server = server
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            self.head = head
            body = []
        case .body(var buffer):
            guard head != nil else { return }
            guard body.count + buffer.readableBytes <= Self.maximumBody else {
                // One answer per request: the rest of this one is dropped with the connection.
                head = nil
                respond(context, status: .payloadTooLarge, [])
                context.close(promise: nil)
                return
            }
            body += buffer.readBytes(length: buffer.readableBytes) ?? []
        case .end:
            guard let head else { return }
            self.head = nil
            let endpoint = String(head.uri.drop(while: { $0 == "/" }))
            do throws(TetherError) {
                // A scan's start is answered once the station has scanned, as ESP-IDF's blocking scan is.
                if let request = try scanStart(endpoint, body, method: head.method) {
                    startScan(request, context: context)
                    return
                }
                respond(context, status: .ok, try answer(endpoint, body, method: head.method, context: context))
            } catch {
                server.logger.notice("provisioning request refused", metadata: ["tether.endpoint": "\(endpoint)", "tether.error": "\(error)"])
                respond(context, status: error.code == .invalidArgument ? .notFound : .badRequest, Array(error.message.utf8))
            }
        }
    }

    /// A `prov-scan` start (decrypted, so the session's keystream moves on as for any request), or nil.
    private func scanStart(_ endpoint: String, _ body: [UInt8], method: HTTPMethod) throws(TetherError) -> ESPWiFiScanMessage? {
        guard method == .POST, endpoint == "prov-scan" else { return nil }
        let request = try ESPWiFiScanMessage(decoding: try decrypt(body))
        guard case .start = request else {
            pendingScanRequest = request
            return nil
        }
        return request
    }

    /// A non-start `prov-scan` request already decrypted by ``scanStart(_:_:method:)``.
    private var pendingScanRequest: ESPWiFiScanMessage?

    private func startScan(_ request: ESPWiFiScanMessage, context: ChannelHandlerContext) {
        let bound = NIOLoopBound((handler: self, context: context), eventLoop: context.eventLoop)
        let station = server.configuration.router
        server.station {
            let result: Result<[WiFiNetwork], TetherError>
            do throws(TetherError) { result = .success(try await station.scan()) } catch { result = .failure(error) }
            bound.eventLoop.execute { bound.value.handler.scanFinished(result, context: bound.value.context) }
        }
    }

    private func scanFinished(_ result: Result<[WiFiNetwork], TetherError>, context: ChannelHandlerContext) {
        let status: ESPStatus
        switch result {
        case .success(let networks):
            scanned = networks.enumerated().map { index, network in
                ESPWiFiNetwork(
                    ssid: Array(network.ssid.utf8), channel: network.channel, rssi: network.rssi, bssid: [0x02, 0, 0, 0, 0, UInt8(index & 0xFF)],
                    auth: network.secured ? .wpa2PSK : .open)
            }
            status = .success
        case .failure(let error):
            server.logger.notice("provisioning: the scan failed", metadata: ["tether.error": "\(error)"])
            scanned = nil
            status = .internalError
        }
        do throws(TetherError) {
            respond(context, status: .ok, try encrypt(ESPWiFiScanMessage.startResponse(status: status).encoded()))
        } catch {
            respond(context, status: .badRequest, Array(error.message.utf8))
        }
    }

    private func answer(_ endpoint: String, _ body: [UInt8], method: HTTPMethod, context: ChannelHandlerContext) throws(TetherError) -> [UInt8] {
        guard method == .POST else { throw TetherError(.invalidArgument, "provisioning endpoints take POST") }
        switch endpoint {
        case "proto-ver":
            return server.versionDocument
        case "prov-session":
            return try session(try ESPSessionMessage(decoding: body)).encoded()
        case "prov-config":
            let request = try ESPWiFiConfigMessage(decoding: try decrypt(body))
            return try encrypt(config(request, context: context).encoded())
        case "prov-scan":
            guard let request = pendingScanRequest else { throw TetherError(.malformedFrame, "no scan request") }
            pendingScanRequest = nil
            return try encrypt(scan(request).encoded())
        case "prov-ctrl":
            let request = try ESPWiFiCtrlMessage(decoding: try decrypt(body))
            return try encrypt(control(request).encoded())
        case "tether-pairing":
            return try encrypt(pairing(try decrypt(body)))
        default:
            throw TetherError(.invalidArgument, "no endpoint \(endpoint)")
        }
    }

    private func session(_ message: ESPSessionMessage) throws(TetherError) -> ESPSessionMessage {
        let wanted = server.configuration.security
        guard message.securityVersion == wanted else {
            throw TetherError(.sessionNegotiationFailed, "security \(message.securityVersion) asked for; this device speaks \(wanted)")
        }
        var session: any ESPDeviceSecurity
        switch message {
        case .sec0Command: session = ESPSecurity0.Device()
        case .sec1Command0: session = try ESPSecurity1.Device(pop: server.configuration.pop)
        case .sec2Command0: session = ESPSecurity2.Device(credential: server.sec2Credential, patchVersion: server.configuration.sec2PatchVersion)
        case .sec1Command1, .sec2Command1:
            guard let current = security else { throw TetherError(.sessionNegotiationFailed, "Command1 before Command0") }
            session = current
        default:
            throw TetherError(.sessionNegotiationFailed, "\(message) is not a client's message")
        }
        do throws(TetherError) {
            let answer = try session.respond(to: message)
            security = session
            return answer
        } catch {
            security = nil
            throw error
        }
    }

    private func decrypt(_ bytes: [UInt8]) throws(TetherError) -> [UInt8] {
        guard var session = security, session.isEstablished else { throw TetherError(.sessionNegotiationFailed, "no provisioning session on this connection") }
        defer { security = session }
        return try session.decrypt(bytes)
    }

    private func encrypt(_ bytes: [UInt8]) throws(TetherError) -> [UInt8] {
        guard var session = security else { return bytes }
        defer { security = session }
        return try session.encrypt(bytes)
    }

    /// The custom endpoint `tether-pairing` (ESP-IDF's `wifi_prov_mgr_endpoint_create`): the
    /// app's pairing token as `{"token": "…"}`, kept for the cloud until the device has joined.
    private func pairing(_ bytes: [UInt8]) throws(TetherError) -> [UInt8] {
        // Answered (encrypted) whatever came: a plaintext error would put the session's keystream out of step.
        guard let object = (try? JSONValue.parse(bytes))?.objectValue, let token = object["token"]?.stringValue, !token.isEmpty,
            token.utf8.count <= Self.maximumTokenLength
        else {
            return JSONValue.object(["status": "invalid"]).serializedBytes()
        }
        pairingToken = token
        return JSONValue.object(["status": "ok"]).serializedBytes()
    }

    private func scan(_ request: ESPWiFiScanMessage) -> ESPWiFiScanMessage {
        switch request {
        case .start: return .startResponse(status: .success)
        case .status: return .statusResponse(status: .success, finished: scanned != nil, count: scanned?.count ?? 0)
        case .results(let start, let count):
            let all = scanned ?? []
            guard start >= 0, count >= 0, start <= all.count else { return .resultsResponse(status: .invalidArgument, networks: []) }
            return .resultsResponse(status: .success, networks: Array(all[start..<(start + min(count, all.count - start))]))
        case .startResponse, .statusResponse, .resultsResponse:
            return .statusResponse(status: .invalidArgument, finished: false, count: 0)
        }
    }

    /// Reset and reprovision both forget the credentials and the failed join, so that the app can
    /// send others on the same session.
    private func control(_ request: ESPWiFiCtrlMessage) -> ESPWiFiCtrlMessage {
        switch request {
        case .reset, .reprovision:
            // Nothing to forget once joined, nor while the station is joining.
            guard wifi.state != .connected, wifi.state != .connecting else {
                return request == .reset ? .resetResponse(status: .invalidArgument) : .reprovisionResponse(status: .invalidArgument)
            }
            credentials = nil
            joinGeneration += 1
            wifi = ESPWiFiStatus(state: .disconnected)
            return request == .reset ? .resetResponse(status: .success) : .reprovisionResponse(status: .success)
        case .resetResponse, .reprovisionResponse:
            return .resetResponse(status: .invalidArgument)
        }
    }

    private func config(_ request: ESPWiFiConfigMessage, context: ChannelHandlerContext) -> ESPWiFiConfigMessage {
        switch request {
        case .setConfig(let ssid, let passphrase, _, _):
            guard (1...32).contains(ssid.count), passphrase.count <= 64 else { return .setConfigResponse(status: .invalidArgument) }
            credentials = (ssid, passphrase)
            return .setConfigResponse(status: .success)
        case .applyConfig:
            guard let credentials, wifi.state != .connected, wifi.state != .connecting, server.beginJoin() else {
                return .applyConfigResponse(status: .invalidArgument)
            }
            let (ssid, password) = (String(decoding: credentials.ssid, as: UTF8.self), String(decoding: credentials.password, as: UTF8.self))
            joinGeneration += 1
            wifi = ESPWiFiStatus(state: .connecting)
            server.logger.info("provisioning: joining", metadata: ["tether.ssid": "\(ssid)"])
            let (generation, token, server, station) = (joinGeneration, pairingToken, server, server.configuration.router)
            let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
            server.station {
                var joined = await station.join(ssid: ssid, password: password)
                if case .joined = joined, !server.device.configureWiFi(ssid: ssid, key: password, maximumKeyLength: 64, pairingToken: token) {
                    joined = .joinRefused
                }
                server.endJoin()
                let result = joined
                bound.eventLoop.execute { bound.value.joinFinished(result, generation: generation, ssid: credentials.ssid) }
            }
            return .applyConfigResponse(status: .success)
        case .getStatus:
            return .getStatusResponse(wifi)
        case .getStatusResponse, .setConfigResponse, .applyConfigResponse:
            return .getStatusResponse(ESPWiFiStatus(status: .invalidArgument, state: wifi.state))
        }
    }

    /// The station's outcome, unless the app reset the attempt meanwhile.
    private func joinFinished(_ result: WiFiJoinResult, generation: Int, ssid: [UInt8]) {
        guard generation == joinGeneration else { return }
        switch result {
        case .joined(let ip):
            wifi = ESPWiFiStatus(state: .connected, connected: .init(ipv4: ip, ssid: ssid, channel: 6))
        case .networkNotFound:
            wifi = ESPWiFiStatus(state: .connectionFailed, failReason: .networkNotFound)
        case .wrongPassword:
            wifi = ESPWiFiStatus(state: .connectionFailed, failReason: .authError)
        case .joinRefused:
            wifi = ESPWiFiStatus(state: .disconnected, tetherFailDetail: .joinRefused)
        case .noAddress:
            wifi = ESPWiFiStatus(state: .disconnected, tetherFailDetail: .dhcpTimeout)
        }
        server.logger.info("provisioning: join settled", metadata: ["tether.state": "\(wifi.state)"])
    }

    private func respond(_ context: ChannelHandlerContext, status: HTTPResponseStatus, _ bytes: [UInt8]) {
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: "text/plain")
        headers.add(name: "Content-Length", value: String(bytes.count))
        if !cookieSent {
            // esp-rainmaker-cli copies exactly this spelling into its Cookie header.
            headers.add(name: "Set-Cookie", value: "session=\(UInt64.random(in: 1...UInt64.max))")
            cookieSent = true
        }
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: status, headers: headers))), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: bytes)))), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
    }
}
