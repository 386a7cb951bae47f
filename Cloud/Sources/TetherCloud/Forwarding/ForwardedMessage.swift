import TetherCore

/// What a device sent that a product's forwarders may receive.
public enum ForwardKind: String, Sendable, Hashable, CaseIterable {
    /// Property reports (the values the cloud accepted).
    case property
    /// Events posted by the device.
    case event
    /// Messages on the device's custom topics.
    case user
    /// The device connected or disconnected.
    case presence

    /// `property,event`: a set of kinds as the admin command and the table write it.
    static func parse(_ text: String) throws -> Set<ForwardKind> {
        var kinds = Set<ForwardKind>()
        for name in text.split(separator: ",") {
            guard let kind = ForwardKind(rawValue: name.trimmingPrefix(" ").description) else {
                throw CloudAPIError.formInvalid(detail: "a forwarded kind is property, event, user or presence (not \(name))")
            }
            kinds.insert(kind)
        }
        guard !kinds.isEmpty else { throw CloudAPIError.formInvalid(detail: "a forwarder needs at least one kind") }
        return kinds
    }

    static func encode(_ kinds: Set<ForwardKind>) -> String { kinds.map(\.rawValue).sorted().joined(separator: ",") }
}

/// One device message as a forwarder receives it (the body of the HTTP POST):
/// `{"kind", "product_key", "device_name", "did", "topic", "payload" | "payload_base64", "timestamp"}`.
struct ForwardedMessage: Sendable {
    var kind: ForwardKind
    var productKey: String
    var deviceName: String
    var did: String
    /// The MQTT topic the device used ("" for presence).
    var topic: String
    /// JSON for property, event and presence messages.
    var payload: JSONValue?
    /// Bytes for custom topics (opaque).
    var bytes: [UInt8]?
    var atMs: Int64

    var json: JSONValue {
        var object: JSONObject = [
            "kind": .string(kind.rawValue), "product_key": .string(productKey), "device_name": .string(deviceName), "did": .string(did),
            "topic": .string(topic), "timestamp": .int(atMs),
        ]
        if let payload { object["payload"] = payload }
        if let bytes { object["payload_base64"] = .string(bytes.tetherBase64) }
        return .object(object)
    }
}
