import NIOCore
import Testing
import TetherCore
@testable import TetherMQTT

@Suite("The broker's configuration, password and ACL files")
struct BrokerFileTests {
    static let example = """
        # comment
        listener 1883 127.0.0.1
        listener 8083
        protocol websockets
        listener 8883
        certfile certs/server.pem
        keyfile /etc/tether/server.key
        cafile ca.pem
        require_certificate true

        allow_anonymous false
        password_file passwords
        acl_file /etc/tether/acl
        persistence true
        persistence_location /var/lib/tether
        autosave_interval 60
        max_keepalive 60
        max_packet_size 65536
        receive_maximum 20
        max_inflight_messages 10
        max_queued_messages 500
        queue_qos0_messages true
        max_topic_alias 5
        max_topic_alias_broker 7
        max_qos 1
        retain_available false
        allow_zero_length_clientid false
        refusal_reason unspecified
        threads 1
        log_type all
        """

    @Test("every option is read; relative paths are taken from the file's directory")
    func parse() throws {
        let file = try MQTTBrokerFileConfiguration(parsing: Self.example, name: "broker.conf", directory: "/srv/mqtt")
        #expect(file.listeners.count == 3)
        #expect(file.listeners[0] == MQTTBrokerFileConfiguration.Listener(port: 1883, address: "127.0.0.1"))
        #expect(file.listeners[1].transport == .webSockets && file.listeners[1].address == nil)
        #expect(file.listeners[2].certificateFile == "/srv/mqtt/certs/server.pem")
        #expect(file.listeners[2].keyFile == "/etc/tether/server.key")
        #expect(file.listeners[2].caFile == "/srv/mqtt/ca.pem")
        #expect(file.listeners[2].requireCertificate)
        #expect(file.allowsAnonymous == false)
        #expect(file.passwordFile == "/srv/mqtt/passwords")
        #expect(file.aclFile == "/etc/tether/acl")
        #expect(file.persistencePath == "/var/lib/tether/tether-broker.db")
        #expect(file.autosaveInterval == 60)
        #expect(file.threads == 1)
        let broker = file.broker
        #expect(broker.maximumKeepAlive == 60)
        #expect(broker.maximumPacketSize == 65536)
        #expect(broker.receiveMaximum == 20)
        #expect(broker.maximumInflightMessages == 10)
        #expect(broker.maximumQueuedMessages == 500)
        #expect(broker.queueQoS0Messages)
        #expect(broker.topicAliasMaximum == 5)
        #expect(broker.outgoingTopicAliasMaximum == 7)
        #expect(broker.maximumQoS == .atLeastOnce)
        #expect(!broker.retainAvailable)
        #expect(!broker.allowEmptyClientID)
        #expect(!broker.revealsRefusalReason)
    }

    @Test("an empty file is mosquitto 2's local mode: loopback, anonymous allowed; listeners turn anonymous off unless allowed")
    func defaults() throws {
        let empty = try MQTTBrokerFileConfiguration(parsing: "")
        #expect(empty.listeners.isEmpty && empty.allowsAnonymous)
        #expect(empty.persistencePath == nil)
        let listening = try MQTTBrokerFileConfiguration(parsing: "listener 1883")
        #expect(!listening.allowsAnonymous)
    }

    @Test("mistakes are refused with the file and line", arguments: [
        ("listener", "broker.conf:1:"),
        ("listener 70000", "broker.conf:1:"),
        ("protocol websockets", "belongs to a listener"),
        ("listener 1\nprotocol ftp", "broker.conf:2:"),
        ("max_keepalive 0", "max_keepalive"),
        ("max_keepalive lots", "max_keepalive"),
        ("allow_anonymous yes", "true or false"),
        ("allow_anonymous true\nallow_anonymous false", "twice"),
        ("bridge_protocol_version mqttv311", "not an option"),
        ("per_listener_settings true", "not supported"),
        ("listener 8883\ncertfile a.pem", "both certfile and keyfile"),
        ("listener 8883\nrequire_certificate true", "without certfile"),
        ("listener 8883\ncertfile a\nkeyfile b\nrequire_certificate true", "no cafile"),
        ("persistence_file dir/file", "file name"),
        ("refusal_reason maybe", "refusal_reason"),
        ("password_file a b", "one value"),
    ])
    func mistakes(text: String, expected: String) {
        do {
            _ = try MQTTBrokerFileConfiguration(parsing: text, name: "broker.conf")
            Issue.record("accepted \(text.debugDescription)")
        } catch {
            #expect(error.code == .invalidConfiguration)
            #expect(error.message.contains(expected), "\(error.message)")
        }
    }

    @Test("arbitrary configuration text is read or refused, never a crash (bounded fuzz)")
    func fuzz() {
        var generator = SplitMix64(seed: 20_261_123)
        let words = ["listener", "1883", "protocol", "websockets", "certfile", "a", "#", "\t", " ", "\n", "max_keepalive", "-1", "true", "acl_file", "threads", "0", "persistence", "\u{0}", "é"]
        for _ in 0..<2_000 {
            let text = (0..<Int.random(in: 0..<20, using: &generator)).map { _ in words.randomElement(using: &generator)! }.joined(separator: " ")
            _ = try? MQTTBrokerFileConfiguration(parsing: text)
            _ = try? MQTTPasswordFile(parsing: text)
            _ = try? MQTTAccessControlList(parsing: text)
        }
    }

    // MARK: Passwords

    /// Written by mosquitto_passwd 2.0.11 (-H sha512-pbkdf2, the default, and -H sha512).
    static let mosquittoPasswords = """
        alice:$7$101$J9og56qAiG0+77It$0SFMjzS+Z9FPxrNnOOuPYRMSkWctlkgnl6PkVTD7Qkyqo1/Mh/2XUzID1HUhKjTluDeBkIDKKhaTPRlrsDzJeA==
        carol:$6$jGImyaPrJBDP2zn/$irS1oEw/j5DlLiNvZpHed8CknEXajJfz2MNBwuO4Q+LGdBBZGpQOGljjrkNgTXLmHcEMBnnrbhOtAgXW+hLaHw==
        """

    @Test("hashes mosquitto_passwd wrote verify their passwords and nothing else")
    func mosquittoVectors() throws {
        let file = try MQTTPasswordFile(parsing: Self.mosquittoPasswords)
        #expect(file.verify(user: "alice", password: Array("S3cret!".utf8)))
        #expect(!file.verify(user: "alice", password: Array("S3cret".utf8)))
        #expect(file.verify(user: "carol", password: Array("pw6".utf8)))
        #expect(!file.verify(user: "carol", password: []))
        #expect(!file.verify(user: "mallory", password: Array("S3cret!".utf8)))
    }

    @Test("hashes made here verify, and the file reads back as written")
    func roundTrip() throws {
        var file = MQTTPasswordFile()
        try file.set(user: "dave", password: Array("correct horse".utf8))
        try file.set(user: "erin", password: Array("battery".utf8))
        let again = try MQTTPasswordFile(parsing: file.encoded)
        #expect(again == file)
        #expect(again.verify(user: "dave", password: Array("correct horse".utf8)))
        #expect(!again.verify(user: "dave", password: Array("battery".utf8)))
        #expect(file.encoded.hasPrefix("dave:$7$\(MQTTPasswordFile.iterations)$"))
        #expect(throws: MQTTError.self) { try file.set(user: "a:b", password: [1]) }
    }

    @Test("plain-text, malformed and repeated entries are refused with their line", arguments: [
        ("alice:secret", "not hashed"),
        ("alice:$7$101$!!!$abc", "not $7$"),
        ("alice:$7$0$AAAA$AAAA", "not $7$"),
        ("alice:$6$AAAA$short", "not $7$"),
        ("nocolon", "user:hash"),
        ("\(mosquittoPasswords)\nalice:$6$AAAA$\(String(repeating: "A", count: 86))==", "twice"),
    ])
    func badPasswordFiles(text: String, expected: String) {
        do {
            _ = try MQTTPasswordFile(parsing: text, name: "pw")
            Issue.record("accepted \(text)")
        } catch {
            #expect(error.message.contains(expected), "\(error.message)")
            #expect(error.message.hasPrefix("pw:"))
        }
    }

    @Test("PBKDF2-HMAC-SHA512 against RFC 6070-style vectors (computed with Python's hashlib)")
    func pbkdf2() {
        let key = MQTTPasswordFile.pbkdf2SHA512(password: Array("password".utf8), salt: Array("salt".utf8), iterations: 2, length: 64)
        #expect(key.tetherHex == "e1d9c16aa681708a45f5c7c4e215ceb66e011a2e9f0040713f18aefdb866d53cf76cab2868a39b9f7840edce4fef5a82be67335c77a6068e04112754f27ccf4e")
    }

    // MARK: ACL

    static let acl = """
        topic read public/#
        topic deny public/secret
        user alice
        topic readwrite home/alice/#
        topic deny home/alice/safe
        user bob
        topic read home/alice/#
        pattern write clients/%c/#
        pattern readwrite users/%u/#
        """

    @Test("publishing: write rules of the user and the patterns, deny first")
    func aclPublish() throws {
        let acl = try MQTTAccessControlList(parsing: Self.acl)
        #expect(acl.mayPublish(username: "alice", clientID: "c1", topic: "home/alice/lamp"))
        #expect(!acl.mayPublish(username: "alice", clientID: "c1", topic: "home/alice/safe"))
        #expect(!acl.mayPublish(username: "bob", clientID: "c2", topic: "home/alice/lamp"), "read only")
        #expect(acl.mayPublish(username: "bob", clientID: "c2", topic: "clients/c2/status"))
        #expect(!acl.mayPublish(username: "bob", clientID: "c2", topic: "clients/c1/status"), "another client's id")
        #expect(acl.mayPublish(username: "bob", clientID: "c2", topic: "users/bob/x"))
        #expect(!acl.mayPublish(username: "bob", clientID: "c2", topic: "users/alice/x"))
        #expect(!acl.mayPublish(username: nil, clientID: "c3", topic: "public/news"), "anonymous reads only")
        #expect(!acl.mayPublish(username: nil, clientID: "c3", topic: "users//x"), "no %u without a user name")
        #expect(!acl.mayPublish(username: "mallory", clientID: "c4", topic: "public/news"), "an unknown user has no rules but the patterns")
        // A client id that would widen a pattern substitutes nothing.
        #expect(!acl.mayPublish(username: nil, clientID: "#", topic: "clients/anything/x"))
        #expect(!acl.mayPublish(username: nil, clientID: "a/b", topic: "clients/a/b/x"))
    }

    @Test("subscribing and receiving: read rules intersect the filter, deny rules filter each delivery")
    func aclSubscribe() throws {
        let acl = try MQTTAccessControlList(parsing: Self.acl)
        #expect(acl.maySubscribe(username: nil, clientID: "c", filter: "public/#"))
        #expect(acl.maySubscribe(username: nil, clientID: "c", filter: "#"), "could deliver public/…")
        #expect(!acl.maySubscribe(username: nil, clientID: "c", filter: "public/secret"), "denied outright")
        #expect(!acl.maySubscribe(username: nil, clientID: "c", filter: "private/#"), "nothing readable there")
        #expect(acl.mayReceive(username: nil, clientID: "c", topic: "public/news"))
        #expect(!acl.mayReceive(username: nil, clientID: "c", topic: "public/secret"))
        #expect(!acl.mayReceive(username: nil, clientID: "c", topic: "private/x"))
        #expect(acl.maySubscribe(username: "bob", clientID: "c", filter: "$share/g/home/alice/+"))
        #expect(!acl.maySubscribe(username: "bob", clientID: "c", filter: "$share/g/home/bob/+"))
        #expect(acl.mayReceive(username: "alice", clientID: "c", topic: "users/alice/inbox"))
        #expect(!acl.maySubscribe(username: nil, clientID: "c", filter: "$SYS/#"), "the $ rule: public/# reads no $ topic")
    }

    @Test("filter intersection", arguments: [
        ("a/+", "a/b", true), ("a/#", "a", true), ("a/+", "a", false), ("#", "$SYS/x", false), ("+/x", "$SYS/x", false),
        ("$SYS/#", "$SYS/x", true), ("a/b", "a/c", false), ("+/+", "x/#", true), ("a/b/c", "a/+/c", true), ("a", "a/b", false),
    ])
    func intersection(first: String, second: String, expected: Bool) {
        #expect(MQTTAccessControlList.intersects(first, second) == expected)
        #expect(MQTTAccessControlList.intersects(second, first) == expected)
    }

    @Test("ACL mistakes name their line", arguments: [("topic", "needs a topic"), ("user", "needs a user name"), ("subscribe a/b", "expected user"), ("topic read a/#/b", "not a topic filter")])
    func badACL(text: String, expected: String) {
        do {
            _ = try MQTTAccessControlList(parsing: text, name: "acl")
            Issue.record("accepted \(text)")
        } catch {
            #expect(error.message.hasPrefix("acl:1:"), "\(error.message)")
            #expect(error.message.contains(expected), "\(error.message)")
        }
    }

    // MARK: Persistence file

    @Test("sessions and retained messages round-trip through the persistence file, v5 properties included")
    func persistenceRoundTrip() throws {
        var properties = MQTTProperties()
        properties.list = [.contentType("text/plain"), .userProperty("k", "v"), .messageExpiryInterval(60)]
        let message = MQTTMessage(topic: "a/b", payload: ByteBuffer(string: "hello"), qos: .exactlyOnce, retain: false, properties: properties)
        let retained = MQTTMessage(topic: "r/1", payload: ByteBuffer(bytes: [0, 1, 255]), qos: .atMostOnce, retain: true)
        let session = MQTTStoredSession(
            clientID: "client-1", version: .v5,
            subscriptions: [MQTTTopicSubscription(filter: "a/#", qos: .atLeastOnce, noLocal: true, retainAsPublished: true, retainHandling: .doNotSend)],
            subscriptionIdentifiers: ["a/#": 7], expiryInterval: 3600, pendingMessages: [message]
        )
        let legacy = MQTTStoredSession(clientID: "old", version: .v311, subscriptions: [], expiryInterval: nil, pendingMessages: [])
        let text = MQTTFilePersistence.encode(sessions: [session, legacy], retained: [retained])
        let (sessions, messages) = try MQTTFilePersistence.decode(text, name: "db")
        #expect(Set(sessions.map(\.clientID)) == ["client-1", "old"])
        #expect(sessions.first { $0.clientID == "client-1" } == session)
        #expect(sessions.first { $0.clientID == "old" } == legacy)
        #expect(messages == [retained])
        #expect(throws: MQTTError.self) { try MQTTFilePersistence.decode("{}", name: "db") }
        #expect(throws: MQTTError.self) { try MQTTFilePersistence.decode(#"{"format": "tether-broker", "version": 2}"#, name: "db") }
    }

    @Test("base64 against known encodings, and arbitrary text is decoded or refused")
    func base64() {
        for (bytes, text) in [([UInt8](), ""), ([0x66], "Zg=="), ([0x66, 0x6F], "Zm8="), (Array("foobar".utf8), "Zm9vYmFy")] {
            #expect(Base64.encode(bytes) == text)
            #expect(Base64.decode(text) == bytes)
        }
        for text in ["Z", "Zm9", "Zm=v", "====", "é"] { #expect(Base64.decode(text) == nil, "\(text)") }
    }
}
