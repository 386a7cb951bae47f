public import Logging
public import NIOCore
public import TetherCore
public import TetherMQTT

/// One product, one secret (`shared/reference/alink-mqtt.md` §2.3): a device that knows only
/// its product's secret and its own name connects once, signed with the product secret, and
/// gets its own credentials: a device secret (`register`, a device created beforehand) or a
/// token (`regnwl`, whitelist-free). Registration sends secrets: over TLS, unless the cloud
/// was told otherwise for development.
public enum AlinkDynamicRegistration {
    /// What the cloud answered.
    public enum Answer: Sendable, Hashable {
        /// `/ext/register`: the device's own secret, to sign its connections with.
        case deviceSecret(String)
        /// `/ext/regnwl`: the token to connect with (`AlinkDeviceConfiguration(host:port:device:token:)`).
        case token(AlinkDeviceToken)
    }

    /// Registers `device` and returns its credentials.
    ///
    /// - Throws: `loginFailed` when the cloud refuses the registration (with the CONNACK reason in
    ///   the message); `timeout` without an answer within `timeout`; `connectionFailed`;
    ///   `malformedPayload` for an answer without the expected fields.
    public static func register(
        host: String, port: Int = 8883, device: AlinkDeviceIdentity, productSecret: String, type: AlinkRegistrationType,
        transport: MQTTTransport = .tcp, timeout: Duration = .seconds(10), logger: Logger = Logger(label: "tether.alink.registration"),
        group: (any EventLoopGroup)? = nil
    ) async throws(TetherError) -> Answer {
        let random = String((0..<15).map { _ in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789".randomElement()! })
        let credentials = AlinkCredentials.registration(device, productSecret: productSecret, random: random, authType: type)
        let configuration = MQTTClientConfiguration(
            host: host, port: port, version: .v311, clientID: credentials.clientID, username: credentials.username,
            password: Array(credentials.password.utf8), transport: transport, reconnect: nil)
        let topic = type == .register ? "/ext/register" : "/ext/regnwl"
        let payload: ByteBuffer
        do {
            payload = try await MQTTClient.withClient(configuration: configuration, logger: logger, group: group) { client in
                // Listening before anything else: the cloud answers right after the connection.
                let messages = client.messages()
                let answer = AsyncPromise<ByteBuffer, TetherError>()
                return try await withThrowingTaskGroup(of: Void.self) { tasks in
                    tasks.addTask {
                        for await message in messages where message.topic == topic {
                            answer.resolve(.success(message.payload))
                            return
                        }
                    }
                    defer { tasks.cancelAll() }
                    return try await answer.result(within: timeout) {
                        .failure(TetherError(.timeout, "no answer on \(topic) within \(timeout)"))
                    }.get()
                }
            }
        } catch let error as TetherError {
            throw error
        } catch let error as MQTTError {
            let refused = error.code == .connectionRefused
            throw TetherError(refused ? .loginFailed : .connectionFailed, "the registration of \(device) failed: \(error)")
        } catch {
            throw TetherError(.connectionFailed, "the registration of \(device) failed: \(error)")
        }
        return try answer(payload, type: type)
    }

    /// Reads the answer on `/ext/register` or `/ext/regnwl`.
    public static func answer(_ payload: ByteBuffer, type: AlinkRegistrationType) throws(TetherError) -> Answer {
        let object = try AlinkLimits.object(payload.readableBytesView, maximumSize: 4096)
        switch type {
        case .register:
            guard case .string(let secret)? = object["deviceSecret"], !secret.isEmpty else {
                throw TetherError(.malformedPayload, "the /ext/register answer has no deviceSecret")
            }
            return .deviceSecret(secret)
        case .regnwl:
            guard case .string(let clientID)? = object["clientId"], !clientID.isEmpty, !clientID.contains("|"),
                case .string(let token)? = object["deviceToken"], !token.isEmpty
            else {
                throw TetherError(.malformedPayload, "the /ext/regnwl answer needs clientId and deviceToken")
            }
            return .token(AlinkDeviceToken(clientIDPrefix: clientID, token: token))
        }
    }
}
