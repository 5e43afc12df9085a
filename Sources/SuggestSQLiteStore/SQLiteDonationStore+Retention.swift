import SuggestCore

extension SQLiteDonationStore {
    /// The store's retention settings.
    public func retention() throws -> Retention {
        try translating { try database.storedRetention() }
    }

    /// Throws when a donation could not be recorded now: the settings cannot be read, the database file was
    /// deleted or moved since this connection opened it, a newer suggest migrated it since, or the connection may
    /// only read (SQLite opens a file its process may not write read-only, without an error; a `-shm` so, or a
    /// file made immutable, is found by `Database.writingProblem`).
    public func checkHealth() throws {
        try translating {
            _ = try database.storedRetention()
            try database.checkFileInPlace()
            try database.checkSchemaIsWritable()
            if database.isReadOnly {
                throw StoreError(.readOnly, "the store \(database.path) is read-only for this process: nothing can be recorded")
            }
            switch database.writingProblem {
            case nil: break
            case .readOnly(let problem):
                throw StoreError(.readOnly, "the store \(database.path) cannot be written: \(problem)")
            case .failed(let problem):
                throw StoreError(.failed, "the store \(database.path) cannot be written: \(problem)")
            }
        }
    }

    /// The database file this connection has open, checked to be the one its path names: for a server to tell
    /// whether its connections all have one file.
    public func fileIdentity() throws -> DatabaseFile {
        try translating {
            try database.checkFileInPlace()
            guard let file = database.openedFile else { throw Database.goneError(database.path) }
            return file
        }
    }

    /// Throws unless this connection has the file `expected` (a server's first connection's): a store deleted and
    /// created again at its path under a running server (by a command that creates a missing store) is another
    /// store, which the server's older connections do not see.
    public func requireFile(_ expected: DatabaseFile) throws {
        guard try fileIdentity() != expected else { return }
        throw Database.goneError(database.path)
    }

    /// Changes the retention settings and applies the new maximum age at once, to every account.
    /// - Throws: `InputError` for a setting that is not a number of days from 0 to `Retention.maximumDays`.
    @discardableResult
    public func setRetention(_ retention: Retention, now: Timestamp = .now()) throws -> DeletionReport {
        try retention.validate()
        return try reserve.run {
            try translating {
                try database.write {
                    try setSetting("retention.maximumAgeDays", JSONWriter.format(retention.maximumAgeDays))
                    try setSetting("retention.idleDays", JSONWriter.format(retention.idleDays))
                }
                return try expire(account: nil, now: now, retention: retention, blocks: .max, rewritingFile: true).report
            }
        }
    }

    /// One bounded step of upkeep: rebuilds conversations whose state was built under another policy (up to the
    /// budget, in row order, resuming where the last step stopped), then deletes expired donations of the account
    /// (the blocks holding them, up to the budget), then folds again the learned weights marked to be folded (the
    /// account's, or every account's for `nil`; each fold counts the account's conversations against the budget).
    ///
    /// Expiry takes whole days (`Retention.oldestKept(at:)`), so that the fold it causes, one pass over the
    /// account's log, happens at most once a day per account however often `maintain` runs (every command runs it).
    public func maintain(account: String?, now: Timestamp = .now(), budget: MaintenanceBudget = .unbounded) throws
        -> MaintenanceReport
    {
        try translating {
            var report = MaintenanceReport()
            let (recomputed, policyDone) = try reconcilePolicy(budget: budget.conversations)
            report.recomputedConversations = recomputed
            var left = budget.conversations == .max ? .max : max(0, budget.conversations - recomputed)
            guard left > 0 else {
                report.isComplete = false
                return report
            }
            report.weightsRuleChanged = try reconcileWeights()
            let expiry = try expire(
                account: account, now: now, retention: try retention(), blocks: left, rewritingFile: false)
            report.expired = expiry.report
            if left != .max { left = max(0, left - expiry.report.conversations.count) }
            var foldsDone = true
            if ranking.learnedPolicy != nil {
                (report.foldedAccounts, foldsDone) = try foldMarkedWeights(account: account, budget: left)
            }
            report.isComplete = policyDone && expiry.isComplete && foldsDone
            return report
        }
    }

    /// Marks every account's weights to be folded again when they were learned under another learned policy (or
    /// recorded by a store with fixed weights, which keeps no fingerprint of them), and notes the policy's
    /// fingerprint. One read of a setting when nothing is to be done.
    /// - Returns: whether it marked them.
    private func reconcileWeights() throws -> Bool {
        guard let fingerprint = weightsFingerprint, try setting(Self.weightsSetting) != fingerprint else { return false }
        return try database.write {
            guard try setting(Self.weightsSetting) != fingerprint else { return false }
            try LearnedWeightsTable.markAll(in: database)
            try setSetting(Self.weightsSetting, fingerprint)
            return true
        }
    }

    /// Folds the weights marked to be folded again, one account per write transaction, until the budget is spent
    /// (at least one account when any is marked).
    /// - Returns: how many accounts were folded, and whether none marked is left.
    private func foldMarkedWeights(account: String?, budget: Int) throws -> (folded: Int, isComplete: Bool) {
        var spent = 0
        var folded = 0
        var last: String?
        while true {
            let page = LearnedWeightsTable.pageOfMarkedAccounts
            let marked = try LearnedWeightsTable.marked(account: account, after: last, limit: page, in: database)
            for name in marked {
                if folded > 0 && spent >= budget { return (folded, false) }
                try database.write {
                    // Marked still: another process may have folded it meanwhile.
                    guard try LearnedWeightsTable.marked(account: name, in: database) == [name] else { return }
                    try refoldWeights(account: name)
                }
                let conversations = try database.statement("SELECT COUNT(*) FROM conversations WHERE account = ?")
                    .scalarInt([.text(name)])
                spent += Int(conversations ?? 0)
                folded += 1
                last = name
            }
            if account != nil || marked.count < page { return (folded, true) }
        }
    }

    /// Deletes donations older than the retention allows, in the account's blocks (every account's for `nil`),
    /// recomputes what they fed, and folds the weights of their accounts again (or marks them to be folded, when
    /// the step stops before the expiry is complete).
    ///
    /// Cheap when there is nothing to do: one look at the oldest date through its index, and for one account a
    /// look at its blocks (`mayHaveExpiredBlocks`); no write.
    /// - Parameters:
    ///   - blocks: at most this many blocks are read (and their conversations recomputed).
    ///   - rewritingFile: whether the database file is rewritten afterwards, as after a deletion
    ///     (`eraseDeletedBytes`): for a retention the person just lowered, not for the daily upkeep of every
    ///     command, which would rewrite a large store's file once a day per account.
    private func expire(account: String?, now: Timestamp, retention: Retention, blocks: Int, rewritingFile: Bool) throws
        -> (report: DeletionReport, isComplete: Bool)
    {
        guard let cutoff = retention.oldestKept(at: now) else { return (DeletionReport(), true) }
        let oldest = try database.statement("SELECT oldest_date FROM donation_blocks ORDER BY oldest_date LIMIT 1")
        try oldest.reset()
        let expired = try oldest.step() && oldest.double(0) < cutoff.seconds
        try oldest.reset()
        guard expired else { return (DeletionReport(), true) }
        if let account, try !mayHaveExpiredBlocks(account: account, cutoff: cutoff) { return (DeletionReport(), true) }
        // Through the blocks' dates; the account, when given, is `?1` and the cutoff `?2`.
        let limit = blocks == .max ? "" : " ORDER BY b.oldest_date LIMIT \(blocks)"
        var found = 0
        let report = try deleteDonations(
            inBlocksWhere: {
                let condition = (account == nil ? "" : "+c.account = ?1 AND ") + "b.oldest_date < ?\(account == nil ? 1 : 2)"
                // How many blocks qualify, counted with the same condition, to tell whether the step finished.
                found = Int(
                    try database.statement(
                        "SELECT COUNT(*) FROM (SELECT 1 FROM donation_blocks b JOIN conversations c "
                            + "ON c.id = b.conversation_id WHERE \(condition)\(limit))"
                    ).scalarInt((account.map { [.text($0)] } ?? []) + [.real(cutoff.seconds)]) ?? 0)
                return condition + limit
            }, [.real(cutoff.seconds)], account: account, weights: blocks == .max ? .fold : .mark,
            rewritingFile: rewritingFile
        ) { $0.date < cutoff.seconds }
        // `deleteDonations` has scrubbed the log, as for `delete`: what expired leaves the log at once, and the
        // copies of its rows in pages' free space go with the next rewrite of the file (a deletion's).
        return (report, blocks == .max || found < blocks)
    }

    /// Whether `account` may have a block older than `cutoff`: `false` when a look at its blocks, through its own
    /// conversations, found none. The deletion below finds an account's expired blocks through the blocks' date
    /// index, which walks every account's (through its conversations, a large account's every block would be
    /// read): a command of one account paid for all the others' expired blocks until a server or `config` expired
    /// them (87 ms with 160,000 of them, 374 ms with 580,000). This look reads at most `expiryLookLimit` blocks, so
    /// an account that large goes the date index's way as before.
    private func mayHaveExpiredBlocks(account: String, cutoff: Timestamp) throws -> Bool {
        let look = try database.statement(
            """
            SELECT b.oldest_date FROM conversations c
            JOIN donation_blocks b INDEXED BY donation_blocks_by_conversation ON b.conversation_id = c.id
            WHERE c.account = ? LIMIT ?
            """)
        try look.reset([.text(account), .integer(Int64(Self.expiryLookLimit))])
        defer { _ = try? look.reset() }
        var read = 0
        while try look.step() {
            if look.double(0) < cutoff.seconds { return true }
            read += 1
        }
        return read >= Self.expiryLookLimit
    }

    /// How many of an account's blocks `mayHaveExpiredBlocks` reads at most: a couple of milliseconds.
    static let expiryLookLimit = 2_000

    /// Rebuilds the state of conversations built under other channel parameters than the policy's (a release that
    /// retuned the default), so that stored order always matches the policy in use; in row order, from where the
    /// last step stopped.
    /// - Returns: how many conversations were rebuilt, and whether every one now matches the policy.
    private func reconcilePolicy(budget: Int) throws -> (recomputed: Int, isComplete: Bool) {
        guard try owesRebuild() else { return (0, true) }
        let (recomputed, isComplete) = try database.write { () throws -> (Int, Bool) in
            guard try owesRebuild() else { return (0, true) }
            // A step that stopped part-way left its place, for this policy only.
            var next: Int64 = 0
            if let progress = try setting("ranking.recompute"), progress.hasPrefix(policyFingerprint + "@"),
                let resume = Int64(progress.dropFirst(policyFingerprint.count + 1))
            {
                next = resume
            }
            let all = try database.statement("SELECT id FROM conversations WHERE id >= ? ORDER BY id LIMIT ?")
            try all.reset([.integer(next), .integer(Int64(min(budget, Int(Int32.max))) + 1)])
            var ids: [Int64] = []
            while try all.step() { ids.append(all.int(0)) }
            try all.reset()
            let done = ids.count <= budget
            let batch = done ? ids : Array(ids.prefix(budget))
            for id in batch { try recompute(conversationID: id) }
            if done {
                try setSetting("ranking.policy", policyFingerprint)
                try database.statement("DELETE FROM settings WHERE name = 'ranking.recompute'").run()
            } else {
                try setSetting("ranking.recompute", policyFingerprint + "@" + String(ids[budget]))
            }
            return (batch.count, done)
        }
        // Every conversation was rewritten: a log that size should not wait for the next checkpoint.
        if recomputed > 0 { _ = try database.withoutWaiting { try truncateLog() } }
        return (recomputed, isComplete)
    }

    /// Also when another policy's pass has been under way since this one's finished: an older version's process
    /// beside this one (an upgrade with it still running) rebuilds under its own rule, conversation by
    /// conversation, leaving this version's fingerprint in place until it is done; what it has rebuilt is redone.
    public func owesRebuild() throws -> Bool {
        try database.owesRebuild(to: policyFingerprint)
    }

    // MARK: Ranking

    /// Runs `body` inside one read transaction, with the account's ranking state.
    ///
    /// With a `RankingMirror` whose copy of the account is the store's current state, `body` reads that copy
    /// instead, and SQLite only for what the copy does not hold, at the same version; a commit that lands before
    /// it is done makes `body` run again on SQLite alone. Either way it sees one version of the account.
    public func withRankingSource<T>(account: String, _ body: (StoredRankingSource) throws -> T) throws -> T {
        try translating {
            if let mirror, let mirrored = mirror.current(account: account) {
                let source = StoredRankingSource(
                    database: database, account: account, policyFingerprint: policyFingerprint, mirrored: mirrored,
                    mirror: mirror)
                do {
                    return try body(source)
                } catch is MirrorWentStale {
                    mirror.abandoned(mirrored)
                }
            }
            return try database.read {
                let source = StoredRankingSource(
                    database: database, account: account, policyFingerprint: policyFingerprint)
                defer { source.finish() }
                return try body(source)
            }
        }
    }
}

extension Database {
    /// Whether the conversations' state is not, or not wholly, built under the policy whose fingerprint is
    /// `fingerprint` (`SQLiteDonationStore.owesRebuild()`), in the connection's current transaction or one of its own.
    func owesRebuild(to fingerprint: String) throws(SQLiteError) -> Bool {
        if try setting("ranking.policy") != fingerprint { return true }
        guard let progress = try setting("ranking.recompute") else { return false }
        return !progress.hasPrefix(fingerprint + "@")
    }

    /// The store's retention settings, in the connection's current transaction (a query's read, a mirror's
    /// build) or in one of their own.
    func storedRetention() throws(SQLiteError) -> Retention {
        var retention = Retention.default
        if let text = try setting("retention.maximumAgeDays"), let value = Double(text) {
            retention.maximumAgeDays = value
        }
        if let text = try setting("retention.idleDays"), let value = Double(text) { retention.idleDays = value }
        return retention
    }
}
