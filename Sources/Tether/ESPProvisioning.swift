import TetherCore
import TetherProvisioning

/// How the SDK provisions an ESP-IDF device over its access point (SoftAP HTTP).
public struct ESPProvisioningOptions: Sendable, CustomStringConvertible {
    /// The device's HTTP server: `192.168.4.1:80` on its access point.
    public var device: LANEndpoint
    /// protocomm security 0, 1 or 2.
    public var security: Int
    /// The proof of possession for security 1 (printed on the device or its box). A secret.
    public var pop: String?
    /// Security 2's username and password. The password is a secret.
    public var sec2Username: String?
    public var sec2Password: String?
    /// How long each request and the connection may take.
    public var requestTimeout: Duration

    /// Without the PoP and the SRP password.
    public var description: String { "ESPProvisioningOptions(\(device), security \(security))" }
    /// How long the device may take to join the network.
    public var joinTimeout: Duration
    /// The longest time between status polls while it joins: the first come after 10 ms and the
    /// wait doubles up to this, so that a quick join is seen at once and a slow one is not
    /// hammered.
    public var pollInterval: Duration
    /// A pairing token for the device to present to the cloud (sent on the custom endpoint
    /// `tether-pairing` before the credentials; the device must list `tether_pairing` in its
    /// capabilities). A secret. ``TetherClient/onboard(_:)`` fills it in.
    public var pairingToken: String?

    public init(
        device: LANEndpoint = LANEndpoint(host: "192.168.4.1", port: 80), security: Int = 1, pop: String? = nil, sec2Username: String? = nil,
        sec2Password: String? = nil, requestTimeout: Duration = .seconds(10), joinTimeout: Duration = .seconds(60), pollInterval: Duration = .milliseconds(500)
    ) {
        self.device = device
        self.security = security
        self.pop = pop
        self.sec2Username = sec2Username
        self.sec2Password = sec2Password
        self.requestTimeout = requestTimeout
        self.joinTimeout = joinTimeout
        self.pollInterval = pollInterval
        self.pairingToken = nil
    }
}

/// A device that joined the network.
public struct ESPProvisioningResult: Sendable, Hashable {
    /// The address the router gave it.
    public var ip: String
    public var trace: OnboardingTrace
}

/// ESP-IDF `wifi_provisioning` from the app's side (`shared/reference/provisioning.md` §1–§3): the
/// device's version and capabilities, the security handshake, the credentials, and the device's
/// state polled until it has joined or says why it could not.
public enum ESPProvisioning {
    /// - Throws: ``OnboardingFailure`` naming the step: `connecting_to_device` (`connectionFailed`),
    ///   `establishing_session` (`sessionNegotiationFailed`: a wrong proof of possession, a security
    ///   version the device does not speak), `sending_credentials` (`invalidArgument`: the device
    ///   refused them or the pairing token), `joining_network` (`wifiAuthenticationFailed`,
    ///   `wifiNetworkNotFound`, and from Tether devices `wifiJoinFailed` and `noIPAddress`; `timeout`
    ///   otherwise).
    public static func run(
        ssid: [UInt8], password: [UInt8], options: ESPProvisioningOptions, progress: @escaping @Sendable (OnboardingStep) -> Void = { _ in }
    ) async throws(OnboardingFailure) -> ESPProvisioningResult {
        try await run(
            ssid: ssid, password: password, options: options, progress: progress, recorder: OnboardingRecorder(mode: "esp-idf-sec\(options.security)"))
    }

    static func run(
        ssid: [UInt8], password: [UInt8], options: ESPProvisioningOptions, progress: @escaping @Sendable (OnboardingStep) -> Void, recorder: OnboardingRecorder
    ) async throws(OnboardingFailure) -> ESPProvisioningResult {
        var step = OnboardingStep.preparing
        func fail(_ error: TetherError) -> OnboardingFailure {
            OnboardingFailure(
                step: step, error: error, trace: recorder.finish("failed", ["step": .string(step.rawValue), "code": .string(error.code.name)]))
        }
        recorder.record(
            "start",
            [
                "device": .string(options.device.description), "security": .int(Int64(options.security)), "ssid_bytes": .int(Int64(ssid.count)),
                "password_bytes": .int(Int64(password.count)), "pop": .bool(options.pop?.isEmpty == false),
                "pairing_token": .bool(options.pairingToken != nil),
            ])
        guard (1...32).contains(ssid.count), password.count <= 64, [0, 1, 2].contains(options.security) else {
            throw fail(TetherError(.invalidArgument, "an SSID is 1 to 32 bytes, a password up to 64; security is 0, 1 or 2"))
        }
        if options.security == 2, options.sec2Username == nil || options.sec2Password == nil {
            throw fail(TetherError(.invalidArgument, "security 2 needs the username and password"))
        }
        step = .connectingToDevice
        progress(step)
        let outcome: Result<String, TetherError>
        do throws(TetherError) {
            outcome = .success(
                try await HTTPKeepAliveConnection.withConnection(host: options.device.host, port: options.device.port, timeout: options.requestTimeout) {
                    connection throws(TetherError) in try await exchange(connection)
                })
        } catch {
            outcome = .failure(error)
        }
        switch outcome {
        case .success(let ip):
            return ESPProvisioningResult(ip: ip, trace: recorder.finish("connected", ["ip": .string(ip)]))
        case .failure(let error):
            throw fail(error)
        }

        func exchange(_ connection: HTTPKeepAliveConnection) async throws(TetherError) -> String {
            let version = try await post(connection, "proto-ver", Array("---".utf8), recorder: recorder)
            recorder.record("version", ["document": .string(String(decoding: version.prefix(512), as: UTF8.self))])
            step = .establishingSession
            progress(step)
            let prov = (try? JSONValue.parse(version))?["prov"]
            let patchVersion = Self.patchVersion(prov)
            var session = try await establish(connection, options: options, patchVersion: patchVersion, recorder: recorder)
            step = .sendingCredentials
            progress(step)
            if let token = options.pairingToken {
                guard prov?["cap"]?.arrayValue?.contains(.string("tether_pairing")) == true else {
                    throw TetherError(.unexpectedResponse, "the device takes no pairing token (no tether_pairing capability)")
                }
                let answer = try session.decrypt(
                    try await post(
                        connection, "tether-pairing", try session.encrypt(JSONValue.object(["token": .string(token)]).serializedBytes()), recorder: recorder))
                guard (try? JSONValue.parse(answer))?["status"] == .string("ok") else {
                    throw TetherError(.invalidArgument, "the device refused the pairing token")
                }
                recorder.record("pairing_token_sent")
            }
            let set = try await config(connection, .setConfig(ssid: ssid, passphrase: password), session: &session, recorder: recorder)
            guard case .setConfigResponse(.success) = set else { throw TetherError(.invalidArgument, "the device refused the credentials: \(set)") }
            let apply = try await config(connection, .applyConfig, session: &session, recorder: recorder)
            guard case .applyConfigResponse(.success) = apply else { throw TetherError(.invalidArgument, "the device refused to apply them: \(apply)") }
            step = .joiningNetwork
            progress(step)
            let deadline = ContinuousClock.now + options.joinTimeout
            var wait = min(.milliseconds(10), options.pollInterval)
            while true {
                guard case .getStatusResponse(let status) = try await config(connection, .getStatus, session: &session, recorder: recorder) else {
                    throw TetherError(.unexpectedResponse, "the device answered the status request with something else")
                }
                var station: JSONObject = ["state": .string("\(status.state)")]
                if let detail = status.tetherFailDetail { station["detail"] = .string("\(detail)") }
                recorder.record("station", station)
                switch status.state {
                case .connected:
                    return status.ipv4 ?? ""
                case .connectionFailed:
                    // Ready for other credentials on the next attempt, whatever the device says.
                    if case .resetResponse(let answer) = try? await control(connection, .reset, session: &session, recorder: recorder) {
                        recorder.record("reset", ["status": .string("\(answer)")])
                    }
                    if status.failReason == .networkNotFound { throw TetherError(.wifiNetworkNotFound, "the device did not find the network") }
                    throw TetherError(.wifiAuthenticationFailed, "the network refused the device's password")
                case .disconnected where status.tetherFailDetail != nil:
                    if case .resetResponse(let answer) = try? await control(connection, .reset, session: &session, recorder: recorder) {
                        recorder.record("reset", ["status": .string("\(answer)")])
                    }
                    if status.tetherFailDetail == .dhcpTimeout { throw TetherError(.noIPAddress, "the device joined but got no address from DHCP") }
                    throw TetherError(.wifiJoinFailed, "the router would not let the device join")
                case .connecting, .disconnected:
                    guard ContinuousClock.now < deadline else { throw TetherError(.timeout, "the device had not joined within \(options.joinTimeout)") }
                    do { try await Task.sleep(for: wait) } catch { throw TetherError(.cancelled, "cancelled while the device joined") }
                    wait = min(wait * 2, options.pollInterval)
                }
            }
        }
    }

    /// The networks the device hears, strongest first (ESP-IDF `prov-scan`; Tuya's "AP+"): what
    /// the app shows the user before asking for the password. A session of its own; ``run(ssid:password:options:progress:)``
    /// follows with the user's choice.
    ///
    /// - Throws: ``OnboardingFailure`` at `connecting_to_device`, `establishing_session` or
    ///   `scanning_networks` (`wifiScanFailed`: a device without the `wifi_scan` capability, or
    ///   whose scan failed).
    public static func scan(options: ESPProvisioningOptions) async throws(OnboardingFailure) -> [ESPWiFiNetwork] {
        let recorder = OnboardingRecorder(mode: "esp-idf-scan-sec\(options.security)")
        var step = OnboardingStep.connectingToDevice
        let outcome: Result<[ESPWiFiNetwork], TetherError>
        do throws(TetherError) {
            outcome = .success(
                try await HTTPKeepAliveConnection.withConnection(host: options.device.host, port: options.device.port, timeout: options.requestTimeout) {
                    connection throws(TetherError) in
                    let version = try await post(connection, "proto-ver", Array("---".utf8), recorder: recorder)
                    let prov = (try? JSONValue.parse(version))?["prov"]
                    let patchVersion = Self.patchVersion(prov)
                    step = .establishingSession
                    var session = try await establish(connection, options: options, patchVersion: patchVersion, recorder: recorder)
                    step = .scanningNetworks
                    guard prov?["cap"]?.arrayValue?.contains(.string("wifi_scan")) == true else {
                        throw TetherError(.wifiScanFailed, "the device does not scan (no wifi_scan capability)")
                    }
                    guard
                        case .startResponse(.success) = try await scanRequest(
                            connection, .start(blocking: true, groupChannels: 5), session: &session, recorder: recorder)
                    else { throw TetherError(.wifiScanFailed, "the device could not start a scan") }
                    guard case .statusResponse(.success, _, let count) = try await scanRequest(connection, .status, session: &session, recorder: recorder)
                    else {
                        throw TetherError(.wifiScanFailed, "the device could not say what its scan found")
                    }
                    var networks: [ESPWiFiNetwork] = []
                    while networks.count < min(count, 1000) {
                        guard
                            case .resultsResponse(.success, let page) = try await scanRequest(
                                connection, .results(startIndex: networks.count, count: min(100, count - networks.count)), session: &session, recorder: recorder
                            ),
                            !page.isEmpty
                        else { break }
                        networks += page
                    }
                    return networks
                })
        } catch {
            outcome = .failure(error)
        }
        switch outcome {
        case .success(let networks):
            _ = recorder.finish("scanned", ["networks": .int(Int64(networks.count))])
            return networks
        case .failure(let error):
            throw OnboardingFailure(
                step: step, error: error, trace: recorder.finish("failed", ["step": .string(step.rawValue), "code": .string(error.code.name)]))
        }
    }

    private static func control(
        _ connection: HTTPKeepAliveConnection, _ message: ESPWiFiCtrlMessage, session: inout any ESPClientSecurity, recorder: OnboardingRecorder
    ) async throws(TetherError) -> ESPWiFiCtrlMessage {
        let body = try session.encrypt(message.encoded())
        return try ESPWiFiCtrlMessage(decoding: try session.decrypt(try await post(connection, "prov-ctrl", body, recorder: recorder)))
    }

    private static func scanRequest(
        _ connection: HTTPKeepAliveConnection, _ message: ESPWiFiScanMessage, session: inout any ESPClientSecurity, recorder: OnboardingRecorder
    ) async throws(TetherError) -> ESPWiFiScanMessage {
        let body = try session.encrypt(message.encoded())
        return try ESPWiFiScanMessage(decoding: try session.decrypt(try await post(connection, "prov-scan", body, recorder: recorder)))
    }

    /// `sec_patch_ver` from `proto-ver`: 1 only when the device says exactly 1.
    static func patchVersion(_ prov: JSONValue?) -> Int {
        prov?["sec_patch_ver"] == .int(1) ? 1 : 0
    }

    private static func establish(
        _ connection: HTTPKeepAliveConnection, options: ESPProvisioningOptions, patchVersion: Int, recorder: OnboardingRecorder
    ) async throws(TetherError) -> any ESPClientSecurity {
        func exchange(_ message: ESPSessionMessage) async throws(TetherError) -> ESPSessionMessage {
            do {
                return try ESPSessionMessage(decoding: try await post(connection, "prov-session", message.encoded(), recorder: recorder))
            } catch  where error.code == .unexpectedResponse || error.code == .connectionClosed {
                throw TetherError(
                    .sessionNegotiationFailed, "the device refused the handshake (\(error.message)): a wrong proof of possession, or another security version?")
            }
        }
        var session: any ESPClientSecurity =
            switch options.security {
            case 0: ESPSecurity0.Client()
            case 2: ESPSecurity2.Client(username: options.sec2Username ?? "", password: options.sec2Password ?? "", patchVersion: patchVersion)
            default: try ESPSecurity1.Client(pop: Array((options.pop ?? "").utf8))
            }
        if let command1 = try session.command1(after: try await exchange(session.command0())) {
            try session.finish(after: try await exchange(command1))
        }
        recorder.record("session_established", ["security": .int(Int64(options.security)), "sec_patch_ver": .int(Int64(patchVersion))])
        return session
    }

    private static func config(
        _ connection: HTTPKeepAliveConnection, _ message: ESPWiFiConfigMessage, session: inout any ESPClientSecurity, recorder: OnboardingRecorder
    ) async throws(TetherError) -> ESPWiFiConfigMessage {
        let body = try session.encrypt(message.encoded())
        let answer = try session.decrypt(try await post(connection, "prov-config", body, recorder: recorder))
        return try ESPWiFiConfigMessage(decoding: answer)
    }

    /// One request; anything but 200 is the device's refusal.
    private static func post(
        _ connection: HTTPKeepAliveConnection, _ endpoint: String, _ body: [UInt8], recorder: OnboardingRecorder
    )
        async throws(TetherError) -> [UInt8]
    {
        recorder.record("request", ["endpoint": .string(endpoint), "bytes": .int(Int64(body.count))])
        let response = try await connection.post("/" + endpoint, body: body)
        recorder.record("response", ["endpoint": .string(endpoint), "status": .int(Int64(response.statusCode)), "bytes": .int(Int64(response.body.count))])
        guard response.statusCode == 200 else {
            throw TetherError(.unexpectedResponse, "the device answered \(endpoint) with HTTP \(response.statusCode)")
        }
        return response.body
    }
}
