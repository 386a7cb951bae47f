import Foundation
import HTTPTypes
import Testing
import TetherCore
@testable import TetherCloud

/// Names that look the same are one name; text with control characters is refused.
@Suite("Identifiers")
struct IdentifierTests {
    @Test("a user name in full-width letters, or with a decomposed accent, is the same account as its plain form", arguments: TestEngine.allCases)
    func normalization(engine: TestEngine) async throws {
        try await CloudHarness.run(engine) { cloud in
            let plain = try await cloud.register("jose\u{301}")  // e + combining acute: "josé"
            for lookalike in ["jos\u{E9}", "ｊｏｓé"] {
                let twin = try await cloud.call(.post, "/app/users", json: ["username": .string(lookalike), "password": "Passw0rd!"])
                #expect(twin.errorCode == 9019, "\(lookalike) is the same name: \(twin.text)")
                let login = try await cloud.call(.post, "/app/login", json: ["username": .string(lookalike), "password": "Passw0rd!"])
                #expect(try login.session().uid == plain.uid, "\(lookalike) logs in as the same user")
            }
            // Letters of another script that look alike are another name (documented).
            let cyrillic = try await cloud.call(.post, "/app/users", json: ["username": "jos\u{435}", "password": "Passw0rd!"])
            #expect(cyrillic.status == .created)
        }
    }

    @Test("control characters and bidirectional overrides are refused in names, remarks, aliases and profile fields", arguments: [TestEngine.sqlite])
    func controlCharacters(engine: TestEngine) async throws {
        try await CloudHarness.run(engine) { cloud in
            for name in ["nul\u{0}name", "bell\u{7}", "line\nbreak", "evil\u{202E}gnp.exe", "tab\tname"] {
                let answer = try await cloud.call(.post, "/app/users", json: ["username": .string(name), "password": "Passw0rd!"])
                #expect(answer.errorCode == 9015, "\(name.debugDescription): \(answer.text)")
            }
            let session = try await cloud.register("plain")
            for (field, value) in [("remark", "a\u{0}b"), ("name", "x\u{1B}[31m"), ("address", "\u{2066}hidden")] {
                let answer = try await cloud.call(.put, "/app/users", token: session.token, json: [field: .string(value)])
                #expect(answer.errorCode == 9015, "\(field)")
            }
            #expect(try await cloud.call(.put, "/app/users", token: session.token, json: ["name": "Zoë 👩‍💻"]).status == .ok, "emoji sequences (ZWJ) are fine")
            let device = try await DeviceFixtures.registeredDevice(cloud)
            #expect(try await DeviceFixtures.bind(cloud, device, token: session.token)["success"] == [.string(device.did)])
            for body in [["dev_alias": "lamp\u{0}"], ["remark": "r\u{202D}"], ["dev_label": ["ok", "bad\n"]]] as [JSONObject] {
                let answer = try await cloud.call(.put, "/app/bindings/\(device.did)", token: session.token, json: .object(body))
                #expect(answer.errorCode == 9015, "\(body)")
            }
            let binding = try await cloud.call(.post, "/app/bindings", token: session.token, json: ["devices": [["did": .string(device.did), "passcode": .string(device.passcode), "dev_alias": "x\u{0}"]]])
            #expect(binding.errorCode == 9015)
        }
    }
}
