/// The rules every store applies to a donation before recording it, against the moment of recording.
///
/// **Dates from the future.** A donation may be dated at most `clockSkewTolerance` after the store's clock (the
/// skew of an ordinary phone or server clock); such a donation is recorded as of the moment of recording, so that it
/// can never rank above one that is truly the latest. One dated later than that is refused: it is a clock that is
/// wrong, or a date in the wrong unit (milliseconds read as seconds), and a donation from the future would take the
/// first place until that date, then linger.
///
/// **Retention.** A donation older than the store keeps is not recorded (`DonationOutcome.expired`).
public enum DonationAdmission {
    /// How far ahead of the store's clock a donation's date may be: 10 minutes.
    public static let clockSkewTolerance = 600.0

    /// What to do with one donation.
    public enum Decision: Sendable, Equatable {
        /// Record it, with this date (its own, or the moment of recording for a date just ahead of it).
        case record(Interaction)
        /// Older than the retention: not kept.
        case expired
    }

    /// Applies the rules.
    /// - Parameters:
    ///   - oldestKept: the oldest date the retention keeps at `now`, if any.
    /// - Returns: to record, the donation dated at the precision `export` writes (`Timestamp.atExportPrecision`,
    ///   microseconds near today), so that exporting and importing gives the same store, and every store ranks one
    ///   history alike: a single donation is often dated by a clock's nanoseconds, and so may a line of an import
    ///   be (an import that kept them ranked otherwise than a Redis store, which rounded them).
    /// - Throws: `InputError` on `date` for a donation dated more than `clockSkewTolerance` after `now`.
    public static func decide(
        _ interaction: Interaction, now: Timestamp, oldestKept: Timestamp?
    ) throws(InputError) -> Decision {
        var interaction = interaction
        // A date built in code (the JSON reader makes none of these): infinity trapped in the message below, and a
        // NaN reached SQLite as NULL.
        guard interaction.date.seconds.isFinite else {
            throw InputError(field: "date", message: "is not a finite moment (\(interaction.date.seconds))")
        }
        if interaction.date > now {
            let ahead = interaction.date.seconds - now.seconds
            guard ahead <= clockSkewTolerance else {
                throw InputError(
                    field: "date",
                    message: "\(interaction.date.rfc3339) is \(describe(ahead)) after the store's clock "
                        + "(\(now.rfc3339)); a donation may be at most 10 minutes ahead: check the sender's clock and "
                        + "this machine's, and that the date is in seconds, not milliseconds")
            }
            interaction.date = now
        }
        interaction.date = interaction.date.atExportPrecision
        if let oldestKept, interaction.date < oldestKept { return .expired }
        return .record(interaction)
    }

    /// The refusal of a donation of `account` in an import that records into `required` only: in words that fit
    /// every door that names the account (`--account`, `ImportOptions.requiredAccount`).
    package static func otherAccount(_ account: String, required: String) -> InputError {
        InputError(
            field: "account",
            message: "'\(account.prefix(60))' differs from \(required), the one account this import records into; "
                + "import without naming an account to keep each donation's own, or remove the donations' account "
                + "member to import them into \(required)")
    }

    /// "3 days", "2 hours", "11 minutes", "10 minutes 59 seconds", "10 minutes 0.3 seconds": within the hour the
    /// seconds too, to the millisecond rounded up, so that a date just past the 10 minutes allowed never reads as
    /// "10 minutes after".
    static func describe(_ seconds: Double) -> String {
        func counted(_ value: Double, _ unit: String) -> String {
            // `Int(value)` only below the bound: a date of 1e300 seconds trapped here.
            guard value < 1e15 else { return "more than a million million " + unit + "s" }
            return String(Int(value)) + " " + unit + (Int(value) == 1 ? "" : "s")
        }
        if seconds >= 2 * 86_400 { return counted(seconds / 86_400, "day") }
        if seconds >= 2 * 3_600 { return counted(seconds / 3_600, "hour") }
        guard seconds < 3_600 else { return counted(seconds / 60, "minute") }
        let milliseconds = Int((seconds * 1_000).rounded(.up))
        let minutes = counted(Double(milliseconds / 60_000), "minute")
        let rest = milliseconds % 60_000
        guard rest > 0 else { return minutes }
        guard rest % 1_000 != 0 else { return minutes + " " + counted(Double(rest / 1_000), "second") }
        var fraction = String(rest % 1_000)
        fraction = String(repeating: "0", count: 3 - fraction.count) + fraction
        while fraction.hasSuffix("0") { fraction.removeLast() }
        return minutes + " \(rest / 1_000).\(fraction) seconds"
    }
}

extension ImportOptions {
    /// Refuses a moment of recording that no clock gives: not finite, or later than `clock` by more than
    /// `DonationAdmission.clockSkewTolerance`. An earlier one is fine (a history replayed as of then); a later one
    /// let a donation dated a year ahead in through a library's import, where `donate` refuses it: it ranked first
    /// until that date, and the store's export could not be imported anywhere else.
    public func checkMoment(against clock: Timestamp = .now()) throws(InputError) {
        guard now.seconds.isFinite else {
            throw InputError(field: "now", message: "is not a finite moment (\(now.seconds))")
        }
        let ahead = now.seconds - clock.seconds
        guard ahead <= DonationAdmission.clockSkewTolerance else {
            throw InputError(
                field: "now",
                message: "\(now.rfc3339) is \(DonationAdmission.describe(ahead)) after this machine's clock "
                    + "(\(clock.rfc3339)); an import is recorded as of now or an earlier moment")
        }
    }

    /// Refuses a default or required account no donation could carry (empty, over 4,096 bytes, with a NUL), as every
    /// call that names an account refuses it: an empty required account refused each donation as differing "from ,
    /// the one account this import records into".
    public func checkAccounts() throws(InputError) {
        try Interaction.checkName(defaultAccount, field: "defaultAccount")
        if let requiredAccount { try Interaction.checkName(requiredAccount, field: "requiredAccount") }
    }

    /// Checks one line of an import, as every store does: the required account, the future-date rule and
    /// retention. A line that expires is counted in `report`; an invalid one is thrown, or counted as rejected with
    /// `skipInvalid`.
    /// - Returns: the donation to record, or `nil` when it is counted as expired or rejected.
    public func admit(
        _ parsed: Result<Interaction, InputError>, line: Int, oldestKept: Timestamp?, into report: inout ImportReport
    ) throws(InputError) -> Interaction? {
        do throws(InputError) {
            let interaction = try parsed.get()
            if let requiredAccount, !interaction.account.hasSameBytes(as: requiredAccount) {
                throw DonationAdmission.otherAccount(interaction.account, required: requiredAccount)
            }
            switch try DonationAdmission.decide(interaction, now: now, oldestKept: oldestKept) {
            case .expired:
                report.expired += 1
                return nil
            case .record(let admitted):
                return admitted
            }
        } catch {
            guard skipInvalid else { throw error.at(line: line) }
            report.reject(error.at(line: line))
            return nil
        }
    }
}
