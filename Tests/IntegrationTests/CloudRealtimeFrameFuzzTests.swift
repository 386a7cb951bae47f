import Testing
import TetherCore
@testable import TetherCloudClient

/// What the cloud's WebSocket sends is untrusted: arbitrary frames never crash the real-time
/// client, and it still reads good frames afterwards.
@Suite("Cloud real-time frames: bounded fuzz", .timeLimit(.minutes(1)))
struct CloudRealtimeFrameFuzzTests {
    @Test("arbitrary text and mangled M2M frames are ignored; a good frame after them still gets through")
    func fuzz() async throws {
        let realtime = CloudRealtime(
            configuration: .init(endpoint: CloudEndpoint(host: "127.0.0.1", port: 9), appID: "fuzz"),
            session: { CloudSession(uid: "u", token: "t", expireAt: 0) }
        )
        var events = realtime.events().makeAsyncIterator()
        var generator = SplitMix64(seed: 0xF00D)
        let commands = ["login_res", "subscribe_res", "s2c_ack", "s2c_noti", "s2c_invalid_msg", "s2c_online_status", "s2c_binding_changed", "s2c_raw", "s2c_event", "s2c_user_topic", "pong", "x"]
        let values: [JSONValue] = [.null, .bool(true), .int(-1), .int(Int64.max), .int(300), .double(1e308), .string(""), .string("did1"), .array([.int(256), .int(-3), .string("a")]), .object([:])]
        let fields = ["did", "attrs", "raw", "online", "bind", "error_code", "msg", "event", "type", "values", "success", "topic", "payload_base64"]
        for round in 0..<5_000 {
            if round % 2 == 0 {
                let length = Int.random(in: 0...60, using: &generator)
                let alphabet = Array("{}[]\":,0123456789.-eE truefalsnul\\u")
                realtime.receive(String((0..<length).map { _ in alphabet.randomElement(using: &generator)! }))
            } else {
                var data = JSONObject()
                for _ in 0..<Int.random(in: 0...4, using: &generator) {
                    data[fields.randomElement(using: &generator)!] = values.randomElement(using: &generator)!
                }
                var frame: JSONObject = ["cmd": .string(commands.randomElement(using: &generator)!), "data": .object(data)]
                if Bool.random(using: &generator) { frame["res_sn"] = values.randomElement(using: &generator)! }
                realtime.receive(JSONValue.object(frame).serialized())
            }
        }
        #expect(!realtime.isConnected)
        // Binding changes are passed on for any did: the first event after the fuzz that is one
        // must be exactly this.
        realtime.receive(#"{"cmd":"s2c_binding_changed","data":{"did":"after-fuzz","bind":false}}"#)
        while let event = await events.next() {
            if case .bindingChanged(let did, let bound) = event, did == "after-fuzz" {
                #expect(!bound)
                break
            }
        }
    }
}
