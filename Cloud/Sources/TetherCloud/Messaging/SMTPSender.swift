import Foundation
public import Logging
import NIOCore
import NIOPosix
import NIOSSL

/// Sends e-mail through an SMTP server (RFC 5321): EHLO, STARTTLS when configured or offered,
/// AUTH PLAIN when credentials are given, one message per connection. Text messages (SMS) are
/// not e-mail and are refused.
public struct SMTPSender: MessageSender {
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    let configuration: SMTPConfiguration
    let logger: Logger

    public init(configuration: SMTPConfiguration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
    }

    public func send(_ message: OutgoingMessage) async throws {
        guard message.channel == .email else { throw Failure(description: "SMTP carries e-mail only") }
        guard !message.recipient.unicodeScalars.contains(where: { "\r\n<>".unicodeScalars.contains($0) }) else {
            throw Failure(description: "the recipient is not an address")
        }
        let timeout = configuration.timeout
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await deliver(message) }
            group.addTask {
                try await Task.sleep(for: timeout)
                throw Failure(description: "the SMTP server did not finish within \(timeout)")
            }
            try await group.next()
            group.cancelAll()
        }
    }

    private func makeTLSContext() throws -> NIOSSLContext {
        var tls = TLSConfiguration.makeClientConfiguration()
        if let file = configuration.trustRootsFile {
            tls.additionalTrustRoots = [.file(file)]
        }
        return try NIOSSLContext(configuration: tls)
    }

    private func deliver(_ message: OutgoingMessage) async throws {
        let implicitTLS = configuration.security == .implicitTLS
        let tlsContext = try makeTLSContext()
        // SNI cannot carry an address; without a name NIOSSL checks the peer's address instead.
        let host: String? = (try? SocketAddress(ipAddress: configuration.host, port: 0)) == nil ? configuration.host : nil
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connectTimeout(.seconds(10))
            .connect(host: configuration.host, port: configuration.port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    if implicitTLS {
                        try channel.pipeline.syncOperations.addHandler(NIOSSLClientHandler(context: tlsContext, serverHostname: host))
                    }
                    try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(SMTPReplyDecoder()))
                    return try NIOAsyncChannel<SMTPReply, ByteBuffer>(wrappingChannelSynchronously: channel)
                }
            }
        try await channel.executeThenClose { inbound, outbound in
            var replies = inbound.makeAsyncIterator()
            func reply(expecting codes: Set<Int>, after command: String) async throws -> SMTPReply {
                guard let reply = try await replies.next() else {
                    throw Failure(description: "the SMTP server closed the connection after \(command)")
                }
                guard codes.contains(reply.code) else {
                    throw Failure(description: "the SMTP server answered \(command) with \(reply.code) \(reply.text)")
                }
                return reply
            }
            func command(_ line: String, expecting codes: Set<Int>, shown: String? = nil) async throws -> SMTPReply {
                try await outbound.write(ByteBuffer(string: line + "\r\n"))
                return try await reply(expecting: codes, after: shown ?? line)
            }

            do {
                _ = try await reply(expecting: [220], after: "connecting")
                let name = "tether-cloud"
                var capabilities = try await command("EHLO \(name)", expecting: [250]).lines.map { $0.uppercased() }
                if !implicitTLS {
                    let offered = capabilities.contains("STARTTLS")
                    if offered {
                        _ = try await command("STARTTLS", expecting: [220])
                        let transport = channel.channel
                        try await transport.eventLoop.submit {
                            try transport.pipeline.syncOperations.addHandler(
                                NIOSSLClientHandler(context: tlsContext, serverHostname: host), position: .first
                            )
                        }.get()
                        capabilities = try await command("EHLO \(name)", expecting: [250]).lines.map { $0.uppercased() }
                    } else if configuration.security == .requireSTARTTLS {
                        throw Failure(description: "the SMTP server does not offer STARTTLS")
                    } else {
                        logger.warning("the SMTP server does not offer STARTTLS; sending in clear", metadata: ["host": "\(configuration.host)"])
                    }
                }
                if let username = configuration.username {
                    guard capabilities.contains(where: { $0.hasPrefix("AUTH") && $0.contains("PLAIN") }) else {
                        throw Failure(description: "the SMTP server offers no AUTH PLAIN")
                    }
                    let credentials = Data("\0\(username)\0\(configuration.password ?? "")".utf8).base64EncodedString()
                    _ = try await command("AUTH PLAIN \(credentials)", expecting: [235], shown: "AUTH PLAIN (credentials)")
                }
                _ = try await command("MAIL FROM:<\(configuration.from)>", expecting: [250])
                _ = try await command("RCPT TO:<\(message.recipient)>", expecting: [250, 251])
                _ = try await command("DATA", expecting: [354])
                try await outbound.write(ByteBuffer(string: Self.format(message, from: configuration.from)))
                _ = try await reply(expecting: [250], after: "the message")
            } catch {
                // Say goodbye even after a refusal: the server then closes the connection and
                // the TLS session ends cleanly instead of waiting for a close_notify reply.
                try? await outbound.write(ByteBuffer(string: "QUIT\r\n"))
                _ = try? await replies.next()
                throw error
            }
            try? await outbound.write(ByteBuffer(string: "QUIT\r\n"))
            _ = try? await replies.next()
        }
        logger.info("e-mail sent", metadata: ["subject": "\(message.subject)"])
    }

    /// The message in RFC 5322 form with a base64 body, so that no line can end the DATA
    /// section early, ended by the lone dot.
    static func format(_ message: OutgoingMessage, from: String, date: Date = Date()) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss Z"
        let subject =
            message.subject.allSatisfy({ $0.isASCII && !$0.isNewline })
            ? message.subject
            : "=?UTF-8?B?\(Data(message.subject.utf8).base64EncodedString())?="
        let domain = from.split(separator: "@").last.map(String.init) ?? "tether.local"
        let body = Data(message.body.utf8).base64EncodedString(options: [.lineLength76Characters, .endLineWithCarriageReturn, .endLineWithLineFeed])
        return [
            "From: <\(from)>",
            "To: <\(message.recipient)>",
            "Subject: \(subject)",
            "Date: \(formatter.string(from: date))",
            "Message-ID: <\(UUID().uuidString.lowercased())@\(domain)>",
            "MIME-Version: 1.0",
            "Content-Type: text/plain; charset=utf-8",
            "Content-Transfer-Encoding: base64",
            "",
            body,
            ".",
            "",
        ].joined(separator: "\r\n")
    }
}

/// E-mail to SMTP, text messages to the outbox. An e-mail the SMTP server refuses is kept in
/// the outbox too, with the reason logged, so that it is not lost.
public struct RoutingSender: MessageSender {
    let email: any MessageSender
    let outbox: OutboxSender
    let logger: Logger

    public init(email: any MessageSender, outbox: OutboxSender, logger: Logger) {
        self.email = email
        self.outbox = outbox
        self.logger = logger
    }

    public func send(_ message: OutgoingMessage) async throws {
        guard message.channel == .email else { return try await outbox.send(message) }
        do {
            try await email.send(message)
        } catch {
            logger.error("e-mail not sent; kept in the outbox", metadata: ["error": "\(error)"])
            try await outbox.send(message)
        }
    }
}
