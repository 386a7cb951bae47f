import Synchronization

/// The broker's access control from its configuration file: `allow_anonymous`, a
/// `password_file` and an `acl_file`. ``reload(_:)`` reads them again (SIGHUP): connected
/// clients keep their connection, and every later CONNECT, PUBLISH and SUBSCRIBE is decided by
/// the new files. A file that does not read leaves the old rules in place.
public final class MQTTFileSecurity: MQTTBrokerHooks {
    struct Rules: Sendable {
        var allowAnonymous: Bool
        var passwords: MQTTPasswordFile?
        var acl: MQTTAccessControlList?
    }

    private let rules: Mutex<Rules>
    /// With an ACL, every delivery is checked against its read rules.
    public let checksDeliveries: Bool

    public init(_ configuration: MQTTBrokerFileConfiguration) throws(MQTTError) {
        rules = Mutex(try Self.read(configuration))
        checksDeliveries = configuration.aclFile != nil
    }

    /// Reads the files again; on an error nothing changes. An `acl_file` can be changed, not
    /// added or removed (whether deliveries are checked is decided at start).
    public func reload(_ configuration: MQTTBrokerFileConfiguration) throws(MQTTError) {
        guard (configuration.aclFile != nil) == checksDeliveries else {
            throw MQTTError(.invalidConfiguration, "acl_file was \(checksDeliveries ? "removed" : "added"): that takes a restart")
        }
        let fresh = try Self.read(configuration)
        rules.withLock { $0 = fresh }
    }

    private static func read(_ configuration: MQTTBrokerFileConfiguration) throws(MQTTError) -> Rules {
        Rules(
            allowAnonymous: configuration.allowsAnonymous,
            passwords: try configuration.passwordFile.map { path throws(MQTTError) in try MQTTPasswordFile.load(path: path) },
            acl: try configuration.aclFile.map { path throws(MQTTError) in try MQTTAccessControlList.load(path: path) }
        )
    }

    /// A user name counts only if the password file vouches for it: without one, a client that
    /// names a user connects (if anonymous clients may) as anonymous, so that no ACL rule of a
    /// user applies to a name nobody checked.
    public func authenticate(_ request: MQTTConnectRequest) async -> MQTTAuthentication {
        let current = rules.withLock { $0 }
        guard let username = request.username, let passwords = current.passwords else {
            return current.allowAnonymous ? .accepted(MQTTPrincipal(clientID: request.clientID)) : .refused(.notAuthorized)
        }
        guard passwords.verify(user: username, password: request.password ?? []) else { return .refused(.badUserNameOrPassword) }
        return .accepted(MQTTPrincipal(clientID: request.clientID, username: username))
    }

    public func authorizePublish(_ principal: MQTTPrincipal, topic: String) -> Bool {
        guard let acl = rules.withLock({ $0.acl }) else { return true }
        return acl.mayPublish(username: principal.username, clientID: principal.clientID, topic: topic)
    }

    public func authorizeSubscribe(_ principal: MQTTPrincipal, filter: String) -> Bool {
        guard let acl = rules.withLock({ $0.acl }) else { return true }
        return acl.maySubscribe(username: principal.username, clientID: principal.clientID, filter: filter)
    }

    public func authorizeDelivery(_ principal: MQTTPrincipal, topic: String) -> Bool {
        guard let acl = rules.withLock({ $0.acl }) else { return true }
        return acl.mayReceive(username: principal.username, clientID: principal.clientID, topic: topic)
    }
}
