import NIOHTTP1
public import TetherCloudProtocol
public import TetherCore

/// A linkage rule: a device's event, conditions on devices' data, and the writes that follow.
public typealias LinkageRule = RuleBody
/// A rule's fields, as written.
public typealias LinkageRuleFields = RuleFieldsBody
/// A data point rules may read and write.
public typealias LinkageRuleParam = RuleParamBody

extension TetherCloudAPI {
    // MARK: Linkage rules (reference §2.7)

    public func rules(_ session: CloudSession, limit: Int = 100, skip: Int = 0) async throws(TetherError) -> [LinkageRule] {
        let answer = try await call(.GET, "/app/rules?limit=\(limit)&skip=\(skip)", session: session)
        return try (answer["rules"]?.arrayValue ?? []).map { entry throws(TetherError) in try decodeBody("a rule", entry, as: RuleBody.init(json:)) }
    }

    public func rule(_ session: CloudSession, id: String) async throws(TetherError) -> LinkageRule {
        try decodeBody("the rule", try await call(.GET, "/app/rules/\(id.tetherPercentEncoded)", session: session), as: RuleBody.init(json:))
    }

    public func createRule(_ session: CloudSession, _ fields: LinkageRuleFields) async throws(TetherError) -> LinkageRule {
        try decodeBody("the rule", try await call(.POST, "/app/rules", body: fields.json, session: session), as: RuleBody.init(json:))
    }

    public func updateRule(_ session: CloudSession, id: String, _ fields: LinkageRuleFields) async throws(TetherError) -> LinkageRule {
        try decodeBody("the rule", try await call(.PUT, "/app/rules/\(id.tetherPercentEncoded)", body: fields.json, session: session), as: RuleBody.init(json:))
    }

    public func deleteRule(_ session: CloudSession, id: String) async throws(TetherError) {
        _ = try await call(.DELETE, "/app/rules/\(id.tetherPercentEncoded)", session: session)
    }

    /// The data points rules may use, per product: `productKeys`, or (empty) the products of
    /// every device the user is bound to.
    public func ruleParams(_ session: CloudSession, productKeys: [String] = []) async throws(TetherError) -> [String: [LinkageRuleParam]] {
        let query = productKeys.isEmpty ? "" : "?product_key=\(productKeys.joined(separator: ",").tetherPercentEncoded)"
        let answer = try await call(.GET, "/app/rules/params\(query)", session: session)
        var params: [String: [LinkageRuleParam]] = [:]
        let object = answer.objectValue ?? [:]
        for key in object.keys {
            params[key] = try (object[key]?.arrayValue ?? []).map { entry throws(TetherError) in
                try decodeBody("a rule's data point", entry, as: RuleParamBody.init(json:))
            }
        }
        return params
    }
}
