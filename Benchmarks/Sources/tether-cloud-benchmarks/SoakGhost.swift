import Logging
import NIOCore
import Synchronization
import TetherAlink
import TetherCore
import TetherMQTT

/// A half-open connection: it signs in with the device's identity, then neither sends nor
/// answers anything (no PINGREQ, no PUBACK, no DISCONNECT) and drops what the cloud sends,
/// while its socket stays open. Only the keep-alive running out can tell the cloud.
///
/// It is an ``MQTTClient`` whose channel starts with a ``SoakSilencer``, so that the CONNECT is
/// the one the device's own client signs.
enum SoakGhost {
    /// Signs in (`connected` says whether it did, after `settled` was told), then stays silent
    /// until `release` resolves, and closes the socket without a word. `settled` hears the
    /// outcome whether or not anyone still waits on `connected`.
    static func hold(
        _ configuration: AlinkDeviceConfiguration, connected: AsyncPromise<Bool, Never>, release: AsyncPromise<Void, Never>, logger: Logger,
        settled: @escaping @Sendable (_ signedIn: Bool) -> Void
    ) async {
        let silence = SoakSilence()
        let channel = Locked<(any Channel)?>(nil)
        var configuration = configuration
        configuration.reconnect = nil
        configuration.transport = .custom(name: "soak-ghost") { opened, _ in
            channel.withLock { $0 = opened }
            try opened.pipeline.syncOperations.addHandler(SoakSilencer(silence))
        }
        do {
            try await MQTTClient.withClient(configuration: configuration.mqtt, logger: logger) { _ in
                settled(true)
                connected.resolve(.success(true))
                _ = await release.result(ifCancelled: { .success(()) })
                silence.end()
                try? await channel.withLock { $0 }?.close()
            }
        } catch {
            // Only a connect that threw is refused (an error after signing in is not).
            guard !connected.isResolved else { return }
            settled(false)
            connected.resolve(.success(false))
        }
    }
}

/// Whether a ghost's silence goes on.
final class SoakSilence: Sendable {
    private let ended = Atomic<Bool>(false)
    var isOver: Bool { ended.load(ordering: .acquiring) }
    func end() { ended.store(true, ordering: .releasing) }
}

/// First in a ghost's pipeline: passes the CONNECT out and the CONNACK in, then swallows every
/// write and every read, and keeps the socket open when the client above asks to close it
/// (its own PINGRESP deadline), until the silence ends.
final class SoakSilencer: ChannelDuplexHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let silence: SoakSilence
    /// Bytes read so far, until the 4 of the CONNACK have passed.
    private var received = 0

    init(_ silence: SoakSilence) { self.silence = silence }

    private var silent: Bool { received >= 4 && !silence.isOver }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !silent else { return }
        received += unwrapInboundIn(data).readableBytes
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard silent else {
            context.write(data, promise: promise)
            return
        }
        promise?.succeed(())
    }

    func flush(context: ChannelHandlerContext) {
        if !silent { context.flush() }
    }

    func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        guard silent else {
            context.close(mode: mode, promise: promise)
            return
        }
        promise?.succeed(())
    }
}

@available(*, unavailable)
extension SoakSilencer: Sendable {}
