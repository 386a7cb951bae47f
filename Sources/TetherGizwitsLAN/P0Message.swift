public import TetherCore

/// The first byte of a P0 payload (`shared/reference/gizwits-lan.md` §8.1).
public struct P0Action: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let control = Self(rawValue: 0x01)
    public static let read = Self(rawValue: 0x02)
    public static let readAck = Self(rawValue: 0x03)
    public static let report = Self(rawValue: 0x04)
    public static let transparentToDevice = Self(rawValue: 0x05)
    public static let transparentFromDevice = Self(rawValue: 0x06)
    public static let controlVariable = Self(rawValue: 0x11)
    public static let readVariable = Self(rawValue: 0x12)
    public static let readAckVariable = Self(rawValue: 0x13)
    public static let reportVariable = Self(rawValue: 0x14)

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
