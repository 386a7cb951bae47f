import NIOCore
import Testing
import TetherCore
@testable import TetherCloud

/// The HTTP guards' decisions as values, without sockets.
@Suite("HTTP guard logic")
struct HTTPGuardUnitTests {
    @Test("the head ends at the first empty line after content, however the bytes are split")
    func headScanner() {
        let head = Array("\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\nBODY".utf8)
        let end = head.count - 4
        for split in 0...head.count {
            var scanner = RequestHeadScanner(limit: 1024)
            let first = scanner.scan(head[..<split])
            if split >= end {
                #expect(first == .complete(offset: end), "split at \(split)")
            } else {
                #expect(first == .needMore, "split at \(split)")
                #expect(scanner.scan(head[split...]) == .complete(offset: end - split), "split at \(split)")
            }
        }
        var bareLF = RequestHeadScanner(limit: 1024)
        #expect(bareLF.scan(Array("GET / HTTP/1.1\nHost: x\n\n".utf8)) == .complete(offset: 24))
        var blankLines = RequestHeadScanner(limit: 1024)
        #expect(blankLines.scan(Array("\r\n\r\n\n\n".utf8)) == .needMore, "empty lines before the request line end nothing")
        var large = RequestHeadScanner(limit: 16)
        #expect(large.scan(Array("GET / HTTP/1.1\r\nX: y".utf8)) == .tooLarge)
    }

    @Test("arbitrary bytes, split anywhere, give the same outcome as whole (bounded fuzz)")
    func headScannerFuzz() {
        var generator = SplitMix64(seed: 20_261_123)
        let alphabet: [UInt8] = Array("\r\n\r\nGET / ".utf8) + [0, 0xFF]
        for _ in 0..<3_000 {
            let bytes = (0..<Int.random(in: 0..<64, using: &generator)).map { _ in alphabet.randomElement(using: &generator)! }
            var whole = RequestHeadScanner(limit: 48)
            let expected = whole.scan(bytes)
            var pieces = RequestHeadScanner(limit: 48)
            var outcome = RequestHeadScanner.Outcome.needMore
            var consumed = 0
            var index = 0
            while index < bytes.count, outcome == .needMore {
                let end = min(bytes.count, index + Int.random(in: 1...8, using: &generator))
                outcome = pieces.scan(bytes[index..<end])
                if case .complete(let offset) = outcome { outcome = .complete(offset: consumed + offset) }
                consumed += end - index
                index = end
            }
            #expect(outcome == expected, "\(bytes)")
        }
    }

    @Test("deadlines: idle until a head, body until its end, nothing while answering, idle again after the answer")
    func deadlines() {
        var machine = HTTPRequestDeadlines()
        #expect(machine.start() == .arm(.idle, generation: 1))
        #expect(machine.headReceived() == .arm(.body, generation: 2))
        #expect(machine.timerFired(generation: 1) == .none, "a replaced timer's firing is ignored")
        #expect(machine.requestEnded() == .cancel)
        #expect(machine.responseEnded() == .arm(.idle, generation: 3))
        // A response sent before the body ended (an early error) keeps the body deadline.
        #expect(machine.headReceived() == .arm(.body, generation: 4))
        #expect(machine.responseEnded() == .none)
        #expect(machine.timerFired(generation: 4) == .close)
        #expect(machine.headReceived() == .none, "closed")
    }

    @Test("pipelined requests: the next head restarts the body deadline; idle only once every request is answered")
    func pipelined() {
        var machine = HTTPRequestDeadlines()
        _ = machine.start()
        _ = machine.headReceived()
        _ = machine.requestEnded()
        #expect(machine.headReceived() == .arm(.body, generation: 3))
        #expect(machine.requestEnded() == .cancel)
        #expect(machine.responseEnded() == .none)
        #expect(machine.responseEnded() == .arm(.idle, generation: 4))
    }

    @Test("sources: IPv4 as is, IPv6 by its /64, IPv4-mapped as IPv4; X-Forwarded-For only from a trusted proxy")
    func sources() throws {
        func address(_ text: String) throws -> SocketAddress { try SocketAddress(ipAddress: text, port: 1234) }
        #expect(ClientSource(remote: try address("192.0.2.7"), forwardedFor: nil, trustedProxies: []).key == "192.0.2.7")
        #expect(ClientSource(remote: try address("2001:db8:1:2:3:4:5:6"), forwardedFor: nil, trustedProxies: []).key == "2001:db8:1:2::/64")
        #expect(ClientSource(remote: try address("::ffff:198.51.100.1"), forwardedFor: nil, trustedProxies: []).key == "198.51.100.1")
        #expect(ClientSource(remote: try address("192.0.2.7"), forwardedFor: "203.0.113.1", trustedProxies: []).key == "192.0.2.7",
                "an untrusted peer cannot name another client")
        let proxy = try address("10.0.0.1")
        #expect(ClientSource(remote: proxy, forwardedFor: "203.0.113.1, 198.51.100.2", trustedProxies: ["10.0.0.1"]).key == "198.51.100.2",
                "the rightmost hop the proxy saw; what the client wrote before it is not believed")
        #expect(ClientSource(remote: proxy, forwardedFor: "198.51.100.2, 10.0.0.1", trustedProxies: ["10.0.0.1"]).key == "198.51.100.2")
        #expect(ClientSource(remote: proxy, forwardedFor: "garbage", trustedProxies: ["10.0.0.1"]).key == "10.0.0.1")
        #expect(ClientSource(remote: nil, forwardedFor: nil, trustedProxies: []).key == "unknown")
        // A proxy is recognised however its address was written.
        #expect(ClientSource(remote: proxy, forwardedFor: "203.0.113.1", trustedProxies: ["::FFFF:10.0.0.1"]).key == "203.0.113.1")
        let v6Proxy = try address("2001:db8::1")
        #expect(ClientSource(remote: v6Proxy, forwardedFor: "203.0.113.1", trustedProxies: ["2001:DB8:0:0::1"]).key == "203.0.113.1")
    }

    @Test("connection counts per source: refused at the limit, freed on close")
    func counter() {
        let counter = ConnectionCounter(limit: 2)
        #expect(counter.open("a") && counter.open("a"))
        #expect(!counter.open("a"))
        #expect(counter.open("b"))
        counter.close("a")
        #expect(counter.openConnections(from: "a") == 1)
        #expect(counter.open("a"))
        counter.close("a"); counter.close("a"); counter.close("a")
        #expect(counter.openConnections(from: "a") == 0)
    }
}
