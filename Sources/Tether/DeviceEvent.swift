/// How an app can reach a device right now.
public enum NetStatus: String, Hashable, Sendable, CustomStringConvertible {
    /// Not reachable on any path.
    case offline
    /// Reachable (it answers discovery) but not subscribed, or its connection is being set up.
    case online
    /// Subscribed, and a path is up (logged in on the LAN, or subscribed through the cloud
    /// while the device is online there): writes and reads go through. ``Device/controlPath``
    /// says which.
    case controllable

    public var description: String { rawValue }
}

/// A status report from a device: what it carried, and the `sn` it answers.
public struct DeviceStatusReport: Hashable, Sendable {
    /// The values this report carried (all points for fixed-length products).
    public var status: DeviceStatus
    /// The `sn` of the write this report answers; 0 for reports the device sent on its own and
    /// for reads.
    public var sn: UInt32

    /// A report of `status` answering `sn` (0: no write).
    public init(status: DeviceStatus, sn: UInt32) {
        self.status = status
        self.sn = sn
    }
}

/// Something that happened to a device.
public enum DeviceEvent: Hashable, Sendable {
    /// A status report: after a write (with its `sn`), a read, or on the device's own initiative.
    case status(DeviceStatusReport)
    /// Transparent data from the device (P0 action 0x06), outside the data-point model.
    case binary([UInt8])
    case netStatus(NetStatus)
    /// An event the device posted to the cloud (thing-model products: a TSL event such as a
    /// fault or an alarm), passed on while the device is subscribed through the cloud.
    case modelEvent(DeviceModelEvent)
    /// What an Alink device published on one of its custom topics (`/{pk}/{dn}/user/…`),
    /// passed on while the device is subscribed through the cloud.
    case topicMessage(DeviceTopicMessage)
    /// A firmware upgrade of the device moved on (offered, progress, applied, failed), passed
    /// on while the device is subscribed through the cloud.
    case firmwareUpgrade(FirmwareUpgrade)
    /// The device sent something the client could not read (a report that does not fit the
    /// product model, for instance). The connection stays up.
    case error(TetherError)
}

/// What ``Device/write(_:sn:)`` got back.
public struct WriteResult: Hashable, Sendable {
    /// The `sn` the device acknowledged (0 for a write without acknowledgement).
    public var sn: UInt32
    /// The status the device sent with its acknowledgement, when it sent one.
    public var status: DeviceStatus?
}

/// A device's hardware and firmware versions, as the Gizwits SDK reports them.
public typealias HardwareInfo = GizwitsHardwareInfo

/// An event of the device's thing model, as the device posted it (Alink `thing.event.*.post`).
public struct DeviceModelEvent: Hashable, Sendable {
    /// The event's identifier in the product model.
    public var identifier: String
    /// `info`, `alert` or `error`, as the model declares the event.
    public var type: String
    /// The event's output parameters, by identifier.
    public var values: JSONValue

    /// An event with its identifier, type and output values.
    public init(identifier: String, type: String, values: JSONValue) {
        self.identifier = identifier
        self.type = type
        self.values = values
    }
}

/// A device's message on one of its custom topics.
public struct DeviceTopicMessage: Hashable, Sendable {
    /// The whole topic, `/{pk}/{dn}/user/…`.
    public var topic: String
    public var payload: [UInt8]

    public init(topic: String, payload: [UInt8]) {
        self.topic = topic
        self.payload = payload
    }
}
