import Testing
import TetherAlink
import TetherCore
import TetherTestSupport

@Suite("Device shadow: messages, topics and Aliyun's version rules")
struct ShadowTests {
    static func request(_ text: String) throws(ShadowRefusal) -> ShadowRequest { try ShadowRequest(parsing: Array(text.utf8)) }

    static func refusal(_ text: String) -> ShadowRefusal.Code? {
        do {
            _ = try request(text)
            return nil
        } catch {
            return error.code
        }
    }

    @Test("the requests linkkit sends parse; each malformed one is refused with Aliyun's code")
    func requests() throws {
        #expect(try Self.request(#"{"method":"get"}"#) == .get)
        let update = try Self.request(#"{"state":{"reported":{"color":"red","size":"null"}},"method":"update","version":3}"#)
        #expect(update == .update(ShadowUpdate(reported: .merged(["color": "red", "size": "null"]), version: 3)))
        let clearing = try Self.request(#"{"method":"update","state":{"desired":"null"},"version":4}"#)
        #expect(clearing == .update(ShadowUpdate(desired: .cleared, version: 4)))
        let deleting = try Self.request(#"{"method":"delete","state":{"reported":{"color":"null","size":1}},"version":5}"#)
        #expect(deleting == .delete(ShadowUpdate(reported: .merged(["color": .null, "size": .null]), version: 5)))

        #expect(Self.refusal("not json") == .malformed)
        #expect(Self.refusal("[1]") == .malformed)
        #expect(Self.refusal(#"{"state":{}}"#) == .missingMethod)
        #expect(Self.refusal(#"{"method":"put","state":{}}"#) == .invalidMethod)
        #expect(Self.refusal(#"{"method":"update","version":1}"#) == .missingState)
        #expect(Self.refusal(#"{"method":"update","state":{"reported":{"a":1}},"version":"1"}"#) == .versionNotNumber)
        #expect(Self.refusal(#"{"method":"update","state":{"reported":{"a":1}}}"#) == .versionNotNumber)
        #expect(Self.refusal(#"{"method":"update","state":{},"version":1}"#) == .missingReported)
        #expect(Self.refusal(#"{"method":"update","state":{"reported":{}},"version":1}"#) == .emptyReported)
        #expect(Self.refusal(#"{"method":"update","state":{"reported":7},"version":1}"#) == .malformed)
        let many = (0...DeviceShadow.maximumAttributes).map { "\"k\($0)\":1" }.joined(separator: ",")
        #expect(Self.refusal(#"{"method":"update","state":{"reported":{\#(many)}},"version":1}"#) == .tooManyAttributes)
        let huge = String(repeating: " ", count: DeviceShadow.maximumDocumentSize * 2)
        #expect(Self.refusal(#"{"method":"get"}"# + huge) == .malformed)
    }

    @Test("a write must raise the version; a device's -1 resets; null removes; metadata follows")
    func versionRules() throws {
        let first = try DeviceShadow().applying(ShadowUpdate(reported: .merged(["color": "red", "size": 2]), version: 1), by: .device, atSeconds: 100)
        #expect(first.version == 1 && first.reported == ["color": "red", "size": 2] && first.timestamp == 100)
        #expect(first.reportedTimestamps == ["color": 100, "size": 100])

        for stale: Int64 in [0, 1] {
            #expect(throws: ShadowRefusal.self) { try first.applying(ShadowUpdate(reported: .merged(["color": "blue"]), version: stale), by: .device, atSeconds: 101) }
            do {
                _ = try first.applying(ShadowUpdate(desired: .merged(["color": "blue"]), version: stale), by: .app, atSeconds: 101)
                Issue.record("a stale version was accepted")
            } catch {
                #expect(error.code == .versionConflict)
            }
        }
        let desired = try first.applying(ShadowUpdate(desired: .merged(["color": "blue"]), version: 5), by: .app, atSeconds: 102)
        #expect(desired.version == 5 && desired.desired == ["color": "blue"] && desired.reported == first.reported)
        #expect(desired.desiredTimestamps == ["color": 102] && desired.reportedTimestamps == ["color": 100, "size": 100])

        // The device applies it: reports the new value, removes a key, empties desired.
        let applied = try desired.applying(
            ShadowUpdate(reported: .merged(["color": "blue", "size": "null"]), desired: .cleared, version: 6), by: .device, atSeconds: 103)
        #expect(applied.reported == ["color": "blue"] && applied.desired.isEmpty && applied.version == 6)
        #expect(applied.reportedTimestamps == ["color": 103] && applied.desiredTimestamps.isEmpty)

        // Only a device resets with -1; an app's -1 is just stale.
        let reset = try applied.applying(ShadowUpdate(reported: .merged(["fresh": true]), version: -1), by: .device, atSeconds: 104)
        #expect(reset.version == 0 && reset.reported == ["fresh": true] && reset.desired.isEmpty)
        #expect(throws: ShadowRefusal.self) { try applied.applying(ShadowUpdate(desired: .cleared, version: -1), by: .app, atSeconds: 104) }

        // Limits hold after merging, not only per message.
        var full = DeviceShadow(version: 1)
        for index in 0..<DeviceShadow.maximumAttributes { full.reported["k\(index)"] = 1 }
        do {
            _ = try full.applying(ShadowUpdate(reported: .merged(["one-more": 1]), version: 2), by: .device, atSeconds: 1)
            Issue.record("129 attributes were accepted")
        } catch {
            #expect(error.code == .tooManyAttributes)
        }
        let big = JSONValue.string(String(repeating: "x", count: DeviceShadow.maximumDocumentSize))
        do {
            _ = try full.applying(ShadowUpdate(reported: .merged(["k0": big]), version: 2), by: .device, atSeconds: 1)
            Issue.record("a document over 16 KiB was accepted")
        } catch {
            #expect(error.code == .malformed)
        }
    }

    @Test("replies as Aliyun writes them, read back by the device side")
    func replies() throws {
        let shadow = DeviceShadow(
            reported: ["color": "red"], desired: ["color": "blue"], reportedTimestamps: ["color": 10], desiredTimestamps: ["color": 11], version: 4,
            timestamp: 11)
        #expect(
            ShadowReply.accepted(version: 4).json(atSeconds: 12).serialized()
                == #"{"method":"reply","payload":{"status":"success","version":4},"timestamp":12}"#)
        #expect(
            ShadowReply.refused(ShadowRefusal(.versionConflict, "stale")).json(atSeconds: 12).serialized()
                == #"{"method":"reply","payload":{"status":"error","content":{"errorcode":"409","errormessage":"stale"}},"timestamp":12}"#)
        #expect(
            ShadowReply.control(shadow).json(atSeconds: 11).serialized()
                == #"{"method":"control","payload":{"status":"success","state":{"reported":{"color":"red"},"desired":{"color":"blue"}},"metadata":{"reported":{"color":{"timestamp":10}},"desired":{"color":{"timestamp":11}}}},"version":4,"timestamp":11}"#
        )
        for reply in [ShadowReply.accepted(version: 4), .refused(ShadowRefusal(.emptyShadow, "nothing")), .document(shadow), .control(shadow)] {
            #expect(try ShadowReply(parsing: reply.bytes(atSeconds: 11)) == reply)
        }
        #expect(DeviceShadow(json: shadow.json) == shadow)
        #expect(throws: TetherError.self) { try ShadowReply(parsing: Array(#"{"method":"reply","payload":{"status":"maybe"}}"#.utf8)) }
    }

    @Test("shadow topics name the device and round-trip; other shapes are not shadow topics")
    func topics() throws {
        let device = try AlinkDeviceIdentity(productKey: "a1PK000001", deviceName: "dev01")
        #expect(AlinkDeviceTopic(device: device, topic: .shadowUpdate).name == "/shadow/update/a1PK000001/dev01")
        #expect(AlinkDeviceTopic(device: device, topic: .shadowGet).name == "/shadow/get/a1PK000001/dev01")
        #expect(AlinkDeviceTopic(parsing: "/shadow/update/a1PK000001/dev01") == AlinkDeviceTopic(device: device, topic: .shadowUpdate))
        #expect(AlinkDeviceTopic(parsing: "/shadow/get/a1PK000001/dev01")?.topic == .shadowGet)
        for other in ["/shadow/delete/a1PK000001/dev01", "/shadow/update/a1PK000001", "/shadow/update/a1PK000001/dev01/x", "/ext/rrpc/1/shadow/update/a1PK000001/dev01"] {
            #expect(AlinkDeviceTopic(parsing: other) == nil, "\(other)")
        }
    }
}
