/// How much of each guessable or costly operation one client gets. The defaults are the
/// production values (README, "Security"); tests lower them.
public struct AbusePolicy: Sendable {
    /// Device registrations (`POST /dev/devices`) per product, from all sources together…
    public var registrationsPerProduct = RateLimit(600, per: 60)
    /// …and from one source address (an IPv6 source is its /64).
    public var registrationsPerSource = RateLimit(30, per: 60)

    /// Wrong passcodes (`POST /app/bindings`) one user may send…
    public var bindFailuresPerUser = RateLimit(10, per: 15 * 60)
    /// …and one device may receive from all users together. With 10 upper-case letters
    /// (47 bits) nobody guesses a passcode at this rate.
    public var bindFailuresPerDevice = RateLimit(10, per: 15 * 60)

    /// Wrong passwords for one account from one source lock that source out of the account;
    /// other sources (its owner's) are unaffected.
    public var loginFailuresPerAccountAndSource = RateLimit(10, per: 15 * 60)
    /// Wrong passwords for one account from all sources together lock the account for
    /// everyone: only an attacker with many addresses reaches this.
    public var loginFailuresPerAccount = RateLimit(100, per: 15 * 60)

    public init() {}
}
