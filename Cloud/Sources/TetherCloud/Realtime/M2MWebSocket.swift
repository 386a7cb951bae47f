import HummingbirdWebSocket
import Logging
import NIOWebSocket
import Synchronization
import TetherCloudProtocol
import TetherCore

/// The WebSocket side of an M2M session: text frames in, in order; pushes and answers out. The
/// connection is closed when no frame arrives within 1.5 × the heartbeat interval, when no
/// login arrives within `loginTimeout` (``HTTPLimits``), and when the session ends (its token revoked or
/// expired: re-checked at every revocation and every ``recheckInterval`` in any case, for
/// revocations made where no bus reaches, such as `tether-cloud admin` beside a SQLite cloud).
enum M2MWebSocket {
    static let path = "/ws/app/v1"
    static let recheckInterval: Duration = .seconds(60)

    static func serve(
        _ session: M2MSession, hub: RealtimeHub, loginTimeout: Duration, inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter, logger: Logger
    ) async {
        hub.add(session)
        defer {
            hub.remove(session)
            session.finish()
        }
        let lastSeen = LastSeen()
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for await output in session.output {
                    do {
                        switch output {
                        case .frame(let frame):
                            try await outbound.write(.text(frame.encoded()))
                        case .close(let reason):
                            try await outbound.close(.policyViolation, reason: String(reason.utf8.prefix(120)) ?? "session ended")
                            return
                        }
                    } catch {
                        return
                    }
                }
            }
            group.addTask {
                let opened = ContinuousClock.now
                var lastCheck = opened
                while !Task.isCancelled {
                    try? await Task.sleep(for: .milliseconds(500))
                    let now = ContinuousClock.now
                    let silent = now - lastSeen.instant.withLock { $0 }
                    if silent > .seconds(Double(session.heartbeatSeconds) * 1.5) {
                        try? await outbound.close(.normalClosure, reason: "no frame within the heartbeat interval")
                        return
                    }
                    if !session.isLoggedIn, now - opened > loginTimeout {
                        try? await outbound.close(.policyViolation, reason: "no login_req in time")
                        return
                    }
                    session.endIfExpired()
                    if now - lastCheck > recheckInterval {
                        lastCheck = now
                        await session.revalidate()
                    }
                }
            }
            // The app leaving, or the watchdog closing a silent connection, ends the session.
            do {
                for try await message in inbound.messages(maxSize: 64 * 1024) {
                    lastSeen.instant.withLock { $0 = .now }
                    switch message {
                    case .text(let text): await session.receive(text)
                    case .binary: session.send(.invalid(M2MInvalid(errorCode: CloudError.formInvalid.code, message: "frames are JSON text")))
                    }
                }
            } catch {
                logger.debug("M2M connection ended", metadata: ["error": "\(error)"])
            }
            session.finish()
            try? await outbound.close(.normalClosure, reason: nil)
            group.cancelAll()
        }
    }
}

/// When the app last sent a frame.
private final class LastSeen: Sendable {
    let instant = Mutex(ContinuousClock.now)
}
