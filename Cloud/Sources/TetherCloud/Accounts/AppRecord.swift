/// An application registered with `tether-cloud admin app create`; its id is the
/// `X-Gizwits-Application-Id` every request carries.
public struct AppRecord: Sendable, Equatable {
    public var appID: String
    public var name: String
    public var secret: String
    /// Where third-party ID tokens for this app are verified; nil when third-party login is off.
    public var thirdParty: ThirdPartyIssuer?
}
