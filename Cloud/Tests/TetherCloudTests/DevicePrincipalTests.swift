import TetherAlink
import TetherMQTT
import Testing

@testable import TetherCloud

@Suite("The gateway's device principal")
struct DevicePrincipalTests {
    let device = try! AlinkDeviceIdentity(productKey: "a1Lamp", deviceName: "lamp-kitchen.1@home:2")

    @Test("a device connection round trips; the device is the session key and defaults are left out")
    func deviceConnection() throws {
        let plain = DevicePrincipal(did: "did-1", device: device)
        #expect(plain.principal.clientID == "a1Lamp&lamp-kitchen.1@home:2")
        #expect(plain.principal.username == nil)
        #expect(plain.principal.attributes.count == 1)
        #expect(DevicePrincipal(plain.principal) == plain)

        let full = DevicePrincipal(did: "did-2", device: device, serverSideSubscriptions: true, userTopics: "get:sub,update:pub")
        #expect(full.principal.attributes.count == 3)
        let read = try #require(DevicePrincipal(full.principal))
        #expect(read == full && read.serverSideSubscriptions && read.userTopics == "get:sub,update:pub" && read.registration == nil)
    }

    @Test("a registration round trips, a random part holding / and & included", arguments: ["r4nd0m", "a/b&c/"])
    func registration(random: String) throws {
        var registering = DevicePrincipal(did: "did-3", device: device)
        registering.registration = DevicePrincipal.Registration(type: .regnwl, random: random)
        #expect(registering.principal.clientID == "$register/a1Lamp&lamp-kitchen.1@home:2/\(random)")
        let read = try #require(DevicePrincipal(registering.principal))
        #expect(read == registering && read.device == device && read.registration?.random == random)
    }

    @Test("a principal the gateway did not make reads as none")
    func foreign() {
        let foreign: [MQTTPrincipal] = [
            MQTTPrincipal(clientID: "a1Lamp&lamp"),  // no did
            MQTTPrincipal(clientID: "$internal", attributes: ["did": "d"]),  // no device
            MQTTPrincipal(clientID: "a1Lamp&la/mp", attributes: ["did": "d"]),  // not a device name
            MQTTPrincipal(clientID: "a1Lamp&lamp", attributes: ["did": "d", "register": "other"]),  // unknown registration
            MQTTPrincipal(clientID: "a1Lamp&lamp", attributes: ["did": "d", "register": "register"]),  // no $register/ key
            MQTTPrincipal(clientID: "$register/a1Lamp&lamp", attributes: ["did": "d", "register": "register"]),  // no random part
        ]
        for principal in foreign { #expect(DevicePrincipal(principal) == nil, "\(principal.clientID)") }
    }
}
