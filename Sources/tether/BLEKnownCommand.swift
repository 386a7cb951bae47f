import ArgumentParser
import TetherBlueZ
import TetherBluetooth
import TetherCLISupport
import TetherCore

/// `tether ble known`: the devices BlueZ already knows, by address, without scanning (the DIoT
/// SDK's `retrievePeripherals(withIdentifiers:)`).
struct BLEKnown: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "known", abstract: "Show the devices the adapter already knows (seen, paired or connected), without scanning.")
    @OptionGroup var adapter: BLEAdapterOptions
    @Option(name: .customLong("address"), help: "A device's address (repeatable).") var addresses: [String]
    @Flag(help: "Print one JSON object per known device.") var json = false

    func validate() throws {
        guard !addresses.isEmpty else { throw ValidationError("give at least one --address") }
        for address in addresses where MACAddress.hexDigits(address) == nil || address.utf8.count != 17 {
            throw ValidationError("--address \(address.prefix(32)) is not a Bluetooth address such as C8:47:8C:12:34:56")
        }
    }

    func run() async throws {
        let (addresses, json, name) = (addresses, json, adapter.adapter)
        try await BLECommand.withCentral(adapter: name) { central in
            let known = try await central.knownPeripherals(addresses)
            for peripheral in known {
                if json { printJSON(.object(BLEJSON.peripheral(peripheral))) } else { printLine(BLEJSON.describe(peripheral)) }
            }
            if known.isEmpty { printError("\(name) knows none of these devices; scan for them first") }
        }
    }
}
