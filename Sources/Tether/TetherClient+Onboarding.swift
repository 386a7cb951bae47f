import Synchronization
import TetherCore

/// How the app reaches the new device.
public enum OnboardingMode: Sendable {
    /// GAgent SoftAP: `0x0001` to the device's access point.
    case softAP(SoftAPOptions)
    /// ESP-IDF `wifi_provisioning` over the device's access point.
    case espIDF(ESPProvisioningOptions)
    /// Smart config (ESP-Touch v1/v2, AirKiss): carries no pairing token.
    case smartConfig(SmartConfigOptions)

    var name: String {
        switch self {
        case .softAP: "softap-gagent"
        case .espIDF(let options): "esp-idf-sec\(options.security)"
        case .smartConfig(let options): "airlink-\(options.encoding.rawValue)"
        }
    }
}

/// One onboarding attempt: the mode, the network, and whether the cloud binds the device to the
/// logged-in user (a pairing token travels with the credentials).
public struct OnboardingRequest: Sendable, CustomStringConvertible {
    /// Bind the new device to the logged-in user: a pairing token for a product (others are
    /// refused) and a home (the device is placed in it).
    public struct Pairing: Sendable, Hashable {
        public var productKey: String?
        public var homeID: Int64?

        public init(productKey: String? = nil, homeID: Int64? = nil) {
            self.productKey = productKey
            self.homeID = homeID
        }
    }

    public var mode: OnboardingMode
    public var ssid: String
    /// A secret: never in traces, errors or descriptions.
    public var password: String
    public var pairing: Pairing?
    /// How long the device may take to reach the cloud and be bound, once it has the network.
    public var pairingTimeout: Duration
    /// Time between asking the cloud where the pairing stands (besides its push).
    public var pairingPollInterval: Duration

    public init(
        mode: OnboardingMode, ssid: String, password: String, pairing: Pairing? = nil, pairingTimeout: Duration = .seconds(120),
        pairingPollInterval: Duration = .seconds(2)
    ) {
        self.mode = mode
        self.ssid = ssid
        self.password = password
        self.pairing = pairing
        self.pairingTimeout = pairingTimeout
        self.pairingPollInterval = pairingPollInterval
    }

    public var description: String { "OnboardingRequest(\(mode.name), ssid: \(ssid), pairing: \(pairing.map { "\($0)" } ?? "none"))" }
}

/// A device on the user's network, and in the user's list when it was paired.
public struct OnboardedDevice: Sendable {
    public var mac: String?
    public var did: String?
    public var productKey: String?
    /// The address the router gave it, when the mode tells.
    public var ip: String?
    /// The cloud's outcome, when paired.
    public var pairing: PairingStatus?
    /// The device in ``TetherClient/devices``, when the client knows it (paired, or discovered).
    public var device: Device?
    public var trace: OnboardingTrace
}

/// An attempt under way (``TetherClient/withOnboarding(_:_:)``): its steps as they start, its
/// result, and a way to stop it.
public struct OnboardingSession: Sendable {
    /// Each step as it starts; ends when the attempt does.
    public let steps: AsyncStream<OnboardingStep>
    let outcome: AsyncPromise<OnboardedDevice, OnboardingFailure>
    let stopSignal: AsyncStream<Void>.Continuation

    /// The device, or the failure naming its step (`cancelled` after ``stop()``).
    public func result() async throws(OnboardingFailure) -> OnboardedDevice {
        try await outcome.value(ifCancelled: {
            OnboardingFailure(step: .preparing, error: TetherError(.cancelled, "stopped waiting for the onboarding"), trace: OnboardingTrace(mode: "cancelled"))
        })
    }

    /// Stops the attempt at whatever step it is; ``result()`` then fails with `cancelled`.
    public func stop() { stopSignal.yield() }
}

extension TetherClient {
    /// Runs an onboarding attempt while `body` observes it (``OnboardingSession/steps``,
    /// ``OnboardingSession/result()``, ``OnboardingSession/stop()``); the attempt is stopped when
    /// `body` returns before it ends.
    public func withOnboarding<Result: Sendable>(
        _ request: OnboardingRequest, _ body: (OnboardingSession) async throws -> Result
    ) async throws -> Result {
        let (steps, stepSink) = AsyncStream.makeStream(of: OnboardingStep.self, bufferingPolicy: .unbounded)
        let (stops, stopSink) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        let session = OnboardingSession(steps: steps, outcome: AsyncPromise(), stopSignal: stopSink)
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                await withTaskGroup(of: Bool.self) { race in
                    race.addTask {
                        do throws(OnboardingFailure) {
                            session.outcome.resolve(.success(try await self.onboard(request) { stepSink.yield($0) }))
                        } catch {
                            session.outcome.resolve(.failure(error))
                        }
                        return true
                    }
                    race.addTask {
                        for await _ in stops { return false }
                        return false
                    }
                    // Whichever ends first (the attempt, or a stop) ends the other.
                    _ = await race.next()
                    race.cancelAll()
                }
                stepSink.finish()
                stopSink.finish()
            }
            defer { group.cancelAll() }
            return try await body(session)
        }
    }

    /// One onboarding attempt, to its end: the device on the network and, with
    /// ``OnboardingRequest/pairing``, bound to the logged-in user and in ``devices``.
    ///
    /// - Throws: ``OnboardingFailure`` naming the step and the typed error: the mode's own
    ///   (``SoftAPOnboarding``, ``ESPProvisioning``, ``SmartConfig``), `preparing` (`notLoggedIn`,
    ///   `cloudRefused`: no pairing token; `invalidArgument`: smart config carries none),
    ///   `activated_in_cloud` (`timeout`: the device never presented the token; `pairingTokenExpired`,
    ///   `pairingTokenUsed`, `pairingRefused` with the cloud's code), or `cancelled`.
    public func onboard(
        _ request: OnboardingRequest, progress: @escaping @Sendable (OnboardingStep) -> Void = { _ in }
    ) async throws(OnboardingFailure) -> OnboardedDevice {
        let recorder = OnboardingRecorder(mode: request.mode.name + (request.pairing == nil ? "" : "+pairing"), nested: true)
        var step = OnboardingStep.preparing
        func fail(_ error: TetherError) -> OnboardingFailure {
            OnboardingFailure(
                step: step, error: error, trace: recorder.complete("failed", ["step": .string(step.rawValue), "code": .string(error.code.name)]))
        }
        progress(step)
        // Subscribed before the token exists, so that no push about it is missed.
        let events = request.pairing == nil ? nil : self.events()
        var token: PairingToken?
        if let pairing = request.pairing {
            guard let account else { throw fail(TetherError(.notLoggedIn, "pairing needs a client with a cloud and a logged-in user")) }
            if case .smartConfig = request.mode { throw fail(TetherError(.invalidArgument, "smart config carries no pairing token: use SoftAP or ESP-IDF")) }
            do throws(TetherError) {
                let issued = try await account.withSession { session throws(TetherError) in
                    try await account.api.pairingToken(session, productKey: pairing.productKey, homeID: pairing.homeID)
                }
                token = issued
                recorder.record("pairing_token_issued", ["id": .string(issued.id), "expires_at": .int(issued.expiresAt)])
            } catch {
                throw fail(error)
            }
        }
        var found = OnboardedDevice(trace: OnboardingTrace(mode: ""))
        do throws(OnboardingFailure) {
            // The modes announce `preparing` too: each step is told once.
            let last = Mutex(OnboardingStep.preparing)
            let relay: @Sendable (OnboardingStep) -> Void = { step in
                if last.withLock({ last in
                    defer { last = step }; return last != step
                }) {
                    progress(step)
                }
            }
            switch request.mode {
            case .softAP(var options):
                options.pairingToken = token?.token
                let result = try await SoftAPOnboarding.run(
                    ssid: request.ssid, password: request.password, options: options, progress: relay, recorder: recorder)
                (found.mac, found.did, found.productKey, found.ip) = (result.mac, result.did, result.productKey, result.ip)
            case .espIDF(var options):
                options.pairingToken = token?.token
                let result = try await ESPProvisioning.run(
                    ssid: Array(request.ssid.utf8), password: Array(request.password.utf8), options: options, progress: relay, recorder: recorder)
                found.ip = result.ip
            case .smartConfig(let options):
                let credentials: SmartConfigCredentials
                do throws(TetherError) {
                    credentials = try SmartConfigCredentials(ssid: request.ssid, password: request.password)
                } catch {
                    throw OnboardingFailure(step: .preparing, error: error, trace: recorder.finish("failed"))
                }
                let result = try await SmartConfig.run(credentials, options: options, progress: relay, recorder: recorder)
                (found.mac, found.ip) = (result.mac, result.ip)
            }
        } catch {
            await giveUp(token, recorder: recorder)
            // The mode's step and error, with the whole session's trace.
            throw OnboardingFailure(
                step: error.step, error: error.error,
                trace: recorder.complete("failed", ["step": .string(error.step.rawValue), "code": .string(error.error.code.name)]))
        }
        if let token, let events {
            step = .activatedInCloud
            progress(step)
            let status: PairingStatus
            do throws(TetherError) {
                status = try await awaitPairing(token, events: events, timeout: request.pairingTimeout, poll: request.pairingPollInterval, recorder: recorder)
            } catch {
                // The app has given up: a device that comes later must not be bound behind its back.
                if error.code == .timeout || error.code == .cancelled { await giveUp(token, recorder: recorder) }
                throw fail(error)
            }
            step = .bound
            progress(step)
            found.pairing = status
            found.did = status.did ?? found.did
            found.mac = status.mac ?? found.mac
            found.productKey = status.productKey ?? found.productKey
            if self.device(did: status.did ?? "") == nil { _ = try? await refreshBindings() }
        }
        found.device = found.did.flatMap { self.device(did: $0) }
        var detail: JSONObject = [:]
        if let did = found.did { detail["did"] = .string(did) }
        found.trace = recorder.complete(token == nil ? "onboarded" : "bound", detail)
        return found
    }

    /// Ends the attempt's pairing token in the cloud, best effort. The cloud client's requests do
    /// not stop at cancellation, so a stopped attempt ends its token too (within the client's
    /// request timeout).
    private func giveUp(_ token: PairingToken?, recorder: OnboardingRecorder) async {
        guard let token, let account else { return }
        var done = true
        do throws(TetherError) {
            _ = try await account.withSession { session throws(TetherError) in try await account.api.cancelPairing(session, id: token.id) }
        } catch {
            done = false
        }
        recorder.record("pairing_token_cancelled", ["id": .string(token.id), "done": .bool(done)])
    }

    /// The pairing's outcome: the cloud's push, or its answer to a poll, whichever comes first.
    private func awaitPairing(
        _ token: PairingToken, events: AsyncStream<TetherClientEvent>, timeout: Duration, poll: Duration, recorder: OnboardingRecorder
    ) async throws(TetherError) -> PairingStatus {
        guard let account else { throw TetherError(.notLoggedIn, "no cloud") }
        let outcome = await withTaskGroup(of: Result<PairingStatus, TetherError>?.self) { group in
            group.addTask {
                for await event in events {
                    if case .pairing(let status) = event, status.id == token.id, status.state != .pending {
                        recorder.record("pairing_pushed", ["state": .string(status.state.rawValue)])
                        return .success(status)
                    }
                }
                return nil
            }
            group.addTask {
                while !Task.isCancelled {
                    do { try await Task.sleep(for: poll) } catch { return nil }
                    do throws(TetherError) {
                        let status = try await account.withSession { session throws(TetherError) in try await account.api.pairingStatus(session, id: token.id) }
                        if status.state != .pending {
                            recorder.record("pairing_polled", ["state": .string(status.state.rawValue)])
                            return .success(status)
                        }
                    } catch {
                        // The cloud may be unreachable for a moment; the push or a later poll will tell.
                        recorder.record("pairing_poll_failed", ["code": .string(error.code.name)])
                    }
                }
                return nil
            }
            group.addTask {
                do { try await Task.sleep(for: timeout) } catch { return nil }
                return .failure(TetherError(.timeout, "the device did not present its pairing token to the cloud within \(timeout)"))
            }
            defer { group.cancelAll() }
            while let next = await group.next() {
                if let next { return next }
            }
            return .failure(TetherError(.cancelled, "stopped waiting for the pairing"))
        }
        let status = try outcome.get()
        switch status.state {
        case .bound:
            return status
        case .expired:
            throw TetherError(.pairingTokenExpired, "no device presented the pairing token before it expired")
        case .refused, .pending:
            let code = status.errorCode ?? 0
            let message = status.message ?? "the cloud refused the device"
            switch code {
            case 9514: throw TetherError(.pairingTokenExpired, message, cloudCode: code)
            case 9515: throw TetherError(.pairingTokenUsed, message, cloudCode: code)
            default: throw TetherError(.pairingRefused, message, cloudCode: code)
            }
        }
    }
}
