import Testing

@testable import Tether

@Suite("DevicePath: a device's net status and control path, from events, without sockets")
struct DevicePathTests {
    private static func bound(online: Bool) -> CloudPresence {
        CloudPresence(isOnline: online, remark: "", alias: "", role: "owner", productName: "", passcode: "")
    }

    @Test("a device found on the LAN is online; subscribed and logged in it is controllable on the LAN")
    func lanOnly() {
        var path = DevicePath(onLAN: false)
        #expect(path.netStatus == .offline)
        #expect(path.handle([.seenOnLAN]) == .announce(.online))
        #expect(path.handle([.subscribed]) == nil, "subscribing alone changes nothing the app sees")
        #expect(path.handle([.lanSession(up: true)]) == .announce(.controllable))
        #expect(path.controlPath == .lan)
        #expect(path.reachability == .lan)
        #expect(path.handle([.lanSession(up: false)]) == .announce(.online))
        #expect(path.controlPath == nil)
        #expect(path.handle([.goneFromLAN]) == .announce(.offline))
    }

    @Test("failover: the LAN drops while the cloud carries the subscription, and the LAN returns")
    func failoverAndReturn() {
        var path = DevicePath(onLAN: true, cloudLinkUp: true)
        _ = path.handle([.binding(Self.bound(online: true)), .subscribed, .lanSession(up: true), .cloudSubscription(carried: true)])
        #expect(path.controlPath == .lan, "LAN first while both are up")
        #expect(!path.readsThroughCloud)

        #expect(path.handle([.lanSession(up: false)]) == nil, "still controllable: through the cloud")
        #expect(path.controlPath == .cloud)
        #expect(path.readsThroughCloud, "a change of path reads the status again")
        #expect(!path.waitsForLAN, "still on the LAN: the session dials again")

        _ = path.handle([.goneFromLAN])
        #expect(path.waitsForLAN, "gone from the LAN: the session waits for discovery instead of dialling")
        #expect(path.reachability == .cloud)

        _ = path.handle([.seenOnLAN, .lanSession(up: true)])
        #expect(path.controlPath == .lan)
        #expect(!path.waitsForLAN)
    }

    @Test("the cloud path needs its connection up, the device online there, and the user bound")
    func cloudConditions() {
        var path = DevicePath(onLAN: false)
        _ = path.handle([.binding(Self.bound(online: true)), .subscribed, .cloudSubscription(carried: true)])
        #expect(path.controlPath == nil, "the real-time connection is not up")
        #expect(path.netStatus == .online)
        #expect(path.handle([.cloudLink(up: true)]) == .announce(.controllable))
        #expect(path.handle([.cloudPresence(online: false)]) == .announce(.offline), "the device left the cloud, and is not on the LAN")
        #expect(path.handle([.cloudPresence(online: true)]) == .announce(.controllable))
        #expect(path.handle([.cloudLink(up: false)]) == .announce(.online))
        #expect(path.isCarriedByCloud, "a dropped connection resubscribes by itself: the hold stays")
        #expect(path.handle([.cloudLink(up: true)]) == .announce(.controllable))

        #expect(path.handle([.binding(nil)]) == .announce(.offline), "unbound: the cloud carries nothing")
        #expect(!path.isCarriedByCloud)
        _ = path.handle([.cloudSubscription(carried: true)])
        #expect(!path.isCarriedByCloud, "the cloud cannot carry a device the user is not bound to")
    }

    @Test("the list hears of binding changes that leave the net status as it is; nothing when nothing changed")
    func listChanges() {
        var path = DevicePath(onLAN: true)
        #expect(path.handle([.binding(Self.bound(online: false))]) == .publishList)
        #expect(path.handle([.binding(Self.bound(online: false))]) == nil)
        #expect(path.handle([.customInfo(remark: "kitchen", alias: nil)]) == .publishList)
        #expect(path.binding?.remark == "kitchen")
        #expect(path.handle([.customInfo(remark: "kitchen", alias: nil)]) == nil)
        #expect(path.handle([.cloudPresence(online: true)]) == .publishList, "online in the cloud too: .both, same net status")
        #expect(path.reachability == .both)
        #expect(path.handle([.seenOnLAN]) == nil)
    }

    @Test("events applied together announce only where they end up")
    func coalesced() {
        var path = DevicePath(onLAN: true)
        _ = path.handle([.subscribed, .lanSession(up: true)])
        #expect(path.handle([.lanSession(up: false), .lanSession(up: true)]) == nil)
        #expect(path.handle([.unsubscribed]) == .announce(.online))
        #expect(!path.isSubscribed)
        #expect(path.handle([.lanSession(up: true)]) == nil, "an old session's login does not subscribe the device again")
        #expect(path.netStatus == .online)
    }
}
