import Testing
import Tether
import TetherAgent
import TetherTesting

/// `TetherTesting` as an app's tests use it: virtual devices found and controlled by a real
/// client, one taken off the LAN and put back.
@Suite("TetherTesting: virtual devices for app tests", .timeLimit(.minutes(1)))
struct VirtualDeviceLabTests {
    @Test("two devices on their own loopback addresses; one leaves the LAN and comes back")
    func lab() async throws {
        let model = ExampleProducts.petHouse
        try await VirtualDeviceLab.withDevices(model: model, count: 2) { lab in
            #expect(lab.addresses.map(\.host) == ["127.0.0.1", "127.0.0.2"])
            var lan = lab.lanConfiguration()
            lan.reconnect = ReconnectPolicy(initialDelay: .milliseconds(50), maximumDelay: .milliseconds(200))
            try await withTetherClient(configuration: .init(products: [model], lan: lan)) { client in
                var lists = client.deviceListUpdates().makeAsyncIterator()
                var found: [Device] = []
                while found.count < 2, let list = await lists.next() { found = list }
                let first = try #require(found.first { $0.did == lab.devices[0].identity.did })
                try await first.subscribe()
                _ = try await first.write(["LED_OnOff": true])
                #expect(lab.devices[0].status.data["LED_OnOff"] == .bool(true))

                // netStatus follows the client's own view of the link, which lags the device by
                // the moment it takes to see the close: wait for the events, not a poll.
                var events = first.events().makeAsyncIterator()
                await lab.stopLAN(0)
                while let event = await events.next(), event != .netStatus(.online), event != .netStatus(.offline) {}
                let offline = await #expect(throws: TetherError.self) { try await first.write(["LED_OnOff": false]) }
                #expect([.notControllable, .connectionClosed, .timeout].contains(offline?.code))

                try await lab.startLAN(0)
                while let event = await events.next(), event != .netStatus(.controllable) {}
                _ = try await first.write(["LED_OnOff": false])
                #expect(lab.devices[0].status.data["LED_OnOff"] == .bool(false))
            }
        }
    }
}
