import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import Testing
import TetherCore
@testable import TetherCloud

/// What the security review did to the HTTP server: idle and dribbling connections, ambiguous
/// framing, huge headers and many connections from one address. Each is now answered and
/// closed, and nothing is left holding a file descriptor.
@Suite("HTTP server limits", .timeLimit(.minutes(3)))
struct HTTPHardeningTests {
    /// Deadlines long enough that a connection closed within a test's wait was closed for
    /// another reason than a timeout; `timed` sets the one a test is about.
    static func limits(timed: Duration? = nil) -> @Sendable (inout CloudConfiguration) -> Void {
        { configuration in
            configuration.http.headerTimeout = timed ?? .seconds(60)
            configuration.http.bodyTimeout = timed ?? .seconds(60)
            configuration.http.idleTimeout = timed ?? .seconds(60)
            configuration.http.maximumConnectionsPerSource = 4
        }
    }

    @Test("a connection that sends nothing, or dribbles its headers, is answered 408 and closed")
    func slowClients() async throws {
        try await CloudHarness.run(.sqlite, configure: Self.limits(timed: .seconds(2))) { cloud in
            let silent = try await RawHTTPConnection.connect(port: cloud.httpPort)
            let dribbler = try await RawHTTPConnection.connect(port: cloud.httpPort)
            let started = ContinuousClock.now
            // A byte every 200 ms for 30 s: far longer than the deadline.
            try await dribbler.dribble("GET /status HTTP/1.1\r\nHost: x\r\nX-Slow: \(String(repeating: "a", count: 110))\r\n\r\n", interval: .milliseconds(200))
            #expect(try await silent.waitForClose(timeout: .seconds(20)))
            #expect(try await dribbler.waitForClose(timeout: .seconds(20)))
            #expect(ContinuousClock.now - started < .seconds(25), "closed while still dribbling")
            #expect(silent.status == 408)
            #expect(dribbler.status == 408)
        }
    }

    @Test("ambiguous or malformed framing is refused with 400 and the connection closed, first request or later", arguments: [
        "POST /dev/devices HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n",
        "POST /dev/devices HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
        "POST /dev/devices HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!",
        "GET / HTTP/1.1\r\nHost: x\r\nBad Header Name: 1\r\n\r\n",
    ])
    func ambiguousFraming(request: String) async throws {
        try await CloudHarness.run(.sqlite, configure: Self.limits()) { cloud in
            let first = try await RawHTTPConnection.connect(port: cloud.httpPort)
            try await first.send(request)
            #expect(try await first.waitForClose(timeout: .seconds(20)), "answered and closed, long before any deadline")
            #expect(first.status == 400, "\(first.received)")

            // The same after a good request on the same connection.
            let later = try await RawHTTPConnection.connect(port: cloud.httpPort)
            try await later.send("GET /openapi.json HTTP/1.1\r\nHost: x\r\n\r\n" + request)
            #expect(try await later.waitForClose(timeout: .seconds(20)))
            #expect(later.received.hasPrefix("HTTP/1.1 200"))
            #expect(later.received.contains("HTTP/1.1 400"), "\(later.received.suffix(200))")
        }
    }

    @Test("a head over the size limit is refused with 431 at once")
    func hugeHeaders() async throws {
        try await CloudHarness.run(.sqlite, configure: Self.limits()) { cloud in
            let connection = try await RawHTTPConnection.connect(port: cloud.httpPort)
            try? await connection.send("GET /status HTTP/1.1\r\nHost: x\r\nX-Big: " + String(repeating: "b", count: 1 << 20) + "\r\n\r\n")
            #expect(try await connection.waitForClose(timeout: .seconds(20)))
            #expect(connection.status == 431)
        }
    }

    @Test("a body that stops arriving, and a keep-alive connection left idle, are closed")
    func bodyAndIdle() async throws {
        try await CloudHarness.run(.sqlite, configure: { configuration in
            Self.limits()(&configuration)
            // The first head has all the time it needs (a busy machine must not close the
            // connection before the test has sent it); the body and the idle time do not.
            configuration.http.bodyTimeout = .seconds(2)
            configuration.http.idleTimeout = .seconds(2)
        }) { cloud in
            let partial = try await RawHTTPConnection.connect(port: cloud.httpPort)
            try await partial.send("POST /app/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"user")
            #expect(try await partial.waitForClose(timeout: .seconds(20)))

            let idle = try await RawHTTPConnection.connect(port: cloud.httpPort)
            try await idle.send("GET /openapi.json HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(try await idle.waitForClose(timeout: .seconds(20)))
            #expect(idle.received.hasPrefix("HTTP/1.1 200"))
        }
    }

    @Test("one source holds a bounded number of connections; other sources are unaffected; closing frees a place")
    func connectionsPerSource() async throws {
        try await CloudHarness.run(.sqlite, configure: Self.limits()) { cloud in
            // Five connections from one source: whichever the server counts last (connections are
            // set up on several event loops, in no fixed order) is answered 429 and closed.
            var opened: [RawHTTPConnection] = []
            for _ in 0..<5 { opened.append(try await RawHTTPConnection.connect(port: cloud.httpPort, from: "127.0.0.2")) }
            try await GatewayFixtures.waitUntil(timeout: .seconds(20), "one of the five is refused") { opened.contains { $0.isClosed } }
            try await Task.sleep(for: .milliseconds(200))
            let refused = opened.filter(\.isClosed)
            let held = opened.filter { !$0.isClosed }
            #expect(refused.count == 1 && held.count == 4)
            #expect(refused.first?.status == 429)

            let elsewhere = try await RawHTTPConnection.connect(port: cloud.httpPort, from: "127.0.0.3")
            try await elsewhere.send("GET /openapi.json HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            #expect(try await elsewhere.waitForClose(timeout: .seconds(20)))
            #expect(elsewhere.status == 200)

            // Once the server has seen one close, the source has a place again.
            await held[0].close()
            var status: Int?
            let deadline = ContinuousClock.now + .seconds(20)
            while status != 200, ContinuousClock.now < deadline {
                let again = try await RawHTTPConnection.connect(port: cloud.httpPort, from: "127.0.0.2")
                try? await again.send("GET /openapi.json HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                _ = try await again.waitForClose(timeout: .seconds(20))
                status = again.status
                if status != 200 { try await Task.sleep(for: .milliseconds(100)) }
            }
            #expect(status == 200)
            for connection in held { await connection.close() }
        }
    }

    @Test("300 idle connections from several sources are all closed: none pins a descriptor")
    func manyIdle() async throws {
        try await CloudHarness.run(.sqlite, configure: { configuration in
            Self.limits(timed: .seconds(2))(&configuration)
            configuration.http.maximumConnectionsPerSource = 100
        }) { cloud in
            var connections: [RawHTTPConnection] = []
            for index in 0..<300 {
                connections.append(try await RawHTTPConnection.connect(port: cloud.httpPort, from: "127.0.1.\(index % 3 + 1)"))
            }
            for connection in connections {
                #expect(try await connection.waitForClose(timeout: .seconds(30)))
            }
        }
    }

    @Test("every answer carries the security headers, errors included")
    func securityHeaders() async throws {
        try await CloudHarness.run(.sqlite) { cloud in
            for (uri, status) in [("/openapi.json", 200), ("/app/users", 400), ("/nowhere", 404)] {
                let response = try await cloud.client.execute(uri: uri, method: .get)
                #expect(Int(response.status.code) == status, "\(uri)")
                #expect(response.headers[.xContentTypeOptions] == "nosniff", "\(uri)")
                #expect(response.headers[HTTPField.Name("X-Frame-Options")!] == "DENY", "\(uri)")
                #expect(response.headers[.contentSecurityPolicy]?.contains("default-src 'none'") == true, "\(uri)")
                #expect(response.headers[.cacheControl] == "no-store", "\(uri)")
                #expect(response.headers[.strictTransportSecurity] == nil, "HSTS only behind https")
            }
        }
    }

    @Test("/metrics is served on its own listener, not on the API's")
    func metricsListener() async throws {
        try await CloudHarness.run(.sqlite, configure: { $0.metricsAddress = ("127.0.0.1", 0) }) { cloud in
            #expect(try await cloud.call(.get, "/metrics").errorCode == 9999)
            _ = try await cloud.call(.post, "/app/login", json: ["username": "nobody", "password": "Passw0rd!"])
            let address = try #require(await cloud.node.metricsListener?.listeningAddress())
            let connection = try await RawHTTPConnection.connect(port: try #require(address.port))
            try await connection.send("GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            #expect(try await connection.waitForClose(timeout: .seconds(20)))
            #expect(connection.status == 200)
            #expect(connection.received.contains("tether_cloud_logins_total{result=\"failure\"} 1"), "\(connection.received)")
        }
    }
}
