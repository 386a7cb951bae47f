import Testing
import TetherCore

@testable import TetherCloudProtocol

@Suite("Scene bodies: the reference's fields, both request forms, limits, fuzzed")
struct SceneBodyTests {
    @Test("tasks of each type read and write back; the top-level form is a scene of one task")
    func roundTrips() throws {
        let fields = try SceneFieldsBody(
            json: [
                "scene_name": "Evening", "remark": "dim",
                "tasks": [
                    ["task_type": "device", "did": "d1", "attrs": ["WorkMode": 2, "Blob": "AQID"]],
                    ["task_type": "delay", "time": "60"],
                    ["task_type": "group", "group_id": "gr_1", "raw": "0a0b", "binary_coding": "hex"],
                    ["task_type": "device", "did": "d2", "raw": "AQID"],
                ],
            ])
        #expect(
            fields.tasks.map(\.task) == [
                .device(did: "d1", .attrs(["WorkMode": 2, "Blob": "AQID"])), .delay(seconds: 60), .group(id: "gr_1", .raw([10, 11], base64: false)),
                .device(did: "d2", .raw([1, 2, 3], base64: true)),
            ])
        #expect(try SceneFieldsBody(json: fields.json) == fields)
        let single = try SceneFieldsBody(json: ["scene_name": "Off", "task_type": "device", "did": "d1", "attrs": ["LightSwitch": false]])
        #expect(single.tasks.map(\.task) == [.device(did: "d1", .attrs(["LightSwitch": false]))])

        let scene = SceneBody(
            id: "se_1", name: "Evening", remark: "",
            tasks: [SceneTaskBody(.group(id: "gr_1", .attrs(["a": 1])), productKey: "pk", groupName: "Lamps", productName: "Lamp")], createdAt: 1, updatedAt: 2)
        #expect(try SceneBody(json: scene.json) == scene)
        let run = SceneRunBody(
            status: .failed, runID: "ru_1", startedAt: 10, finishedAt: 20,
            steps: [.init(lane: 0, step: 0, did: "d1", at: 10, commandID: 4), .init(lane: 0, step: 2, did: "d2", at: 20, errorCode: 9042, message: "offline")])
        #expect(try SceneRunBody(json: run.json) == run)
        #expect(try SceneRunBody(json: ["status": 3]) == SceneRunBody(status: .notExecuted))
        #expect(try SceneStartBody(json: SceneStartBody(runID: "ru_2").json).runID == "ru_2")
    }

    @Test("bad tasks are refused naming the field")
    func refusals() {
        let cases: [(JSONValue, String)] = [
            (["tasks": [["task_type": "delay", "time": 1]]], "scene_name"),
            (["scene_name": "x"], "tasks"),
            (["scene_name": "x", "tasks": []], "tasks"),
            (["scene_name": "x", "tasks": [["task_type": "delay", "time": 3601]]], "tasks[0].time"),
            (["scene_name": "x", "tasks": [["task_type": "delay", "time": 1], ["task_type": "delay"]]], "tasks[1].time"),
            (["scene_name": "x", "tasks": [["task_type": "device", "attrs": ["a": 1]]]], "tasks[0].did"),
            (["scene_name": "x", "tasks": [["task_type": "device", "did": "d", "attrs": [:]]]], "tasks[0].attrs"),
            (["scene_name": "x", "tasks": [["task_type": "device", "did": "d", "raw": "%%%"]]], "tasks[0].raw"),
            (["scene_name": "x", "tasks": [["task_type": "device", "did": "d", "raw": "AQID", "attrs": ["a": 1]]]], "tasks[0].raw"),
            (["scene_name": "x", "tasks": [["task_type": "group", "attrs": ["a": 1]]]], "tasks[0].group_id"),
            (["scene_name": "x", "tasks": [["task_type": "light"]]], "tasks[0].task_type"),
            (["scene_name": "x", "tasks": .array(Array(repeating: ["task_type": "delay", "time": 1], count: 51))], "tasks"),
            (["scene_name": .string(String(repeating: "s", count: 65)), "tasks": [["task_type": "delay", "time": 1]]], "scene_name"),
        ]
        for (json, field) in cases {
            do throws(CloudBodyError) {
                _ = try SceneFieldsBody(json: json)
                Issue.record("read: \(json.serialized())")
            } catch {
                #expect(error.field == field, "\(json.serialized())")
            }
        }
    }

    @Test("arbitrary scene bodies are read or refused, never a crash; what is read writes back the same (bounded fuzz)")
    func fuzz() {
        var generator = SplitMix64(seed: 20_261_124)
        let keys = ["task_type", "time", "did", "group_id", "attrs", "raw", "binary_coding", "product_key", "dev_alias"]
        let values: [JSONValue] = [
            "delay", "device", "group", "", "d1", "gr_1", "AQID", "0102", "zz", "hex", "base64", "60", .int(0), .int(1), .int(3600), .int(3601),
            .int(Int64.max), .double(1.5), .bool(true), .null, ["a": 1], [:], .array([]),
        ]
        for _ in 0..<3_000 {
            var tasks: [JSONValue] = []
            for _ in 0..<Int.random(in: 0...3, using: &generator) {
                var task: JSONObject = [:]
                for _ in 0..<Int.random(in: 0...5, using: &generator) {
                    task[keys.randomElement(using: &generator)!] = values.randomElement(using: &generator)!
                }
                tasks.append(.object(task))
            }
            let body: JSONValue = ["scene_name": "s", "tasks": .array(tasks)]
            guard let fields = try? SceneFieldsBody(json: body) else { continue }
            #expect((try? SceneFieldsBody(json: fields.json)) == fields, "\(body.serialized())")
        }
    }
}
