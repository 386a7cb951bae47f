/// What an Alink device presents at CONNECT: client id, user name and password
/// (`shared/reference/alink-mqtt.md` §2).
public struct AlinkCredentials: Hashable, Sendable {
    /// The full client id, extension fields included (see ``AlinkClientID``).
    public var clientID: String
    /// `{dn}&{pk}` (see ``AlinkDeviceIdentity/username``).
    public var username: String
    /// An HMAC of the device's secret, or a registration token. Never log it.
    public var password: String

    /// Credentials made of these values as given: nothing is checked or signed.
    public init(clientID: String, username: String, password: String) {
        self.clientID = clientID
        self.username = username
        self.password = password
    }

    /// One device, one secret (§2.1): signs `clientId…deviceName…productKey…timestamp…` with the
    /// device secret.
    public static func device(
        _ device: AlinkDeviceIdentity,
        secret: String,
        timestamp: Int64,
        secureMode: Int = 3,
        signMethod: AlinkSignMethod = .hmacsha1,
        serverSideSubscriptions: Bool = true
    ) -> AlinkCredentials {
        let stamp = String(timestamp)
        var fields: [(key: String, value: String)] = [("securemode", String(secureMode)), ("signmethod", signMethod.rawValue)]
        if serverSideSubscriptions { fields.append(("_ss", "1")) }
        fields += [("ext", "1"), ("lan", "Swift"), ("_v", "tether"), ("timestamp", stamp)]
        let clientID = AlinkClientID(prefix: device.clientIDPrefix, fields: fields)
        let password = signMethod.sign(signContent(device: device, clientIDPrefix: clientID.prefix, timestamp: stamp), key: secret)
        return AlinkCredentials(clientID: clientID.description, username: device.username, password: password)
    }

    /// The text a device signs (§2.1): parameter names and values in alphabetical order of the
    /// names, without separators; `timestamp` only when the client id carries one.
    public static func signContent(device: AlinkDeviceIdentity, clientIDPrefix: String, timestamp: String?) -> String {
        var content = "clientId" + clientIDPrefix + "deviceName" + device.deviceName + "productKey" + device.productKey
        if let timestamp { content += "timestamp" + timestamp }
        return content
    }

    /// One product, one secret, dynamic registration over MQTT (§2.3): the product secret signs
    /// `deviceName…productKey…random…` with HMAC-SHA256.
    public static func registration(
        _ device: AlinkDeviceIdentity,
        productSecret: String,
        random: String,
        authType: AlinkRegistrationType = .register,
        secureMode: Int = 2
    ) -> AlinkCredentials {
        let clientID = AlinkClientID(
            prefix: "\(device.deviceName).\(device.productKey)",
            fields: [
                ("random", random), ("authType", authType.rawValue), ("securemode", String(secureMode)), ("signmethod", AlinkSignMethod.hmacsha256.rawValue),
            ]
        )
        let password = AlinkSignMethod.hmacsha256.sign(registrationContent(device: device, random: random), key: productSecret)
        return AlinkCredentials(clientID: clientID.description, username: device.username, password: password)
    }

    /// A whitelist-free device's reconnection with the token it got on `/ext/regnwl` (§2.3):
    /// `{clientId}|authType=connwl,securemode=-2,_ss=1|`, the device's user name, the token as
    /// the password. `clientIDPrefix` is the answer's `clientId`.
    public static func token(_ device: AlinkDeviceIdentity, clientIDPrefix: String, token: String) -> AlinkCredentials {
        let clientID = AlinkClientID(prefix: clientIDPrefix, fields: [("authType", "connwl"), ("securemode", "-2"), ("_ss", "1")])
        return AlinkCredentials(clientID: clientID.description, username: device.username, password: token)
    }

    /// The text dynamic registration signs (§2.3): `deviceName{dn}productKey{pk}random{random}`.
    public static func registrationContent(device: AlinkDeviceIdentity, random: String) -> String {
        "deviceName" + device.deviceName + "productKey" + device.productKey + "random" + random
    }
}

/// How a device registers itself with only its product's secret (§2.3).
public enum AlinkRegistrationType: String, Hashable, Sendable {
    /// The device was created beforehand; the answer on `/ext/register` carries its secret.
    case register
    /// Whitelist-free: the answer on `/ext/regnwl` carries a token to reconnect with.
    case regnwl
}
