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

    public init(maximumAgeDays: Double, idleDays: Double) {
        self.maximumAgeDays = maximumAgeDays
        self.idleDays = idleDays
    }

    /// Checks both settings.
    /// - Throws: `InputError` naming the setting (`maxAgeDays`, `idleDays`) that is not a number of days from 0 to
    ///   `maximumDays`.
    public func validate() throws(InputError) {
        for (field, value) in [("maxAgeDays", maximumAgeDays), ("idleDays", idleDays)] {
            guard value.isFinite, value >= 0, value <= Self.maximumDays else {
                throw InputError(field: field, message: "is not a number of days from 0 to 1000000")
            }
        }
    }

    /// The oldest donation date kept at `now`, or `nil` when everything is kept.
    public func oldestKept(at now: Timestamp) -> Timestamp? {
        maximumAgeDays > 0 ? now.adding(-maximumAgeDays * 86_400) : nil
    }

    /// The oldest latest-donation date of a conversation that may still be suggested at `at`.
    public func notIdleSince(at: Timestamp) -> Timestamp? {
        idleDays > 0 ? at.adding(-idleDays * 86_400) : nil
    }
}
