import Testing

@testable import TetherMQTT

@Suite("The MQTT client's configuration")
struct ClientConfigurationTests {
    @Test("the wait for PINGRESP is the keep-alive unless set, and never under a second")
    func pingTimeout() {
        #expect(MQTTClientConfiguration(host: "h", keepAlive: 60).effectivePingTimeout == .seconds(60))
        #expect(MQTTClientConfiguration(host: "h", keepAlive: 60, pingTimeout: .seconds(5)).effectivePingTimeout == .seconds(5))
        #expect(MQTTClientConfiguration(host: "h", keepAlive: 0).effectivePingTimeout == .seconds(1))
        #expect(MQTTClientConfiguration(host: "h", keepAlive: 30, pingTimeout: .zero).effectivePingTimeout == .seconds(1))
    }
}
