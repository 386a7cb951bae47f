import NIOCore
import NIOPosix
import TetherAlink
import TetherMQTT
@testable import TetherCloud

/// A device that connects, signs its CONNECT, and then never sends another byte: the broker
/// must notice within 1.5 × its keep-alive.
struct SilentMQTTDevice {
    let channel: any Channel

    static func connect(port: Int, device: Administration.CreatedDevice, keepAlive: UInt16) async throws -> SilentMQTTDevice {
        let identity = try AlinkDeviceIdentity(productKey: device.productKey, deviceName: device.deviceName)
        let credentials = AlinkCredentials.device(identity, secret: device.deviceSecret, timestamp: AlinkClock.now())
        let connect = MQTTPacket.connect(MQTTConnect(
            version: .v311, clientID: credentials.clientID, keepAlive: keepAlive,
            username: credentials.username, password: Array(credentials.password.utf8)
        ))
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton).connect(host: "127.0.0.1", port: port).get()
        try await channel.writeAndFlush(try connect.bytes(version: .v311))
        return SilentMQTTDevice(channel: channel)
    }

    func close() async throws { try await channel.close() }
}
