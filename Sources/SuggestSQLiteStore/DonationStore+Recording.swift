import SuggestCore

/// What an import did.
public struct ImportReport: Sendable, Equatable {
    /// Lines read, blank lines excluded.
    public var read = 0
    public var recorded = 0
    /// Donations whose identifier the account already had: no-ops.
    public var duplicates = 0
    /// Donations older than the store's retention: not kept.
    public var expired = 0
    /// Lines refused (only with `skipInvalid`; otherwise the first one aborts the import).
    public var rejected: [InputError] = []

    public init() {}
}

/// The outcome of one donation.
public enum DonationOutcome: Sendable, Equatable {
    case recorded(identifier: String)
    /// The account already had a donation with this identifier: nothing changed.
    case duplicate(identifier: String)
    /// Older than the store's retention allows: not kept.
    case expired
}

extension DonationStore {
    /// Records one donation and updates its conversation's ranking state, in one transaction.
    /// - Complexity: O(log n) in the store's size (index look-ups, one block and one bucket of identifiers read and
    ///   rewritten); independent of the history's length.
    /// The date is kept at the precision `export` writes (a clock's nanoseconds are not), so that exporting and
    /// importing gives the same store.
    public func donate(_ interaction: Interaction, now: Timestamp = .now()) throws -> DonationOutcome {
        var interaction = interaction
        interaction.date = Timestamp(rfc3339: interaction.date.rfc3339) ?? interaction.date
        return try translating {
            let retention = try retention()
            try expireDonations(now: now, retention: retention)
            if let cutoff = retention.oldestKept(at: now), interaction.date < cutoff { return .expired }
            return try database.write {
                let writer = DonationWriter(database: database, policy: policy, types: types)
                let identifier = try writer.record(interaction)
                try writer.flush()
                if let identifier { return .recorded(identifier: identifier) }
                return .duplicate(identifier: interaction.identifier ?? "")
            }
        }
    }

    /// Records donations from a stream of parsed lines in one transaction: all of them or, if anything fails, none.
    ///
    /// - Parameters:
    ///   - next: the next line's number and parsed donation, or `nil` at the end.
    ///   - skipInvalid: keep the valid lines and report the invalid ones instead of aborting.
    ///   - progress: called every `progressInterval` lines with the count so far.
    ///   - expectedDonations: roughly how many lines are coming, when known: a large import into a comparatively
    ///     small store reads every identifier key of the store at its start and finds duplicates in memory.
    /// - Throws: the first `InputError` (with its line) unless `skipInvalid`; `StoreError` if the store fails.
    ///   Either way nothing is recorded.
    public func importDonations(
        skipInvalid: Bool = false, now: Timestamp = .now(), progressInterval: Int = 100_000, expectedDonations: Int? = nil,
        progress: (Int) -> Void = { _ in }, next: () throws -> (line: Int, donation: Result<Interaction, InputError>)?
    ) throws -> ImportReport {
        let preparer = makePreparer()
        return try importPreparedDonations(
            skipInvalid: skipInvalid, now: now, progressInterval: progressInterval,
            expectedDonations: expectedDonations, progress: progress
        ) {
            try next().map { ($0.line, $0.donation.map(preparer.prepare)) }
        }
    }

    /// `importDonations` for donations prepared ahead by a preparer of this store (`makePreparer()`), typically on
    /// the thread that parses them: the same records, with less work left for the writing thread.
    public func importPreparedDonations(
        skipInvalid: Bool = false, now: Timestamp = .now(), progressInterval: Int = 100_000, expectedDonations: Int? = nil,
        progress: (Int) -> Void = { _ in },
        next: () throws -> (line: Int, donation: Result<PreparedDonation, InputError>)?
    ) throws -> ImportReport {
        try translating {
            let retention = try retention()
            try expireDonations(now: now, retention: retention)
            let cutoff = retention.oldestKept(at: now)
            // A large import touches many pages; a larger page cache keeps them from being spilled to the WAL
            // more than once. Restored afterwards: a share extension's memory is precious.
            try database.execute("PRAGMA cache_size = -262144")
            defer { try? database.execute("PRAGMA cache_size = -2000") }
            return try database.write {
                var report = ImportReport()
                let writer = DonationWriter(database: database, policy: policy, types: types)
                // How many donations the store holds, from the size of its buckets of identifiers (a sum over the
                // blocks would read the whole log): read only when the import may be large.
                let expected = expectedDonations ?? 0
                let stored =
                    expected < 100_000
                    ? 0
                    : Int(
                        try database.statement(
                            "SELECT COALESCE(SUM(length(entries)), 0) / \(IdentifierIndex.entrySize) FROM donation_identifiers"
                        ).scalarInt() ?? 0)
                if expected >= max(100_000, stored / 2) {
                    try writer.loadIdentifierKeys(stored: stored, expected: expected)
                }
                while let (line, parsed) = try next() {
                    report.read += 1
                    if report.read % progressInterval == 0 { progress(report.read) }
                    // Consumed: binding the donation out of a borrowed result copied it, every string and array.
                    switch consume parsed {
                    case .failure(let error):
                        guard skipInvalid else { throw error.at(line: line) }
                        report.rejected.append(error.at(line: line))
                    case .success(let donation):
                        if let cutoff, donation.interaction.date < cutoff {
                            report.expired += 1
                        } else if try writer.record(donation) != nil {
                            report.recorded += 1
                        } else {
                            report.duplicates += 1
                        }
                    }
                }
                try writer.flush()
                return report
            }
        }
    }
}
