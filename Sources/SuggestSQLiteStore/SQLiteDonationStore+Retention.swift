import SuggestCore

extension SQLiteDonationStore {
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

    /// Changes the retention settings and applies the new maximum age at once, to every account.
    /// - Throws: `InputError` for a setting that is not a number of days from 0 to `Retention.maximumDays`.
    @discardableResult
    public func setRetention(_ retention: Retention, now: Timestamp = .now()) throws -> DeletionReport {
        try retention.validate()
        return try translating {
            try database.write {
                try setSetting("retention.maximumAgeDays", JSONWriter.format(retention.maximumAgeDays))
                try setSetting("retention.idleDays", JSONWriter.format(retention.idleDays))
            }
            return try expire(account: nil, now: now, retention: retention, blocks: .max).report
        }
    }

    /// One bounded step of upkeep: rebuilds conversations whose state was built under another policy (up to the
    /// budget, in row order, resuming where the last step stopped), then deletes expired donations of the account
    /// (the blocks holding them, up to the budget).
    public func maintain(account: String?, now: Timestamp = .now(), budget: MaintenanceBudget = .unbounded) throws
        -> MaintenanceReport
    {
        try translating {
            var report = MaintenanceReport()
            let (recomputed, policyDone) = try reconcilePolicy(budget: budget.conversations)
            report.recomputedConversations = recomputed
            let left = budget.conversations == .max ? .max : max(0, budget.conversations - recomputed)
            guard left > 0 else {
                report.isComplete = false
                return report
            }
            let expiry = try expire(account: account, now: now, retention: try retention(), blocks: left)
            report.expired = expiry.report
            report.isComplete = policyDone && expiry.isComplete
            return report
        }
    }

    /// Deletes donations older than the retention allows, in the account's blocks (every account's for `nil`),
    /// and recomputes what they fed.
    ///
    /// Cheap when there is nothing to do: one look at the oldest date through its index, no write.
    /// - Parameter blocks: at most this many blocks are read (and their conversations recomputed).
    private func expire(account: String?, now: Timestamp, retention: Retention, blocks: Int) throws
        -> (report: DeletionReport, isComplete: Bool)
    {
        guard let cutoff = retention.oldestKept(at: now) else { return (DeletionReport(), true) }
        let oldest = try database.statement("SELECT oldest_date FROM donation_blocks ORDER BY oldest_date LIMIT 1")
        try oldest.reset()
        let expired = try oldest.step() && oldest.double(0) < cutoff.seconds
        try oldest.reset()
        guard expired else { return (DeletionReport(), true) }
        // Through the blocks' dates; the account, when given, is `?1` and the cutoff `?2`.
        let limit = blocks == .max ? "" : " ORDER BY b.oldest_date LIMIT \(blocks)"
        var found = 0
        var report = try deleteDonations(
            inBlocksWhere: {
                let condition = (account == nil ? "" : "+c.account = ?1 AND ") + "b.oldest_date < ?\(account == nil ? 1 : 2)"
                // How many blocks qualify, counted with the same condition, to tell whether the step finished.
                found = Int(
                    try database.statement(
                        "SELECT COUNT(*) FROM (SELECT 1 FROM donation_blocks b JOIN conversations c "
                            + "ON c.id = b.conversation_id WHERE \(condition)\(limit))"
                    ).scalarInt((account.map { [.text($0)] } ?? []) + [.real(cutoff.seconds)]) ?? 0)
                return condition + limit
            }, [.real(cutoff.seconds)], account: account
        ) { $0.date < cutoff.seconds }
        // As for `delete`: what expired leaves the files at once, not at the next checkpoint.
        if report.donations > 0 { report.logTruncated = try truncateLog() }
        return (report, blocks == .max || found < blocks)
    }

    /// Rebuilds the state of conversations built under other channel parameters than the policy's (a release that
    /// retuned the default), so that stored order always matches the policy in use; in row order, from where the
    /// last step stopped.
    /// - Returns: how many conversations were rebuilt, and whether every one now matches the policy.
    private func reconcilePolicy(budget: Int) throws -> (recomputed: Int, isComplete: Bool) {
        guard try setting("ranking.policy") != policyFingerprint else { return (0, true) }
        let (recomputed, isComplete) = try database.write { () throws -> (Int, Bool) in
            guard try setting("ranking.policy") != policyFingerprint else { return (0, true) }
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
        if recomputed > 0 { _ = try truncateLog() }
        return (recomputed, isComplete)
    }

    // MARK: Ranking

    /// Runs `body` inside one read transaction, with the account's ranking state.
    public func withRankingSource<T>(account: String, _ body: (StoredRankingSource) throws -> T) throws -> T {
        try translating {
            try database.read {
                let source = StoredRankingSource(database: database, account: account)
                defer { source.finish() }
                return try body(source)
            }
        }
    }
}
