import Testing
import TetherMQTT

@Suite("A principal's attributes")
struct PrincipalAttributesTests {
    @Test("set, replace and remove by name; the last of two literal entries with one name wins")
    func byName() {
        var attributes: MQTTPrincipalAttributes = ["user": "u-1", "role": "guest", "user": "u-2"]
        #expect(attributes.count == 2)
        #expect(attributes["user"] == "u-2" && attributes["role"] == "guest" && attributes["home"] == nil)

        attributes["role"] = "owner"
        attributes["home"] = "h-9"
        #expect(attributes.count == 3 && attributes["role"] == "owner" && attributes["home"] == "h-9")

        attributes["user"] = nil
        attributes["absent"] = nil
        #expect(attributes.count == 2 && attributes["user"] == nil)
        #expect(Dictionary(uniqueKeysWithValues: attributes.map { ($0.name, $0.value) }) == ["role": "owner", "home": "h-9"])

        attributes["role"] = nil
        attributes["home"] = nil
        #expect(attributes.isEmpty && attributes == MQTTPrincipalAttributes())
    }

    @Test("equality and hashing ignore the order of the entries, not their values")
    func orderInsensitive() {
        let one: MQTTPrincipalAttributes = ["a": "1", "b": "2", "c": "3"]
        var other = MQTTPrincipalAttributes()
        for (name, value) in [("c", "3"), ("a", "1"), ("b", "2")] { other[name] = value }
        #expect(one == other)
        #expect(one.hashValue == other.hashValue)
        #expect(Set([one, other]).count == 1)

        let differentValue: MQTTPrincipalAttributes = ["a": "1", "b": "2", "c": "4"]
        let fewer: MQTTPrincipalAttributes = ["a": "1", "b": "2"]
        let swapped: MQTTPrincipalAttributes = ["a": "2", "b": "1", "c": "3"]
        #expect(one != differentValue && one != fewer && fewer != one && one != swapped)
        #expect(MQTTPrincipal(clientID: "x", attributes: one) != MQTTPrincipal(clientID: "x", attributes: swapped))
    }
}
