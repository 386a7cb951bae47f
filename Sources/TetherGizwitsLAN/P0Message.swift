public import TetherCore

/// The first byte of a P0 payload (`shared/reference/gizwits-lan.md` §8.1).
public struct P0Action: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The action byte, the first byte of a P0 payload.
    public let rawValue: UInt8
    /// Wraps any action byte, known or not.
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// App → device, fixed length: `attr_flags` over the writable points, then the whole writable section.
    public static let control = Self(rawValue: 0x01)
    /// App → device, fixed length: asks for the whole status; the payload is this byte alone.
    public static let read = Self(rawValue: 0x02)
    /// Device → app, fixed length: the complete `dev_status`, answering a read.
    public static let readAck = Self(rawValue: 0x03)
    /// Device → app, fixed length: the complete `dev_status`, sent unsolicited.
    public static let report = Self(rawValue: 0x04)
    /// App → device: opaque bytes outside the data-point model.
    public static let transparentToDevice = Self(rawValue: 0x05)
    /// Device → app: opaque bytes outside the data-point model.
    public static let transparentFromDevice = Self(rawValue: 0x06)
    /// App → device, variable length: `attr_flags`, then only the flagged values.
    public static let controlVariable = Self(rawValue: 0x11)
    /// App → device, variable length: `attr_flags` select the points wanted.
    public static let readVariable = Self(rawValue: 0x12)
    /// Device → app, variable length: `attr_flags`, then only the flagged values, answering a read.
    public static let readAckVariable = Self(rawValue: 0x13)
    /// Device → app, variable length: `attr_flags`, then only the flagged values, sent unsolicited.
    public static let reportVariable = Self(rawValue: 0x14)

    /// The action's name, shared by its fixed- and variable-length forms; `unknown` for other bytes.
    public var name: String {
        switch self {
        case .control, .controlVariable: return "control"
        case .read, .readVariable: return "read"
        case .readAck, .readAckVariable: return "readAck"
        case .report, .reportVariable: return "report"
        case .transparentToDevice: return "transparentToDevice"
        case .transparentFromDevice: return "transparentFromDevice"
        default: return "unknown"
        }
    }

    /// Whether the high nibble is 1, as in the variable-length actions 0x11–0x14.
    public var isVariableLength: Bool { rawValue & 0xF0 == 0x10 }

    public var description: String { "0x" + [rawValue].tetherHex + " " + name }
}

/// A P0 payload read against a product model.
public enum P0Message: Hashable, Sendable {
    /// Write these data points (app → device). Decoding yields only the flagged points.
    case control([String: DataValue])
    /// Ask for the status; names select points in the variable-length form, empty means all.
    case read([String])
    /// The status, answering a read.
    case readAck(DeviceStatus)
    /// The status, sent unsolicited.
    case report(DeviceStatus)
    /// Opaque bytes outside the data-point model, app → device.
    case transparentToDevice([UInt8])
    /// Opaque bytes outside the data-point model, device → app.
    case transparentFromDevice([UInt8])

    /// A status carried by this message, if it is a read acknowledgement or a report.
    public var status: DeviceStatus? {
        switch self {
        case .readAck(let status), .report(let status): return status
        default: return nil
        }
    }
}
