/// How long a store keeps donations, and when a quiet conversation stops being suggested.
public struct Retention: Sendable, Equatable {
    /// Donations older than this many days are deleted without being asked; 0 keeps them forever.
    public var maximumAgeDays: Double
    /// Conversations with no donation for this many days are not suggested (their history stays); 0 turns it off.
    public var idleDays: Double

    /// 90 days of history; conversations idle for 30 days are not suggested (Android's guidance).
    public static let `default` = Retention(maximumAgeDays: 90, idleDays: 30)

    /// The largest value either setting takes: about 2,700 years.
    public static let maximumDays = 1_000_000.0

    /// - Parameters:
    ///   - maximumAgeDays: days a donation is kept; 0 keeps every one.
    ///   - idleDays: days without a donation after which a conversation is no longer suggested; 0 never hides one.
    public init(maximumAgeDays: Double, idleDays: Double) {
        self.maximumAgeDays = maximumAgeDays
        self.idleDays = idleDays
    }

    /// Checks both settings.
    /// - Throws: `InputError` naming the setting as its property is named (`maximumAgeDays`, `idleDays`) when it is
    ///   not a number of days from 0 to `maximumDays`.
    public func validate() throws(InputError) {
        for (field, value) in [("maximumAgeDays", maximumAgeDays), ("idleDays", idleDays)] {
            guard value.isFinite, value >= 0, value <= Self.maximumDays else {
                throw InputError(field: field, message: "is not a number of days from 0 to 1000000")
            }
        }
    }

    /// The oldest donation date the store keeps at `now`: the start (UTC) of the day that holds
    /// `now − maximumAgeDays`, or `nil` when everything is kept.
    ///
    /// Whole days, so that expiry deletes something, and folds an account's learned weights again (one pass over
    /// its history), at most once a day per account, however often a store is maintained: a donation leaves the
    /// store between `maximumAgeDays` and `maximumAgeDays` plus one day after its date. A donation that arrives
    /// dated before it is refused, by the same cutoff: so none arrives that expires at once, and a store keeps
    /// only what it would admit, which makes its export import whole into a store with the same retention the same
    /// day (with a cutoff to the second for arrivals, donations of the last day's hours were kept yet refused).
    public func oldestKept(at now: Timestamp) -> Timestamp? {
        guard maximumAgeDays > 0 else { return nil }
        let day = 86_400.0
        let oldest = now.adding(-maximumAgeDays * day)
        return Timestamp(seconds: (oldest.seconds / day).rounded(.down) * day)
    }

    /// The oldest latest-donation date of a conversation that may still be suggested at `at`.
    public func notIdleSince(at: Timestamp) -> Timestamp? {
        idleDays > 0 ? at.adding(-idleDays * 86_400) : nil
    }
}
