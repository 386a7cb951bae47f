public import TetherCloudClient
public import TetherCore

extension TetherClient {
    /// The logged-in user's linkage rules (the Open API's §2.7).
    public var rules: LinkageRules { LinkageRules(client: self) }
}

/// Linkage rules, each the user's own: when its device comes online, goes offline, raises or
/// clears an alert or a fault, or reports data, and a group of its conditions holds on its input
/// devices' latest data, the cloud writes to devices (output groups side by side, each in order,
/// with delays; a failing write ends its group). The cloud evaluates each event once, whichever
/// of its nodes the device is connected to.
///
/// Errors carry the cloud's code (`TetherError.cloudCode`): 9017 a device you are not bound to,
/// 9015 a malformed rule or a device of another product, 9025 a data point, alert or value the
/// model does not have, 9999 a rule that is not yours.
public struct LinkageRules: Sendable {
    let client: TetherClient

    public func list(limit: Int = 100, skip: Int = 0) async throws(TetherError) -> [LinkageRule] {
        try await client.withCloudSession { api, session throws(TetherError) in try await api.rules(session, limit: limit, skip: skip) }
    }

    public func rule(_ id: String) async throws(TetherError) -> LinkageRule {
        try await client.withCloudSession { api, session throws(TetherError) in try await api.rule(session, id: id) }
    }

    public func create(_ fields: LinkageRuleFields) async throws(TetherError) -> LinkageRule {
        try await client.withCloudSession { api, session throws(TetherError) in try await api.createRule(session, fields) }
    }

    public func update(_ id: String, _ fields: LinkageRuleFields) async throws(TetherError) -> LinkageRule {
        try await client.withCloudSession { api, session throws(TetherError) in try await api.updateRule(session, id: id, fields) }
    }

    public func delete(_ id: String) async throws(TetherError) {
        try await client.withCloudSession { api, session throws(TetherError) in try await api.deleteRule(session, id: id) }
    }

    /// The data points rules may use, per product (empty: every product of your devices).
    public func params(productKeys: [String] = []) async throws(TetherError) -> [String: [LinkageRuleParam]] {
        try await client.withCloudSession { api, session throws(TetherError) in try await api.ruleParams(session, productKeys: productKeys) }
    }
}
