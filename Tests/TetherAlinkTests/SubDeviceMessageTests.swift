import Testing
import TetherAlink
import TetherCore

/// A gateway's sub-device requests as the Python device SDK writes them
/// (`gateway_add_subdev_topo`, `gateway_login_subdev`, `gateway_logout_subdev`).
@Suite("Sub-device messages: topology and sessions")
struct SubDeviceMessageTests {
    let sub = try! AlinkDeviceIdentity(productKey: "a1PK000001", deviceName: "sub01")

    static func request(_ text: String) throws -> AlinkRequest { try AlinkRequest(parsing: Array(text.utf8)) }

    @Test("signatures match an independent HMAC (Python's hmac) and verify only with the secret")
    func signature() {
        let signIn = SubDeviceSignIn.signed(sub, secret: "s3cr3t", atMilliseconds: 1_524_448_722_000)
        #expect(signIn.clientID == "a1PK000001.sub01" && signIn.timestamp == "1524448722000")
        #expect(signIn.sign == "b62caa65a485e074393ea69d96340a800599a5d16b0a01737647576a4814b87d")
        #expect(signIn.verify(secret: "s3cr3t") && !signIn.verify(secret: "s3cr3u"))
        let md5 = SubDeviceSignIn.signed(sub, secret: "s3cr3t", atMilliseconds: 1_524_448_722_000, signMethod: .hmacmd5)
        #expect(md5.sign == "90a2fdee697b4f9b549f1f9aa124ff21" && md5.timestampSeconds == 1_524_448_722)
    }

    @Test("linkkit's topo/add, batch_login and batch_logout payloads read")
    func linkkitPayloads() throws {
        // The shapes linkkit 1.2.13 publishes: `signmethod` per entry for topo/add, one
        // request-wide `signMethod` and a `deviceList` for batch_login, a list for logout.
        let add = try Self.request(
            #"{"id": "3", "version": "1.0", "params": [{"productKey": "a1PK000001", "deviceName": "sub01", "clientId": "a1PK000001.sub01", "timestamp": "1524448722000", "signmethod": "hmacSha256", "sign": "b62caa65a485e074393ea69d96340a800599a5d16b0a01737647576a4814b87d"}]}"#
        )
        let added = try SubDeviceMessages.signIns(add)
        #expect(added.count == 1 && added[0].device == sub && added[0].signMethod == .hmacsha256 && added[0].verify(secret: "s3cr3t"))
        let login = try Self.request(
            #"{"id": "4", "version": "1.0", "params": {"signMethod": "hmacSha256", "deviceList": [{"productKey": "a1PK000001", "deviceName": "sub01", "clientId": "a1PK000001.sub01|lan=Python,_v=2.2.1,_ss=1|", "timestamp": "1524448722000", "cleanSession": "false", "sign": "00"}]}}"#
        )
        let signIns = try SubDeviceMessages.signIns(login)
        #expect(signIns.first?.clientID == "a1PK000001.sub01|lan=Python,_v=2.2.1,_ss=1|" && signIns.first?.cleanSession == false)
        #expect(signIns.first?.verify(secret: "s3cr3t") == false)
        let logout = try Self.request(#"{"id": "5", "version": "1.0", "params": [{"productKey": "a1PK000001", "deviceName": "sub01"}]}"#)
        #expect(try SubDeviceMessages.identities(logout) == [sub])
        // What Tether's own gateway client sends reads back the same.
        let ours = SubDeviceSignIn.signed(sub, secret: "s3cr3t", atMilliseconds: 1_524_448_722_000)
        #expect(try SubDeviceMessages.signIns(SubDeviceMessages.topoAdd(id: "1", [ours])) == [ours])
        #expect(try SubDeviceMessages.signIns(SubDeviceMessages.login(id: "1", [ours])) == [ours])
    }

    @Test("malformed sub-device requests are refused as malformedPayload", arguments: [
        #"{"id":"1","params":[]}"#, #"{"id":"1","params":7}"#, #"{"id":"1","params":[1]}"#,
        #"{"id":"1","params":[{"productKey":"a1PK000001"}]}"#,
        #"{"id":"1","params":[{"productKey":"a/b","deviceName":"x","clientId":"c","timestamp":"1","signmethod":"hmacSha256","sign":"00"}]}"#,
        #"{"id":"1","params":[{"productKey":"p","deviceName":"x","clientId":"c","timestamp":"1","signmethod":"rsa","sign":"00"}]}"#,
        #"{"id":"1","params":[{"productKey":"p","deviceName":"x","timestamp":"1","signmethod":"hmacSha256","sign":"00"}]}"#,
        #"{"id":"1","params":{"signMethod":"hmacSha256","deviceList":{}}}"#,
    ])
    func refused(payload: String) throws {
        let request = try Self.request(payload)
        #expect(throws: TetherError.self) { _ = try SubDeviceMessages.signIns(request) }
    }

    @Test("more than 50 devices in one request are refused")
    func tooMany() throws {
        let entry = #"{"productKey":"p","deviceName":"x"}"#
        let request = try Self.request(#"{"id":"1","params":[\#(Array(repeating: entry, count: 51).joined(separator: ","))]}"#)
        #expect(throws: TetherError.self) { _ = try SubDeviceMessages.identities(request) }
    }
}
