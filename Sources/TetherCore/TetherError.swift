/// The one error type of the Tether SDK, its protocol libraries and its device agent.
///
/// Every error carries a ``Code`` whose numeric value and name never change between releases, so
/// an app can switch on it, log it and show its own message. `message` is written for developers:
/// it names what went wrong (the data point, the rule, the address) and never contains secrets
/// such as passcodes, passwords or tokens.
public struct TetherError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong, as a stable code an app can switch on.
    public var code: Code
    /// A bounded, human-readable explanation. Safe to log.
    public var message: String
    /// The data point the error is about, when there is one.
    public var dataPoint: String?
    /// The cloud's own error code (the Open API's `error_code`, such as 9020), when the cloud
    /// refused a request.
    public var cloudCode: Int?

    /// An error with its code, a developer-facing message and, when there is one, the data point
    /// it is about.
    public init(_ code: Code, _ message: String, dataPoint: String? = nil) {
        self.code = code
        self.message = message
        self.dataPoint = dataPoint
    }

    /// An error the cloud answered, with its own code.
    public init(_ code: Code, _ message: String, cloudCode: Int) {
        self.init(code, message)
        self.cloudCode = cloudCode
    }

    public var description: String {
        if let dataPoint {
            return "TetherError(\(code), data point \"\(dataPoint)\"): \(message)"
        }
        if let cloudCode {
            return "TetherError(\(code), cloud \(cloudCode)): \(message)"
        }
        return "TetherError(\(code)): \(message)"
    }

    /// A stable error code: `rawValue` and `name` are part of the public API and never reused.
    ///
    /// Ranges: 1xxx the product model and values, 2xxx wire formats, 3xxx connections and devices,
    /// 4xxx the cloud and the user's session, 6xxx Bluetooth LE (5xxx is MQTT's).
    public typealias Code = ErrorCode<TetherError>
}

extension ErrorCode where Domain == TetherError {
    // 1xxx: product model and data point values
    /// A product model document could not be read or is inconsistent.
    public static var invalidModel: Self { Self(1001, "invalidModel") }
    /// A write or a value names a data point the product does not have.
    public static var unknownDataPoint: Self { Self(1002, "unknownDataPoint") }
    /// A write targets a data point that only the device may change.
    public static var readOnlyDataPoint: Self { Self(1003, "readOnlyDataPoint") }
    /// A value lies outside the data point's range (or its enum labels, or its length).
    public static var valueOutOfRange: Self { Self(1004, "valueOutOfRange") }
    /// A value has the wrong type for its data point (text for a bool, …).
    public static var wrongValueType: Self { Self(1005, "wrongValueType") }
    /// A number is not a multiple of the data point's step (ratio) from its offset.
    public static var notMultipleOfStep: Self { Self(1006, "notMultipleOfStep") }
    /// A data point uses a type that this format cannot carry.
    public static var unsupportedDataType: Self { Self(1007, "unsupportedDataType") }
    /// An argument given to an API is not valid (empty list, bad address, …).
    public static var invalidArgument: Self { Self(1008, "invalidArgument") }
    /// No product model is known for a device's product key, so its data points cannot be read.
    public static var unknownProduct: Self { Self(1009, "unknownProduct") }

    // 2xxx: wire formats
    /// Bytes received from the network do not form a valid frame or payload.
    public static var malformedFrame: Self { Self(2001, "malformedFrame") }
    /// A frame declares a length above the configured maximum.
    public static var frameTooLarge: Self { Self(2002, "frameTooLarge") }
    /// A frame carries a protocol version other than the one spoken.
    public static var unsupportedVersion: Self { Self(2003, "unsupportedVersion") }
    /// A P0 payload does not fit the product's data-point layout.
    public static var malformedPayload: Self { Self(2004, "malformedPayload") }
    /// A frame's check failed (CRC32, HMAC or GCM tag): corrupted, forged, or sealed with another
    /// key (a wrong local key, on Tuya 3.4 and 3.5).
    public static var integrityCheckFailed: Self { Self(2005, "integrityCheckFailed") }
    /// A payload does not decrypt with the key (a wrong local key, on Tuya 3.1 to 3.3).
    public static var decryptionFailed: Self { Self(2006, "decryptionFailed") }
    /// A frame repeats a sequence number the sender already used on the connection (a replay).
    public static var replayedFrame: Self { Self(2007, "replayedFrame") }

    // 3xxx: connections and devices
    /// A connection could not be established (refused, unreachable, no such host).
    public static var connectionFailed: Self { Self(3001, "connectionFailed") }
    /// The peer closed the connection, or the link was lost.
    public static var connectionClosed: Self { Self(3002, "connectionClosed") }
    /// The peer did not answer in time.
    public static var timeout: Self { Self(3003, "timeout") }
    /// The device refused to hand out its passcode: it is not in its binding window.
    public static var notInBindingWindow: Self { Self(3004, "notInBindingWindow") }
    /// The device refused the login (wrong passcode, or it has no room for another client).
    public static var loginFailed: Self { Self(3005, "loginFailed") }
    /// The device is not subscribed or not yet controllable.
    public static var notControllable: Self { Self(3006, "notControllable") }
    /// The device has not been seen on any path.
    public static var deviceOffline: Self { Self(3007, "deviceOffline") }
    /// The device answered with something the request did not expect.
    public static var unexpectedResponse: Self { Self(3008, "unexpectedResponse") }
    /// The operation was cancelled, or the client it belongs to was shut down.
    public static var cancelled: Self { Self(3009, "cancelled") }
    /// A local socket could not be opened (address in use, permission denied).
    public static var bindFailed: Self { Self(3010, "bindFailed") }
    /// A download (of a firmware package) failed: the server refused it, or the connection
    /// ended before the last byte.
    public static var downloadFailed: Self { Self(3011, "downloadFailed") }
    /// What was downloaded is not what was announced: its size or digest differs.
    public static var digestMismatch: Self { Self(3012, "digestMismatch") }
    /// The device logs in only with a grant the cloud signed (outside its binding window), and
    /// none could be obtained: the user is not (or no longer) bound to it, or the cloud cannot
    /// be reached and no earlier grant is still valid.
    public static var lanGrantRequired: Self { Self(3013, "lanGrantRequired") }
    /// The device refused the grant: expired by its clock, signed by a key it does not trust,
    /// or made for another device.
    public static var lanGrantRefused: Self { Self(3014, "lanGrantRefused") }
    /// A Tuya 3.4/3.5 session-key negotiation failed at a named step (the device's proof of the
    /// local key did not match, or its answer was malformed).
    public static var sessionNegotiationFailed: Self { Self(3015, "sessionNegotiationFailed") }
    /// Onboarding: the device could not find the Wi-Fi network it was given.
    public static var wifiNetworkNotFound: Self { Self(3016, "wifiNetworkNotFound") }
    /// Onboarding: the network refused the device's password.
    public static var wifiAuthenticationFailed: Self { Self(3017, "wifiAuthenticationFailed") }
    /// Onboarding: the router would not let the device join (association refused, too many
    /// stations), though the network was there and the password right.
    public static var wifiJoinFailed: Self { Self(3018, "wifiJoinFailed") }
    /// Onboarding: the device joined the network but got no address from its DHCP server.
    public static var noIPAddress: Self { Self(3019, "noIPAddress") }
    /// Onboarding: the device could not list the networks it hears.
    public static var wifiScanFailed: Self { Self(3020, "wifiScanFailed") }
    /// Onboarding: the pairing token's ten minutes were up (or the session that asked for it
    /// ended) when the device presented it.
    public static var pairingTokenExpired: Self { Self(3021, "pairingTokenExpired") }
    /// Onboarding: another device had used the pairing token already.
    public static var pairingTokenUsed: Self { Self(3022, "pairingTokenUsed") }
    /// Onboarding: the cloud refused to bind the device that presented the token (a token for
    /// another product, a device owned by someone else, a disabled device):
    /// ``TetherError/cloudCode`` says which.
    public static var pairingRefused: Self { Self(3023, "pairingRefused") }
    /// Onboarding: the system refused the app the local network (iOS's local-network
    /// permission, or the multicast entitlement smart config needs).
    public static var localNetworkDenied: Self { Self(3024, "localNetworkDenied") }
    /// A D-Bus peer (BlueZ, the bus itself) answered a call with an error; the message carries
    /// the D-Bus error name (`org.bluez.Error.Failed`, …).
    public static var busCallFailed: Self { Self(3025, "busCallFailed") }

    // 4xxx: the cloud and the user's session
    /// The cloud refused the request; ``TetherError/cloudCode`` says why (the Open API's code).
    public static var cloudRefused: Self { Self(4001, "cloudRefused") }
    /// The request needs a logged-in user and there is none, or the session's token is no
    /// longer valid (expired, revoked by a password change).
    public static var notLoggedIn: Self { Self(4002, "notLoggedIn") }
    /// The cloud answered something that is not the Open API's answer (wrong server?).
    public static var unexpectedCloudResponse: Self { Self(4003, "unexpectedCloudResponse") }

    // 6xxx: Bluetooth LE
    /// The machine has no Bluetooth LE controller, or its stack does not support what was asked.
    public static var bluetoothUnsupported: Self { Self(6001, "bluetoothUnsupported") }
    /// The system did not allow this app to use Bluetooth.
    public static var bluetoothUnauthorized: Self { Self(6002, "bluetoothUnauthorized") }
    /// Bluetooth is switched off.
    public static var bluetoothPoweredOff: Self { Self(6003, "bluetoothPoweredOff") }
    /// The named adapter (`hci0`, …) does not exist.
    public static var bluetoothAdapterNotFound: Self { Self(6004, "bluetoothAdapterNotFound") }
    /// No peripheral with that identifier or address has been seen.
    public static var peripheralNotFound: Self { Self(6005, "peripheralNotFound") }
    /// The peripheral has no such GATT service or characteristic.
    public static var gattAttributeNotFound: Self { Self(6006, "gattAttributeNotFound") }
    /// The characteristic does not allow the operation (read, write, notify) by its properties.
    public static var gattOperationNotPermitted: Self { Self(6007, "gattOperationNotPermitted") }
    /// The peripheral refused or failed a GATT operation.
    public static var gattOperationFailed: Self { Self(6008, "gattOperationFailed") }
    /// The link to the peripheral ended; the message says why (by the app, by the device, link
    /// lost, timeout, authentication).
    public static var peripheralDisconnected: Self { Self(6009, "peripheralDisconnected") }

    /// Every code, for documentation and exhaustive tests.
    public static var all: [Self] {
        [
            .invalidModel, .unknownDataPoint, .readOnlyDataPoint, .valueOutOfRange, .wrongValueType,
            .notMultipleOfStep, .unsupportedDataType, .invalidArgument, .unknownProduct,
            .malformedFrame, .frameTooLarge, .unsupportedVersion, .malformedPayload, .integrityCheckFailed, .decryptionFailed, .replayedFrame,
            .connectionFailed, .connectionClosed, .timeout, .notInBindingWindow, .loginFailed,
            .notControllable, .deviceOffline, .unexpectedResponse, .cancelled, .bindFailed,
            .downloadFailed, .digestMismatch, .lanGrantRequired, .lanGrantRefused, .sessionNegotiationFailed,
            .wifiNetworkNotFound, .wifiAuthenticationFailed, .wifiJoinFailed, .noIPAddress, .wifiScanFailed, .pairingTokenExpired, .pairingTokenUsed,
            .pairingRefused, .localNetworkDenied, .busCallFailed,
            .cloudRefused, .notLoggedIn, .unexpectedCloudResponse,
            .bluetoothUnsupported, .bluetoothUnauthorized, .bluetoothPoweredOff, .bluetoothAdapterNotFound, .peripheralNotFound,
            .gattAttributeNotFound, .gattOperationNotPermitted, .gattOperationFailed, .peripheralDisconnected,
        ]
    }
}
