/// Limits and lifetimes of the account service. The defaults are the production values;
/// tests shorten them.
public struct AccountPolicy: Sendable {
    /// How long a user token is valid (the reference: 7 days).
    public var tokenLifetime: Int64 = 7 * 24 * 3600
    /// How long a token replaced by `/app/token/refresh` keeps working, so that requests already
    /// sent with it are not refused.
    public var refreshGrace: Int64 = 60
    /// How long an app token from `/app/request_token` is valid.
    public var appTokenLifetime: Int64 = 24 * 3600
    /// bcrypt's work factor.
    public var bcryptCost: UInt8 = 10

    /// After this many failed logins from one source each further attempt is answered late…
    public var slowAfterFailures: Int64 = 3
    /// …by this many seconds per failure beyond the threshold, at most `maximumDelay`.
    public var delayPerFailure: Double = 1
    public var maximumDelay: Double = 5
    // Lockouts are rate limits per account and source: ``AbusePolicy``.

    /// SMS codes: valid 24 h (the reference), one per number per minute, five per hour, and
    /// void after five wrong guesses.
    public var smsCodeLifetime: Int64 = 24 * 3600
    public var smsMinimumInterval: Int64 = 60
    public var smsMaximumPerHour: Int64 = 5
    public var smsMaximumAttempts: Int64 = 5

    /// How long the links in confirmation and reset e-mails work.
    public var emailLinkLifetime: Int64 = 24 * 3600

    /// How long an IoT token (`POST /app/iot_token`, for a device's `account/bind`) may be
    /// used, once.
    public var iotTokenLifetime: Int64 = 600

    public init() {}
}
