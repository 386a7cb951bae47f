import NIOCore
import TetherCore
import TetherTuyaLAN

extension FuzzTargets {
    static let tuyaKey = Array("thisisarealkey00".utf8)

    /// A device's status frame and an app's control frame of every version, and announcements.
    public static let tuyaSeeds: [[UInt8]] = TuyaVersion.allCases.flatMap { version -> [[UInt8]] in
        let device = try! TuyaCodec(version: version, key: tuyaKey, sender: .device)
        let app = try! TuyaCodec(version: version, key: tuyaKey, sender: .app)
        let status = TuyaMessage(sequence: 1, command: .status, returnCode: 0, payload: Array(#"{"dps":{"1":true,"2":50}}"#.utf8))
        let control = TuyaMessage(sequence: 2, command: .control, payload: TuyaRequest.control(["1": false], deviceID: "d", version: version, time: 1).1)
        let announcement = TuyaAnnouncement(ip: "127.0.0.1", deviceID: "d", productKey: "p", version: version.rawValue)
        return [
            Array(try! device.encode(status).readableBytesView), Array(try! app.encode(control).readableBytesView),
            try! TuyaDiscovery.datagram(announcement, version: version),
        ]
    }

    /// Every version's decoder, both directions, the status parser and the discovery decoder over
    /// one input: nothing crashes, and what decodes re-encodes to a frame that decodes the same.
    public static func tuya(_ bytes: [UInt8]) -> String? {
        for version in TuyaVersion.allCases {
            for sender in [TuyaCodec.Side.app, .device] {
                let codec = try! TuyaCodec(version: version, key: tuyaKey, sender: sender)
                var buffer = ByteBuffer(bytes: bytes)
                guard let message = try? codec.decode(&buffer) else { continue }
                _ = try? TuyaStatus(parsing: message.payload)
                let writer = try! TuyaCodec(version: version, key: tuyaKey, sender: sender == .app ? .device : .app)
                guard var again = try? writer.encode(message) else { return "\(version): a decoded message does not encode" }
                guard let reread = try? codec.decode(&again), reread.payload == message.payload, reread.command == message.command else {
                    return "\(version): a decoded message does not survive a round trip"
                }
            }
        }
        _ = try? TuyaDiscovery.announcement(in: bytes)
        _ = try? TuyaDiscovery.probeAddress(in: bytes)
        return nil
    }
}
