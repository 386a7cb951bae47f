public import TetherCore

/// Where a Tuya device is and what it takes: its address, id, local key and protocol version.
public struct TuyaDeviceAddress: Sendable, Hashable, CustomStringConvertible, CustomReflectable {
    public var host: String
    /// The device's TCP port (6668).
    public var port: Int
    /// `gwId` / `devId`: 20 or 22 characters.
    public var deviceID: String
    /// The 16-byte local key. A secret: never logged.
    public var localKey: [UInt8]
    public var version: TuyaVersion

    public init(host: String, port: Int = 6668, deviceID: String, localKey: [UInt8], version: TuyaVersion) throws(TetherError) {
        try TuyaCrypto.checkKey(localKey)
        guard !deviceID.isEmpty, deviceID.utf8.count <= 64 else { throw TetherError(.invalidArgument, "a Tuya device id is 1 to 64 characters") }
        self.host = host
        self.port = port
        self.deviceID = deviceID
        self.localKey = localKey
        self.version = version
    }

    /// The device without its key, for messages and logs.
    public var description: String { "\(deviceID) at \(host):\(port) (Tuya \(version))" }

    /// `dump` and debuggers show the key redacted.
    public var customMirror: Mirror {
        Mirror(self, children: ["host": host, "port": port, "deviceID": deviceID, "localKey": "<redacted>", "version": version])
    }
}
