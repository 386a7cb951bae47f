import NIOCore
import NIOPosix
import Synchronization
public import TetherMQTT

/// A fake MQTT server for client tests that a real broker cannot script: it records every
/// packet, answers CONNECT as told, and acknowledges nothing unless the test says so.
public final class ScriptedMQTTServer: Sendable {
    public struct Behaviour: Sendable {
        /// Nil: never answer CONNECT.
        public var connack: MQTTConnAck?
        public var version: MQTTVersion
        public init(connack: MQTTConnAck? = MQTTConnAck(), version: MQTTVersion = .v311) {
            self.connack = connack
            self.version = version
        }
    }

    private let channel: any Channel
    public let port: Int

    public init(behaviour: Behaviour = .init()) async throws {
        let box = StateBox(behaviour: behaviour)
        channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    box.add(channel)
                    try channel.pipeline.syncOperations.addHandlers([
                        ByteToMessageHandler(MQTTPacketDecoder()),
                        Recorder(box: box),
                    ])
                }
            }
            .bind(host: "127.0.0.1", port: 0)
            .get()
        port = channel.localAddress!.port!
        self.box = box
    }

    private let box: StateBox

    public var packets: [MQTTPacket] { box.packets }

    public func setBehaviour(_ behaviour: Behaviour) { box.setBehaviour(behaviour) }

    /// Sends a packet on the newest connection.
    public func send(_ packet: MQTTPacket) throws {
        guard let connection = box.connections.last else { return }
        let bytes = try packet.bytes(version: box.behaviour.version)
        connection.writeAndFlush(bytes, promise: nil)
    }

    /// Closes every client connection, as a network failure would.
    public func dropConnections() {
        for connection in box.connections { connection.close(promise: nil) }
    }

    public func close() async {
        dropConnections()
        try? await channel.close()
    }

    final class StateBox: Sendable {
        let state: Mutex<(packets: [MQTTPacket], connections: [any Channel], behaviour: Behaviour)>
        init(behaviour: Behaviour) { state = Mutex(([], [], behaviour)) }
        var packets: [MQTTPacket] { state.withLock { $0.packets } }
        var connections: [any Channel] { state.withLock { $0.connections } }
        var behaviour: Behaviour { state.withLock { $0.behaviour } }
        func setBehaviour(_ behaviour: Behaviour) { state.withLock { $0.behaviour = behaviour } }
        func add(_ channel: any Channel) { state.withLock { $0.connections.append(channel) } }
        func record(_ packet: MQTTPacket) { state.withLock { $0.packets.append(packet) } }
    }

    final class Recorder: ChannelInboundHandler, Sendable {
        typealias InboundIn = MQTTPacket
        let box: StateBox
        init(box: StateBox) { self.box = box }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let packet = unwrapInboundIn(data)
            box.record(packet)
            let behaviour = box.behaviour
            if case .connect = packet, let connack = behaviour.connack, let bytes = try? MQTTPacket.connack(connack).bytes(version: behaviour.version) {
                context.writeAndFlush(NIOAny(bytes), promise: nil)
            }
        }
    }
}
