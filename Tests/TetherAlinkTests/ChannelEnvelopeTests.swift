import Testing
import TetherAlink
import TetherCore

@Suite("IoT channel envelope")
struct ChannelEnvelopeTests {
    @Test("the seed's envelope: id, system {version, time}, request, params, and extra fields beside params")
    func envelope() throws {
        let request = try ChannelRequest(id: "42", timeMs: 1_795_318_066_000, params: ["iotToken": "t0k"], extraParams: ["method": "thing.topo.add"])
        let object = try #require(request.json.objectValue)
        #expect(object.keys == ["id", "system", "request", "params", "method"])
        #expect(object["id"] == "42")
        #expect(object["system"] == ["version": "1.0", "time": "1795318066000"])
        #expect(object["request"] == .object([:]))
        #expect(object["params"] == ["iotToken": "t0k"])
        #expect(object["method"] == "thing.topo.add")
        #expect(try ChannelRequest(parsing: request.bytes) == request)
    }

    @Test("an extra field may not replace the envelope's own")
    func extraCannotReplaceEnvelope() {
        for field in ChannelRequest.envelopeFields {
            #expect(throws: TetherError.self) { try ChannelRequest(id: "1", timeMs: 0, params: [:], extraParams: [field: "x"]) }
        }
    }

    @Test("malformed envelopes are refused with malformedPayload", arguments: [
        #"[]"#, #"{"id":"1"}"#, #"{"id":"1","system":{}}"#, #"{"id":"1","system":{"time":"soon"}}"#,
        #"{"system":{"time":1}}"#, #"{"id":"","system":{"time":1}}"#, "not json",
    ])
    func malformed(text: String) {
        #expect {
            try ChannelRequest(parsing: Array(text.utf8))
        } throws: { error in
            (error as? TetherError)?.code == .malformedPayload
        }
    }

    @Test("a numeric time is read as milliseconds")
    func numericTime() throws {
        let request = try ChannelRequest(parsing: Array(#"{"id":7,"system":{"version":"1.0","time":1700000000000},"params":{"a":1}}"#.utf8))
        #expect(request.id == "7")
        #expect(request.timeMs == 1_700_000_000_000)
        #expect(request.params == ["a": 1])
        #expect(request.extraParams.isEmpty)
    }

    @Test("downstream messages expose their JSON when they are JSON")
    func messageJSON() {
        #expect(ChannelMessage(topic: "t", payload: Array(#"{"a":[1,2]}"#.utf8)).json == ["a": [1, 2]])
        #expect(ChannelMessage(topic: "t", payload: [0xFF, 0x00]).json == nil)
    }
}
