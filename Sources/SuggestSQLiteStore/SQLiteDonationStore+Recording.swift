import SuggestCore

extension SQLiteDonationStore {
    /// Records one donation and updates its conversation's ranking state, in one transaction.
    /// - Complexity: O(log n) in the store's size (index look-ups, one block and one recent row of identifiers read
    ///   and rewritten, and one bucket read; now and then a range of 16 buckets rewritten, `IdentifierIndex`);
    ///   independent of the history's length.
    public func record(_ donation: Interaction, now: Timestamp) throws -> DonationOutcome {
        try writingOne { store in try store.admitAndRecord(donation, now: now) }
    }

    public func recordShare(_ donation: Interaction, now: Timestamp) throws -> DonationOutcome? {
        try writingOne { store in
            // A conversation's row goes with its last donation; text compared byte for byte, as SQL compares it.
            let known = try store.database.statement(
                "SELECT id FROM conversations WHERE account = ? AND conversation_identifier = ?"
            ).scalarInt([.text(donation.account), .text(donation.conversationIdentifier)])
            guard let known else { return nil }
            var groups: [String] = []
            if donation.groupIdentifier == nil {
                let select = try store.database.statement(
                    "SELECT group_identifier FROM conversation_groups WHERE conversation_id = ? LIMIT 2")
                try select.reset([.integer(Int64(known))])
                defer { _ = try? select.reset() }
                while try select.step() { groups.append(select.text(0) ?? "") }
            }
            return try store.admitAndRecord(donation.inheritingGroup(of: groups), now: now)
        }
    }

    /// Runs one donation's write in a transaction: a server's on its writing connection, with the others that
    /// arrive meanwhile (`groupCommit`), a command's on this connection.
    private func writingOne<T>(_ body: @escaping (SQLiteDonationStore) throws -> T) throws -> T {
        try translating {
            if let groupCommit { return try groupCommit.commit(body) }
            return try database.write { try body(self) }
        }
    }

    /// Admits the donation against the store's retention and the clock, and records it if admitted, inside the
    /// caller's transaction (where the retention is read too: no read transaction of its own).
    func admitAndRecord(_ donation: Interaction, now: Timestamp) throws -> DonationOutcome {
        let interaction: Interaction
        switch try DonationAdmission.decide(
            donation, now: now, oldestKept: try retention().oldestKept(at: now))
        {
        case .expired: return .expired
        case .record(let admitted): interaction = admitted
        }
        return try withDonationWriter { writer in
            if let identifier = try writer.record(interaction) { return .recorded(identifier: identifier) }
            return .duplicate(identifier: interaction.identifier ?? "")
        }
    }

    public func importDonations(
        _ options: ImportOptions, progress: (ImportProgress) -> Void, interruption: () throws -> Void,
        next: () throws -> NumberedDonation?
    ) throws -> ImportReport {
        let options = options.fixingNow()
        let preparer = makePreparer()
        // The required account, as `importJSONLines` checks it while parsing: a library's donations built in code
        // name their own account, and one naming another was recorded there.
        func nextChecked() throws -> NumberedDonation? {
            guard var numbered = try next() else { return nil }
            if let required = options.requiredAccount, case .success(let interaction) = numbered.donation {
                do throws(InputError) {
                    try Self.check(interaction, account: required)
                } catch {
                    numbered.donation = .failure(error)
                }
            }
            return numbered
        }
        if let groupCommit, let expected = options.expectedDonations, expected < Self.largeImport {
            // A request's batch: parsed and prepared here, on the request's own thread, so that only the writing
            // waits for the shared connection.
            var prepared: [(line: Int, donation: Result<PreparedDonation, InputError>)] = []
            prepared.reserveCapacity(expected)
            while let numbered = try nextChecked() {
                prepared.append((numbered.line, numbered.donation.map(preparer.prepare)))
                if prepared.count & 255 == 0 { try interruption() }
            }
            // Refused here, before it reaches the writer: the group's pieces record into one writer, which a piece
            // failing midway would leave holding its first lines (and would fail the whole group).
            if !options.skipInvalid {
                for (line, donation) in prepared {
                    if let refusal = Self.refusal(of: donation.map(\.interaction), now: options.now) {
                        throw refusal.at(line: line)
                    }
                }
            }
            return try translating {
                try groupCommit.commit { writer in
                    let cutoff = try writer.retention().oldestKept(at: options.now)
                    var donations = prepared.makeIterator()
                    return try writer.recordPrepared(options, cutoff: cutoff, progress: { _ in }, interruption: {}) {
                        donations.next()
                    }
                }
            }
        }
        return try importPreparedDonations(options, progress: progress, interruption: interruption) {
            try nextChecked().map { ($0.line, $0.donation.map(preparer.prepare)) }
        }
    }

    /// Imports of this many donations or more are large: they get a larger page cache for their transaction and
    /// commit on their own connection, never in a group.
    static let largeImport = 10_000

    /// Records JSON Lines with two threads: this one writes while another reads, decodes and prepares the lines
    /// (`ParsingLineFeed`), so that the parsing overlaps SQLite's work.
    public func importJSONLines(
        from lines: some JSONLineSource, options: ImportOptions, progress: (ImportProgress) -> Void,
        interruption: () throws -> Void
    ) throws -> ImportReport {
        var options = options.fixingNow()
        // Used by the parsing thread alone, from here on.
        nonisolated(unsafe) let preparer = makePreparer()
        let defaultAccount = options.defaultAccount
        let requiredAccount = options.requiredAccount
        let total = lines.totalBytes
        let feed = ParsingLineFeed(source: lines) { bytes in
            preparer.prepare(line: bytes, defaultAccount: defaultAccount) { (interaction) throws(InputError) in
                if let requiredAccount { try Self.check(interaction, account: requiredAccount) }
            }
        }
        // Donation lines run to a few hundred bytes; a rough count is all the store needs.
        if options.expectedDonations == nil { options.expectedDonations = total.map { $0 / 400 } }
        return try importPreparedDonations(
            options,
            progress: { report in
                progress(ImportProgress(lines: report.lines, bytesRead: feed.bytesRead, totalBytes: total))
            },
            interruption: interruption
        ) {
            // Moved out, not copied: copying a donation retains and releases each of its strings and arrays.
            guard let parsed = try feed.next() else { return nil }
            let line = parsed.line
            return (line, (consume parsed).donation)
        }
    }

    /// Refuses a donation that names another account than the one required.
    static func check(_ interaction: Interaction, account: String) throws(InputError) {
        // Byte for byte, as the store compares accounts (`!=` takes canonically equivalent spellings for one).
        guard !interaction.account.hasSameBytes(as: account) else { return }
        throw DonationAdmission.otherAccount(interaction.account, required: account)
    }

    /// `importDonations` for donations prepared ahead by a preparer of this store (`makePreparer()`), typically on
    /// the thread that parses them: the same records, with less work left for the writing thread.
    func importPreparedDonations(
        _ options: ImportOptions, progress: (ImportProgress) -> Void, interruption: () throws -> Void,
        next: () throws -> (line: Int, donation: Result<PreparedDonation, InputError>)?
    ) throws -> ImportReport {
        try translating {
            // The first donation is awaited before the write lock is taken: `import -` fed by a slow producer (or
            // typed at a terminal) held every other process's writes off while it waited for its first line, and
            // they failed after 30 s.
            var first = try next()
            // A large import touches many pages; a larger page cache (`largeImportCacheKiB`) keeps them from being
            // spilled to the WAL more than once. Restored afterwards: a share extension's memory is precious, and a
            // server has a connection per thread (its large batches get 12 MiB, not 256: one body of 65,000
            // donations took the server from 15 to 317 MB, 227 MB of which stayed). A small batch keeps the
            // connection's cache as it is: shrinking it would drop the pages the next request needs.
            let large = options.expectedDonations.map { $0 >= Self.largeImport } ?? true
            if large && pageCacheKiB < largeImportCacheKiB {
                try database.execute("PRAGMA cache_size = -\(largeImportCacheKiB)")
            }
            defer {
                if large && pageCacheKiB < largeImportCacheKiB {
                    try? database.execute("PRAGMA cache_size = -\(pageCacheKiB)")
                }
            }
            var started = false
            // Other processes' writers wait for the lock while the import goes on (`Database.beginWriting()`): it
            // says so about every second.
            var given = 0
            var saidAt = ContinuousClock.now
            var said = false
            defer { if said { database.noteImportEnded() } }
            return try database.write {
                database.noteImportBegins()
                said = true
                // Read in the transaction: a `config --max-age-days` that committed while the import waited for
                // the lock holds for it (read before, older donations were recorded past the new limit, and the
                // daily expiry removed them later without the rewrite that the setting's change promises).
                let cutoff = try retention().oldestKept(at: options.now)
                return try recordPrepared(options, cutoff: cutoff, progress: progress, interruption: interruption) {
                    given += 1
                    if given & 1023 == 0, ContinuousClock.now - saidAt >= .seconds(1) {
                        database.noteImportGoesOn()
                        saidAt = .now
                    }
                    guard started else {
                        started = true
                        return first.take()
                    }
                    return try next()
                }
            }
        }
    }

    /// The body of an import's transaction: records every donation `next` gives, in the caller's transaction.
    /// - Parameter cutoff: the oldest date the store keeps (`Retention.oldestKept(at:)`); older donations expire.
    func recordPrepared(
        _ options: ImportOptions, cutoff: Timestamp?, progress: (ImportProgress) -> Void,
        interruption: () throws -> Void, next: () throws -> (line: Int, donation: Result<PreparedDonation, InputError>)?
    ) throws -> ImportReport {
        let report = try withDonationWriter { writer in
            try recordPrepared(
                options, cutoff: cutoff, into: writer, progress: progress, interruption: interruption, next: next)
        }
        // Once more after the writing, before the commit: an input cut short by the same Ctrl-C (a pipe's producer)
        // must not be committed as if it had ended, and the writing of a large import takes seconds.
        try interruption()
        return report
    }

    /// `recordPrepared` into `writer`, which the caller flushes, then asks `interruption` once more.
    private func recordPrepared(
        _ options: ImportOptions, cutoff: Timestamp?, into writer: DonationWriter, progress: (ImportProgress) -> Void,
        interruption: () throws -> Void, next: () throws -> (line: Int, donation: Result<PreparedDonation, InputError>)?
    ) throws -> ImportReport {
        var report = ImportReport()
        // How many donations the store holds, from the size of its index of identifiers (a sum over the
        // blocks would read the whole log): read only when the import may be large.
        let expected = options.expectedDonations ?? 0
        let stored = expected < 100_000 ? 0 : try IdentifierIndex.storedCount(in: database)
        if expected >= max(100_000, stored / 2) {
            try writer.loadIdentifierKeys(stored: stored, expected: expected)
        }
        while let (line, parsed) = try next() {
            report.read += 1
            // Asked at the first donation too: a caller learns that writing has begun.
            if report.read & 255 == 1 { try interruption() }
            if report.read % options.progressInterval == 0 {
                progress(ImportProgress(lines: report.read, bytesRead: 0, totalBytes: nil))
            }
            // Consumed: binding the donation out of a borrowed result copied it, every string and array.
            switch consume parsed {
            case .failure(let error):
                guard options.skipInvalid else { throw error.at(line: line) }
                report.reject(error.at(line: line))
            case .success(let donation):
                do {
                    // `DonationAdmission.decide`'s rules, without copying a donation that passes them as it is
                    // (nearly all do): the future-date rule, the date as `export` writes it, the retention.
                    let date = donation.interaction.date
                    let admitted: PreparedDonation?
                    if date > options.now {
                        _ = try DonationAdmission.decide(donation.interaction, now: options.now, oldestKept: nil)
                        admitted = donation.dated(options.now.atExportPrecision)
                    } else {
                        let written = date.atExportPrecision
                        if let cutoff, written < cutoff {
                            admitted = nil
                        } else {
                            admitted = written == date ? donation : donation.dated(written)
                        }
                    }
                    if let admitted {
                        if try writer.record(admitted) != nil {
                            report.recorded += 1
                        } else {
                            report.duplicates += 1
                        }
                    } else {
                        report.expired += 1
                    }
                } catch let error as InputError {
                    guard options.skipInvalid else { throw error.at(line: line) }
                    report.reject(error.at(line: line))
                }
            }
            if writer.heldBytes > importMemoryBudget { try writer.flush() }
        }
        return report
    }

    /// Why `recordPrepared` would stop at this donation when invalid ones are not skipped: its line did not parse,
    /// or its date is too far ahead of `now` (`DonationAdmission`); `nil` when it would not. The retention is not
    /// looked at: a donation it does not keep is not an error.
    static func refusal(of donation: Result<Interaction, InputError>, now: Timestamp) -> InputError? {
        switch donation {
        case .failure(let error): return error
        case .success(let interaction) where interaction.date > now:
            do {
                _ = try DonationAdmission.decide(interaction, now: now, oldestKept: nil)
                return nil
            } catch {
                return error
            }
        case .success: return nil
        }
    }

    /// Throws the first refusal of a batch's lines (`refusal(of:now:)`) unless invalid ones are skipped, and an
    /// overlong line either way (a feed stops at it). Its copy of the lines is gone when it returns: a request keeps
    /// only its body while it waits for the writer.
    static func refuseFirstInvalid(
        in body: [UInt8], options: ImportOptions,
        parse: (UnsafeBufferPointer<UInt8>) -> Result<Interaction, InputError>
    ) throws {
        let lines = MemoryJSONLines(bytes: body)
        while let numbered = try lines.nextDonation(parse: parse) {
            guard !options.skipInvalid, let refusal = refusal(of: numbered.donation, now: options.now) else { continue }
            throw refusal.at(line: numbered.line)
        }
    }

    /// A server's batch (with `groupCommit`) is read twice. On the request's thread every line is parsed, checked
    /// and dropped, so that an invalid one is refused before the batch reaches the writer, whose pieces share one
    /// `DonationWriter`; then, in the group's transaction, a thread of its own parses the lines again while the
    /// writer records them (`ParsingLineFeed`). So what waits for the writer is the body's bytes, not its
    /// donations, which take several times their size: 32 requests of 6,000 donations, held parsed while they
    /// waited, took the server from 50 to 410 MB.
    public func importBatch(
        _ body: [UInt8], options: ImportOptions,
        parse: @escaping @Sendable (UnsafeBufferPointer<UInt8>) -> Result<Interaction, InputError>
    ) throws -> ImportReport {
        guard let groupCommit, let expected = options.expectedDonations, expected < Self.largeImport else {
            return try importBatchReadingOnce(body, options: options, parse: parse)
        }
        let options = options.fixingNow()
        try Self.refuseFirstInvalid(in: body, options: options, parse: parse)
        return try translating {
            try groupCommit.commit { writer in
                let cutoff = try writer.retention().oldestKept(at: options.now)
                // Used by the feed's thread alone.
                nonisolated(unsafe) let preparer = writer.makePreparer()
                let feed = ParsingLineFeed(source: MemoryJSONLines(bytes: body)) { bytes in
                    parse(bytes).map(preparer.prepare)
                }
                return try writer.recordPrepared(options, cutoff: cutoff, progress: { _ in }, interruption: {}) {
                    guard let parsed = try feed.next() else { return nil }
                    let line = parsed.line
                    return (line, (consume parsed).donation)
                }
            }
        }
    }
}
