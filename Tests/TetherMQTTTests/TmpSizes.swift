import Testing
@testable import TetherMQTT
import NIOCore

@Test func tmpSizes() {
    print("SIZES connect", MemoryLayout<MQTTConnect>.size, "will", MemoryLayout<MQTTWill?>.size, "principal", MemoryLayout<MQTTPrincipal?>.size, "ref", MemoryLayout<BrokerConnectionReference?>.size, "sched", MemoryLayout<Scheduled<Void>?>.size, "bb", MemoryLayout<ByteBuffer?>.size, "closeReason", MemoryLayout<MQTTBrokerEvent.DisconnectReason>.size, "expiry", MemoryLayout<UInt32?>.size, "sink", MemoryLayout<(@Sendable (MQTTMessage, MQTTPrincipal?) -> Void)?>.size, "loopbound", MemoryLayout<NIOLoopBound<BrokerConnectionHandler>>.size)
}
