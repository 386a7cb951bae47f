import TetherAlink
import TetherMQTT

/// What the gateway knows of an authenticated device connection, and how it keeps it in the
/// broker's principal. A principal lives as long as its connection and a node holds tens of
/// thousands, so nothing is kept twice: the device is the session key `pk&dn`
/// (`$register/pk&dn/random` while it registers), its user name is not kept (it repeats the
/// device), and an attribute holding its default is left out.
struct DevicePrincipal: Sendable, Equatable {
    var did: String
    var device: AlinkDeviceIdentity
    /// The device asked for its subscriptions to be made for it (`_ss=1`).
    var serverSideSubscriptions = false
    /// The product's topic classes as they were when the device connected
    /// (``AlinkTopicClasses/encoded``); empty for none.
    var userTopics = ""
    /// Set on a registration connection: the device's secret or token is sent, then it leaves.
    var registration: Registration?

    struct Registration: Sendable, Equatable {
        var type: AlinkRegistrationType
        /// The client id's `random`, which keeps two registrations of a device apart.
        var random: String
    }

    private enum Name {
        static let did = "did"
        static let serverSideSubscriptions = "ss"
        static let userTopics = "ut"
        static let registration = "register"
    }
    private static let registrationPrefix = "$register/"

    init(did: String, device: AlinkDeviceIdentity, serverSideSubscriptions: Bool = false, userTopics: String = "") {
        self.did = did
        self.device = device
        self.serverSideSubscriptions = serverSideSubscriptions
        self.userTopics = userTopics
    }

    /// Reads a principal the gateway's authentication made; nil for any other.
    init?(_ principal: MQTTPrincipal) {
        guard let did = principal.attributes[Name.did] else { return nil }
        var key = Substring(principal.clientID)
        if let type = principal.attributes[Name.registration] {
            // Device names cannot hold "/", a client id's random part can.
            guard let type = AlinkRegistrationType(rawValue: type), key.hasPrefix(Self.registrationPrefix) else { return nil }
            key = key.dropFirst(Self.registrationPrefix.count)
            guard let slash = key.firstIndex(of: "/") else { return nil }
            registration = Registration(type: type, random: String(key[key.index(after: slash)...]))
            key = key[..<slash]
        }
        guard let separator = key.firstIndex(of: "&"),
            let device = try? AlinkDeviceIdentity(productKey: String(key[..<separator]), deviceName: String(key[key.index(after: separator)...]))
        else { return nil }
        self.did = did
        self.device = device
        serverSideSubscriptions = principal.attributes[Name.serverSideSubscriptions] != nil
        userTopics = principal.attributes[Name.userTopics] ?? ""
    }

    var principal: MQTTPrincipal {
        var attributes = MQTTPrincipalAttributes()
        attributes.reserveCapacity(1 + (serverSideSubscriptions ? 1 : 0) + (userTopics.isEmpty ? 0 : 1) + (registration == nil ? 0 : 1))
        attributes[Name.did] = did
        if serverSideSubscriptions { attributes[Name.serverSideSubscriptions] = "1" }
        if !userTopics.isEmpty { attributes[Name.userTopics] = userTopics }
        var clientID = device.clientIDPrefix
        if let registration {
            attributes[Name.registration] = registration.type.rawValue
            clientID = Self.registrationPrefix + clientID + "/" + registration.random
        }
        return MQTTPrincipal(clientID: clientID, attributes: attributes)
    }

}
