import Testing
import TetherAlink
import TetherCore

@Suite("Custom topic classes (pub, sub, pub/sub)")
struct AlinkTopicClassTests {
    @Test("classes read and write as PATH:OPERATION; bad ones are refused")
    func parsing() throws {
        let classes = try AlinkTopicClasses(encoded: "update:pub,update/error:pub,get:sub,cmd/reset:pub/sub")
        #expect(classes.classes.map(\.operation) == [.publish, .publish, .subscribe, .publishAndSubscribe])
        #expect(try AlinkTopicClasses(encoded: classes.encoded) == classes)
        #expect(AlinkTopicClasses.standard.encoded == "update:pub,update/error:pub,get:sub")
        #expect(try AlinkTopicClasses(encoded: "") == AlinkTopicClasses.none)
        for bad in ["update", "update:push", ":pub", "a//b:pub", "a/+:sub", "a/#:sub", "a b:pub", "/a:pub", "a/:pub", String(repeating: "x", count: 129) + ":pub"] {
            #expect(throws: TetherError.self, "\(bad)") { try AlinkTopicClass(parsing: bad) }
        }
        #expect(throws: TetherError.self) { try AlinkTopicClasses(encoded: "a:pub,a:sub") }
        #expect(throws: TetherError.self) { try AlinkTopicClasses((0...50).map { index throws(TetherError) in try AlinkTopicClass(path: "t\(index)", operation: .publish) }) }
    }

    @Test("what a device may publish, subscribe to and receive")
    func rights() throws {
        let classes = try AlinkTopicClasses(encoded: "update:pub,get:sub,cmd/reset:pub/sub")
        #expect(classes.allowsPublish(path: "update") && classes.allowsPublish(path: "cmd/reset"))
        #expect(!classes.allowsPublish(path: "get") && !classes.allowsPublish(path: "update/x") && !classes.allowsPublish(path: "other"))
        #expect(classes.allowsDelivery(path: "get") && classes.allowsDelivery(path: "cmd/reset") && !classes.allowsDelivery(path: "update"))
        #expect(classes.allowsSubscribe(filter: "get") && classes.allowsSubscribe(filter: "#") && classes.allowsSubscribe(filter: "cmd/+"))
        #expect(!classes.allowsSubscribe(filter: "update") && !classes.allowsSubscribe(filter: "update/#") && !classes.allowsSubscribe(filter: "nothing/+"))
        #expect(!AlinkTopicClasses.none.allowsSubscribe(filter: "#") && !AlinkTopicClasses.none.allowsPublish(path: "update"))
    }
}
