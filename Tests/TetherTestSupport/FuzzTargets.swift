import NIOCore
import TetherCore
import TetherGizwitsLAN
import TetherMQTT

/// Fuzz targets: each takes arbitrary bytes and returns a description of a broken invariant, or
/// nil. A crash, a hang or a non-nil result is a bug. Used by the bounded fuzz runs in the tests
/// and by the libFuzzer harness `tether-fuzz` (`scripts/fuzz.sh`).
public enum FuzzTargets {
    private static let petHouse: P0Codec = try! P0Codec(model: Fixtures.petHouse())

    private static let petHouseVariable: P0Codec = {
        var model = try! Fixtures.petHouse()
        model.p0Format = .variable
        for index in model.dataPoints.indices { model.dataPoints[index].position = nil }
        return try! P0Codec(model: model)
    }()

    /// The GAgent LAN frame reader, message parser and P0 codec over one input.
    public static func gizwitsLAN(_ bytes: [UInt8]) -> String? {
        var buffer = ByteBuffer(bytes: bytes)
        // Read frames until the stream is exhausted, incomplete or refused; each step must make progress.
        while true {
            let before = buffer.readerIndex
            let frame: GizwitsLANFrame?
            do {
                frame = try GizwitsLANFrame.read(from: &buffer, maximumLength: 4096)
            } catch {
                break
            }
            guard let frame else {
                if buffer.readerIndex != before { return "nil result moved the reader index" }
                break
            }
            if buffer.readerIndex <= before { return "a frame was returned without consuming bytes" }
            if let problem = checkMessage(frame) { return problem }
        }
        _ = try? GizwitsLANFrame.read(datagram: ByteBuffer(bytes: bytes))
        for codec in [petHouse, petHouseVariable] {
            if let message = try? codec.decode(ByteBuffer(bytes: bytes)), let problem = checkP0(message, codec) {
                return problem
            }
        }
        return nil
    }

    private static func checkMessage(_ frame: GizwitsLANFrame) -> String? {
        guard let message = try? GizwitsLANMessage(frame: frame) else { return nil }
        // What was parsed must survive being written and read again unchanged.
        var again = message.frame.bytes
        guard let reread = try? GizwitsLANMessage.read(from: &again, maximumLength: 1 << 20) else {
            return "\(frame.command) parsed but its re-encoding did not"
        }
        // Bytes after a complete body are ignored by the parser, so the messages compare equal.
        if reread != message { return "\(frame.command) changed on a round trip" }
        return nil
    }

    private static func checkP0(_ message: P0Message, _ codec: P0Codec) -> String? {
        // A decoded status re-encodes when every value is in range, and every value it had must
        // read back unchanged (a fixed-length encoding adds the points a partial status lacks).
        guard let status = message.status, let encoded = try? codec.encode(.report(status)) else { return nil }
        guard let again = try? codec.decode(encoded).status?.allValues else { return "a re-encoded P0 status did not decode" }
        for (name, value) in status.allValues where again[name] != value {
            return "P0 value of \(name) changed on a round trip: \(value) became \(again[name].map { "\($0)" } ?? "nothing")"
        }
        return nil
    }

    /// The MQTT packet reader, for both versions and a server's first packet.
    public static func mqtt(_ bytes: [UInt8]) -> String? {
        for version in [MQTTVersion?.none, .v311, .v5] {
            var buffer = ByteBuffer(bytes: bytes)
            while true {
                let before = buffer.readerIndex
                let packet: MQTTPacket?
                do {
                    packet = try MQTTPacket.read(from: &buffer, version: version, maximumPacketSize: 4096)
                } catch {
                    break
                }
                guard let packet else {
                    if buffer.readerIndex != before { return "nil result moved the reader index" }
                    break
                }
                if buffer.readerIndex <= before { return "a packet was returned without consuming bytes" }
                // What was read must be written and read again unchanged.
                let writeVersion: MQTTVersion
                if case .connect(let connect) = packet { writeVersion = connect.version } else { writeVersion = version ?? .v311 }
                guard var again = try? packet.bytes(version: writeVersion) else { return "\(packet.name) read but could not be written" }
                let rereadVersion: MQTTVersion? = if case .connect = packet { nil } else { writeVersion }
                guard let reread = try? MQTTPacket.read(from: &again, version: rereadVersion) else { return "\(packet.name) re-encoding did not read" }
                if reread != packet { return "\(packet.name) changed on a round trip" }
                if version == nil { break }
            }
        }
        return nil
    }

    /// Valid MQTT packets to mutate.
    public static let mqttSeeds: [[UInt8]] = {
        let packets: [(MQTTPacket, MQTTVersion)] = [
            (
                .connect(
                    MQTTConnect(
                        version: .v311, clientID: "c", username: "u", password: [1],
                        will: MQTTWill(topic: "w", payload: ByteBuffer(string: "x"), qos: .atLeastOnce))), .v311
            ),
            (.connect(MQTTConnect(version: .v5, clientID: "c", properties: [.sessionExpiryInterval(9), .userProperty("a", "b")])), .v5),
            (
                .publish(
                    MQTTPublish(
                        topic: "a/b", payload: ByteBuffer(string: "hi"), qos: .exactlyOnce, packetID: 3, properties: [.topicAlias(1), .correlationData([1])])),
                .v5
            ),
            (
                .subscribe(
                    MQTTSubscribe(
                        packetID: 1, subscriptions: [MQTTTopicSubscription(filter: "$share/g/a/#", qos: .atLeastOnce)], properties: [.subscriptionIdentifier(4)]
                    )), .v5
            ),
            (.suback(MQTTSubAck(packetID: 1, reasonCodes: [.grantedQoS1])), .v311),
            (.puback(MQTTAck(packetID: 2, reasonCode: .noMatchingSubscribers, properties: [.reasonString("r")])), .v5),
            (.disconnect(MQTTReasonPacket(reasonCode: .serverMoved, properties: [.serverReference("s")])), .v5),
            (.unsubscribe(MQTTUnsubscribe(packetID: 5, filters: ["a/+"])), .v311),
        ]
        return packets.map { Array(try! $0.0.bytes(version: $0.1).readableBytesView) }
    }()

    /// Valid frames to mutate, so that fuzzing reaches past the header checks.
    public static let seeds: [[UInt8]] = {
        var seeds: [[UInt8]] = []
        let info = GizwitsDeviceInfo(
            did: "gKufzxZwYeyd3Skbsb6mza", mac: [0xAC, 0xCF, 0x23, 0x50, 0xD4, 0x46], firmwareVersion: "04020006",
            productKey: "4214bf2d79694a259232431b6f2ef46b")
        let messages: [GizwitsLANMessage] = [
            .discoveryRequest, .discoveryResponse(info), .announcement(info), .passcodeResponse("ABCDEFGHIJ"),
            .login(passcode: "ABCDEFGHIJ"), .loginResult(.success), .heartbeat,
            .hotspotList([GizwitsHotspot(ssid: "HomeWiFi", rssi: 60)]), .softAPConfiguration(ssid: "HomeWiFi", key: "secret123"),
            .softAPConfiguration(ssid: "HomeWiFi", key: "secret123", pairingToken: "0123456789abcdef0123456789abcdef"),
            .configurationSuccess(mac: info.mac, productKey: info.productKey, did: info.did),
            .hardwareInfo(
                GizwitsHardwareInfo(
                    wifiHardwareVersion: "ESP", wifiSoftwareVersion: "0402", mcuHardwareVersion: "1", mcuSoftwareVersion: "2", p0Version: "4",
                    wifiFirmwareVersion: "x", productKey: info.productKey)),
            .p0FromDevice(ByteBuffer(bytes: [4, 5, 10, 20, 30, 3, 1, 38, 60, 2, 10])),
            .p0WithAck(sn: 7, p0: ByteBuffer(bytes: [1, 5, 5, 10, 20, 30, 3])),
            .p0Ack(sn: 1, p0: ByteBuffer(bytes: [0x13, 0x04, 0xC0, 0x03, 0x26])),
        ]
        for message in messages { seeds.append(Array(message.frame.bytes.readableBytesView)) }
        seeds.append([4, 5, 10, 20, 30, 3, 1, 38, 60, 2, 10])
        seeds.append([0x14, 0x04, 0xC0, 0x03, 0x26])
        return seeds
    }()

    /// Runs `iterations` inputs from a seeded generator: random bytes, and seeds with random
    /// bytes flipped, inserted, removed or truncated. Returns the first failing input.
    public static func run(iterations: Int, seed: UInt64, seeds: [[UInt8]] = seeds, target: ([UInt8]) -> String?) -> (input: [UInt8], problem: String)? {
        var random = SplitMix64(seed: seed)
        for iteration in 0..<iterations {
            var input: [UInt8]
            if iteration % 4 == 0 {
                input = (0..<Int(random.next() % 64)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            } else {
                input = seeds[Int(random.next() % UInt64(seeds.count))]
                for _ in 0..<(1 + Int(random.next() % 4)) {
                    let position = input.isEmpty ? 0 : Int(random.next() % UInt64(input.count))
                    switch random.next() % 5 {
                    case 0 where !input.isEmpty: input[position] = UInt8(truncatingIfNeeded: random.next())
                    case 1: input.insert(UInt8(truncatingIfNeeded: random.next()), at: position)
                    case 2 where !input.isEmpty: input.remove(at: position)
                    case 3: input = Array(input.prefix(position))
                    default: input += input.prefix(Int(random.next() % 16))
                    }
                }
            }
            if let problem = target(input) { return (input, problem) }
        }
        return nil
    }
}
