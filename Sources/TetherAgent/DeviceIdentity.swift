import TetherCore

/// Who a device is on the LAN: the values a GAgent module announces and checks.
public struct DeviceIdentity: Hashable, Sendable {
    /// Device ID, 22 characters.
    public var did: String
    /// 6-byte MAC address.
    public var mac: [UInt8]
    /// The 10-character LAN secret, handed out only in the binding window.
    public var passcode: String
    /// The Gizwits product key: which product (and so which data-point model) the device is.
    public var productKey: String
    /// Firmware version reported in discovery answers and hardware info (GAgent: at most 32 bytes).
    public var firmwareVersion: String

    /// An identity made of these values as given: nothing is checked (see
    /// ``random(productKey:using:)`` for well-formed ones).
    public init(did: String, mac: [UInt8], passcode: String, productKey: String, firmwareVersion: String = "tether01") {
        self.did = did
        self.mac = mac
        self.passcode = passcode
        self.productKey = productKey
        self.firmwareVersion = firmwareVersion
    }

    /// `02:…` — a locally administered MAC, so it cannot clash with real hardware.
    public var macString: String { MACAddress.display(mac) }

    /// A new identity from a random generator (seed one for reproducible identities).
    public static func random(productKey: String, using generator: inout some RandomNumberGenerator) -> DeviceIdentity {
        let alphanumerics = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
        let letters = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ")
        let did = String((0..<22).map { _ in alphanumerics.randomElement(using: &generator)! })
        let passcode = String((0..<10).map { _ in letters.randomElement(using: &generator)! })
        var mac = (0..<6).map { _ in UInt8.random(in: 0...255, using: &generator) }
        mac[0] = 0x02
        return DeviceIdentity(did: did, mac: mac, passcode: passcode, productKey: productKey)
    }
}
