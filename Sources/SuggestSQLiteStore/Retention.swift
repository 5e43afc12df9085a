import SuggestCore

/// How long the store keeps donations, and when a quiet conversation stops being suggested.
public struct Retention: Sendable, Equatable {
    /// Donations older than this many days are deleted without being asked; 0 keeps them forever.
    public var maximumAgeDays: Double
    /// Conversations with no donation for this many days are not suggested (their history stays); 0 turns it off.
    public var idleDays: Double

    /// 90 days of history; conversations idle for 30 days are not suggested (Android's guidance).
    public static let `default` = Retention(maximumAgeDays: 90, idleDays: 30)

    public init(maximumAgeDays: Double, idleDays: Double) {
        self.maximumAgeDays = maximumAgeDays
        self.idleDays = idleDays
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

extension DonationStore {
    /// The store's retention settings.
    public func retention() throws -> Retention {
        try translating {
            var retention = Retention.default
            if let text = try setting("retention.maximumAgeDays"), let value = Double(text) {
                retention.maximumAgeDays = value
            }
            if let text = try setting("retention.idleDays"), let value = Double(text) { retention.idleDays = value }
            return retention
        }
    }

    /// Changes the retention settings and applies the new maximum age at once.
    /// - Returns: what the new maximum age deleted.
    @discardableResult
    public func setRetention(_ retention: Retention, now: Timestamp = .now()) throws -> DeletionReport {
        try translating {
            try database.write {
                try setSetting("retention.maximumAgeDays", JSONWriter.format(retention.maximumAgeDays))
                try setSetting("retention.idleDays", JSONWriter.format(retention.idleDays))
            }
            return try expireDonations(now: now)
        }
    }

    /// Deletes donations older than the retention allows, across all accounts, and recomputes what they fed.
    ///
    /// Cheap when there is nothing to do: one look at the oldest date through its index, no write.
    /// - Parameter retention: the store's settings, when the caller has read them already.
    /// - Returns: what was deleted (empty when nothing expired).
    @discardableResult
    public func expireDonations(now: Timestamp = .now(), retention known: Retention? = nil) throws -> DeletionReport {
        try translating {
            guard let cutoff = try (known ?? retention()).oldestKept(at: now) else { return DeletionReport() }
            let oldest = try database.statement("SELECT oldest_date FROM donation_blocks ORDER BY oldest_date LIMIT 1")
            try oldest.reset()
            let expired = try oldest.step() && oldest.double(0) < cutoff.seconds
            try oldest.reset()
            guard expired else { return DeletionReport() }
            // As for `delete`: what expired leaves the files at once, not at the next checkpoint.
            var report = try deleteDonations(
                inBlocksWhere: { "b.oldest_date < ?1" }, [.real(cutoff.seconds)], account: nil
            ) { $0.date < cutoff.seconds }
            if report.donations > 0 { report.logTruncated = try truncateLog() }
            return report
        }
    }
}
