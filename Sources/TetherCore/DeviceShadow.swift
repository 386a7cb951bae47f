/// A device shadow (Aliyun's device shadow, over `/shadow/update/{pk}/{dn}` and
/// `/shadow/get/{pk}/{dn}`): the state the device last reported, the state an app wants it in,
/// when each attribute last changed, and a version that every write must raise.
///
/// The rules, Aliyun's: a write carries a `version` greater than the shadow's, or it is refused
/// with 409 and nothing changes; a device may send version `-1` to empty the shadow and start
/// again at version 0. A key set to `null` (or the string `"null"`) is removed; a whole section
/// set to `null` (or `"null"`) is emptied. Each section holds at most
/// ``maximumAttributes`` keys and the document at most ``maximumDocumentSize`` bytes.
public struct DeviceShadow: Hashable, Sendable {
    /// What the device says it is.
    public var reported: JSONObject
    /// What an app wants it to be; the device empties it once it has applied it.
    public var desired: JSONObject
    /// When each reported attribute last changed (Unix seconds).
    public var reportedTimestamps: [String: Int64]
    /// When each desired attribute last changed (Unix seconds).
    public var desiredTimestamps: [String: Int64]
    /// Raised by every write: 0 for a shadow never written.
    public var version: Int64
    /// When the shadow last changed (Unix seconds); 0 for a shadow never written.
    public var timestamp: Int64

    /// Aliyun's limit on the attributes of one section.
    public static let maximumAttributes = 128
    /// Aliyun's limit on a shadow document, in bytes of its JSON.
    public static let maximumDocumentSize = 16 * 1024

    /// An empty shadow at version 0.
    public init(
        reported: JSONObject = [:], desired: JSONObject = [:], reportedTimestamps: [String: Int64] = [:], desiredTimestamps: [String: Int64] = [:],
        version: Int64 = 0, timestamp: Int64 = 0
    ) {
        self.reported = reported
        self.desired = desired
        self.reportedTimestamps = reportedTimestamps
        self.desiredTimestamps = desiredTimestamps
        self.version = version
        self.timestamp = timestamp
    }

    /// True when nothing was ever reported or desired (or all was removed).
    public var isEmpty: Bool { reported.isEmpty && desired.isEmpty }

    /// Who writes: only a device may reset the shadow with version -1.
    public enum Writer: Sendable {
        case device, app
    }

    /// The shadow after `update`, or the refusal the writer is answered with; `self` is unchanged
    /// either way.
    public func applying(_ update: ShadowUpdate, by writer: Writer, atSeconds now: Int64) throws(ShadowRefusal) -> DeviceShadow {
        if update.version == -1, writer == .device {
            var reset = DeviceShadow(version: 0, timestamp: now)
            try reset.apply(update.reported, to: \.reported, timestamps: \.reportedTimestamps, now: now)
            try reset.apply(update.desired, to: \.desired, timestamps: \.desiredTimestamps, now: now)
            try reset.checkSize()
            return reset
        }
        guard update.version > version else {
            throw ShadowRefusal(.versionConflict, "version \(update.version) is not greater than the shadow's \(version)")
        }
        var next = self
        try next.apply(update.reported, to: \.reported, timestamps: \.reportedTimestamps, now: now)
        try next.apply(update.desired, to: \.desired, timestamps: \.desiredTimestamps, now: now)
        next.version = update.version
        next.timestamp = now
        try next.checkSize()
        return next
    }

    private mutating func apply(
        _ change: ShadowUpdate.Change, to section: WritableKeyPath<DeviceShadow, JSONObject>, timestamps: WritableKeyPath<DeviceShadow, [String: Int64]>,
        now: Int64
    ) throws(ShadowRefusal) {
        switch change {
        case .unchanged:
            return
        case .cleared:
            self[keyPath: section] = [:]
            self[keyPath: timestamps] = [:]
        case .merged(let values):
            for key in values.keys {
                let value = values[key]!
                if Self.isRemoval(value) {
                    self[keyPath: section][key] = nil
                    self[keyPath: timestamps][key] = nil
                } else {
                    self[keyPath: section][key] = value
                    self[keyPath: timestamps][key] = now
                }
            }
            guard self[keyPath: section].count <= Self.maximumAttributes else {
                throw ShadowRefusal(.tooManyAttributes, "a shadow section holds at most \(Self.maximumAttributes) attributes")
            }
        }
    }

    private func checkSize() throws(ShadowRefusal) {
        let size = stateJSON.serialized().utf8.count + metadataJSON.serialized().utf8.count
        guard size <= Self.maximumDocumentSize else {
            throw ShadowRefusal(.malformed, "a shadow document is at most \(Self.maximumDocumentSize) bytes (this one would be \(size))")
        }
    }

    /// `null` and the string `"null"` remove a key (Aliyun's devices send the string).
    static func isRemoval(_ value: JSONValue) -> Bool {
        value == .null || value == .string("null")
    }

    /// `{"reported": {…}, "desired": {…}}`, a section left out when empty, as Aliyun writes it.
    public var stateJSON: JSONValue {
        var state = JSONObject()
        if !reported.isEmpty { state["reported"] = .object(reported) }
        if !desired.isEmpty { state["desired"] = .object(desired) }
        return .object(state)
    }

    /// `{"reported": {key: {"timestamp": s}}, "desired": …}`, in the sections' key order.
    public var metadataJSON: JSONValue {
        func section(_ values: JSONObject, _ timestamps: [String: Int64]) -> JSONValue {
            var object = JSONObject()
            for key in values.keys { object[key] = ["timestamp": .int(timestamps[key] ?? 0)] }
            return .object(object)
        }
        var metadata = JSONObject()
        if !reported.isEmpty { metadata["reported"] = section(reported, reportedTimestamps) }
        if !desired.isEmpty { metadata["desired"] = section(desired, desiredTimestamps) }
        return .object(metadata)
    }

    /// The whole shadow as one JSON object (`state`, `metadata`, `version`, `timestamp`): how the
    /// cloud stores it and how it reads it back.
    public var json: JSONValue {
        ["state": stateJSON, "metadata": metadataJSON, "version": .int(version), "timestamp": .int(timestamp)]
    }

    /// Reads ``json`` back; nil for anything else.
    public init?(json: JSONValue) {
        guard case .int(let version)? = json["version"], case .int(let timestamp)? = json["timestamp"] else { return nil }
        let state = json["state"] ?? .object([:])
        let metadata = json["metadata"] ?? .object([:])
        // One timestamp per key of the section (0 when the metadata has none), none for keys it lacks.
        func timestamps(of values: JSONObject, _ section: JSONValue?) -> [String: Int64] {
            var result: [String: Int64] = [:]
            for key in values.keys {
                if case .int(let seconds)? = section?[key]?["timestamp"] { result[key] = seconds } else { result[key] = 0 }
            }
            return result
        }
        let reported = state["reported"]?.objectValue ?? [:]
        let desired = state["desired"]?.objectValue ?? [:]
        self.init(
            reported: reported, desired: desired, reportedTimestamps: timestamps(of: reported, metadata["reported"]),
            desiredTimestamps: timestamps(of: desired, metadata["desired"]), version: version, timestamp: timestamp
        )
    }
}

/// A write to a shadow: what changes in each section and the version it claims.
public struct ShadowUpdate: Hashable, Sendable {
    /// What happens to one section.
    public enum Change: Hashable, Sendable {
        /// Not mentioned: left as it is.
        case unchanged
        /// Set to `null` or `"null"`: emptied.
        case cleared
        /// These keys set; keys whose value is `null` or `"null"` removed.
        case merged(JSONObject)
    }

    public var reported: Change
    public var desired: Change
    /// Must be greater than the shadow's; -1 (from a device) resets it.
    public var version: Int64

    public init(reported: Change = .unchanged, desired: Change = .unchanged, version: Int64) {
        self.reported = reported
        self.desired = desired
        self.version = version
    }
}

/// Why a shadow write or read was refused, with Aliyun's error code (the `errorcode` of the
/// reply the device gets).
public struct ShadowRefusal: Error, Hashable, Sendable, CustomStringConvertible {
    /// Aliyun's shadow error codes.
    public enum Code: Int, Sendable {
        /// Not JSON, not an object, or too large.
        case malformed = 400
        case missingMethod = 401
        case missingState = 402
        case versionNotNumber = 403
        /// The state names neither `reported` nor `desired`.
        case missingReported = 404
        case emptyReported = 405
        case invalidMethod = 406
        /// A `get` of a shadow that holds nothing.
        case emptyShadow = 407
        case tooManyAttributes = 408
        case versionConflict = 409
        case serverError = 500
    }

    public var code: Code
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code.rawValue) \(message)" }
}
