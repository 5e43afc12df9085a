import RedisCluster
import SuggestCore

extension RedisDonationStore {
    /// Readiness's question: one read of the settings, from the master of their slot, without the client's
    /// retries. Those wait up to 10 s for a failover, past a load balancer's probe timeout: while the cluster is
    /// down, `/v1/health/ready` would take 10 s to say 503. A master that a promotion replaced (its connection
    /// refused or lost) is looked up again once; one that does not answer is waited for once, the command timeout.
    /// A slot on the move (`MOVED`, `ASK`) is a cluster at work: ready, the layout read again for the next time.
    public func checkHealth() throws {
        let read = RedisCommand("HGET", key: RedisKeys.settings, "retention.maximumAgeDays")
        let slot = RedisHashSlot.of(RedisKeys.settings)
        func ask() throws(RedisError) {
            guard let master = try client.master(forSlot: slot) else {
                throw .clusterDown(nil, message: "no master serves the store's settings now")
            }
            do {
                _ = try client.send(read, to: master.endpoint)
            } catch where error.isRedirection {
                _ = try? client.refreshTopology()
            }
        }
        do throws(RedisError) {
            do throws(RedisError) {
                try ask()
            } catch {
                switch error {
                case .unreachable, .connectionLost:
                    try client.refreshTopology()
                    try ask()
                default: throw error
                }
            }
        } catch {
            throw Self.translate(error)
        }
    }

    public func retention() throws -> Retention {
        var retention = Retention.default
        if let text = try setting("retention.maximumAgeDays"), let days = Double(text) { retention.maximumAgeDays = days }
        if let text = try setting("retention.idleDays"), let days = Double(text) { retention.idleDays = days }
        return retention
    }

    @discardableResult
    public func setRetention(_ retention: Retention, now: Timestamp) throws -> DeletionReport {
        try retention.validate()
        // On a full node too: a shorter retention is how room is made there.
        try setSettings([
            ("retention.maximumAgeDays", JSONWriter.format(retention.maximumAgeDays)),
            ("retention.idleDays", JSONWriter.format(retention.idleDays)),
        ])
        var report = DeletionReport()
        for account in try accountNames() {
            // Asked for by a person, as a deletion is: it goes on whatever lease a recording holds.
            let expired = try expire(
                account: account, now: now, retention: retention, conversations: .max, background: false)
            report.donations += expired.report.donations
            report.conversations += expired.report.conversations
            report.removedConversations += expired.report.removedConversations
        }
        report.conversations.sort { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        report.removedConversations.sort { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        if report.donations > 0 { report.logTruncated = try rewriteFiles(slowLogs: .everyAccount) }
        return report
    }

    /// One bounded step of upkeep: conversations built under another policy are rebuilt (every account's, in
    /// order, resuming where the last step stopped), then the account's expired donations are deleted (every
    /// account's for `nil`; whole days at a time, `Retention.oldestKept(at:)`, so that the fold of the weights
    /// an expiry causes happens at most once a day per account), then the learned weights marked to be folded are
    /// folded again (each fold counts the account's conversations against the budget).
    public func maintain(account: String?, now: Timestamp, budget: MaintenanceBudget) throws -> MaintenanceReport {
        var report = MaintenanceReport()
        var left = budget.conversations
        let (recomputed, policyDone) = try reconcilePolicy(budget: left)
        report.recomputedConversations = recomputed
        if left != .max { left = max(0, left - recomputed) }
        guard left > 0 else {
            report.isComplete = false
            return report
        }
        var complete = policyDone
        do throws(StoreError) {
            report.weightsRuleChanged = try reconcileWeights()
        } catch {
            // A full node refuses the marks: the expiry below is what makes room there, and a later step marks them.
            guard error.kind == .diskFull else { throw error }
            complete = false
        }
        let retention = try retention()
        let accounts = try account.map { [$0] } ?? accountNames()
        // Each account's fold mark, where the expiry read it in its own round trip (`nil`: still to be read).
        var marks = [Bool?](repeating: nil, count: accounts.count)
        for index in accounts.indices {
            let name = accounts[index]
            guard
                let expired = try unlessHeld({ () throws(StoreError) in
                    try expire(account: name, now: now, retention: retention, conversations: left, background: true)
                })
            else {
                // A recording holds the account: its expiry goes on at a later step, the other accounts' now.
                complete = false
                continue
            }
            marks[index] = expired.foldMark
            report.expired.donations += expired.report.donations
            report.expired.conversations += expired.report.conversations
            report.expired.removedConversations += expired.report.removedConversations
            if !expired.isComplete { complete = false }
            if left != .max { left = max(0, left - expired.report.conversations.count) }
            if left == 0 { break }
        }
        report.expired.conversations.sort { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        report.expired.removedConversations.sort { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        if try report.expired.donations > 0 || setting("files.rewrite") != nil {
            // Not thrown: maintenance runs behind reads, which a user who may not rewrite must still have (the
            // deletion that owed the rewrite said why it was not done).
            report.expired.logTruncated = (try? rewriteFiles()) ?? false
        }
        if ranking.learnedPolicy != nil {
            if left > 0 {
                let (folded, done) = try foldMarkedWeights(accounts, marks: marks, budget: left)
                report.foldedAccounts = folded
                if !done { complete = false }
            } else {
                // The budget went to expiry: weights it marked are folded by the next step.
                complete = false
            }
        }
        report.isComplete = complete
        return report
    }

    /// Marks every account's weights to be folded again when they were learned under another learned policy (or
    /// recorded by a store with fixed weights), and notes the policy's fingerprint. One read of a setting when
    /// nothing is to be done.
    /// - Returns: whether it marked them.
    private func reconcileWeights() throws(StoreError) -> Bool {
        guard let fingerprint = ranking.learnedPolicy?.weightsFingerprint, try setting(Self.weightsSetting) != fingerprint
        else { return false }
        let names = try accountNames()
        var start = 0
        while start < names.count {
            let batch = names[start..<min(start + 256, names.count)]
            start += batch.count
            _ = try write(
                batch.flatMap { name in
                    let key = RedisKeys(account: name).learnedWeights
                    return [RedisCommand("HSET", key: key, "fold", "1"), RedisCommand("HINCRBY", key: key, "v", 1)]
                })
        }
        try setSetting(Self.weightsSetting, fingerprint)
        return true
    }

    /// Folds the weights marked to be folded again among `accounts`, until the budget is spent (at least one account
    /// when any is marked).
    /// - Parameter marks: each account's mark where it was read already (by the expiry), `nil` where it is read here.
    /// - Returns: how many accounts were folded, and whether none marked is left among them.
    private func foldMarkedWeights(_ accounts: [String], marks: [Bool?], budget: Int) throws(StoreError) -> (
        folded: Int, isComplete: Bool
    ) {
        var marks = marks
        let unread = accounts.indices.filter { marks[$0] == nil }
        var start = 0
        while start < unread.count {
            let batch = unread[start..<min(start + 256, unread.count)]
            start += batch.count
            let replies = try pipeline(batch.map { RedisCommand("HGET", key: RedisKeys(account: accounts[$0]).learnedWeights, "fold") })
            for (index, reply) in zip(batch, replies) { marks[index] = reply.string == "1" }
        }
        // In an order of their own at each step: a busy account whose fold fails spends the budget, and would
        // spend it first at every step.
        var random = SystemRandomNumberGenerator()
        let marked = accounts.indices.filter { marks[$0] == true }.map { accounts[$0] }.shuffled(using: &random)
        var spent = 0
        var folded = 0
        var isComplete = true
        for (position, name) in marked.enumerated() {
            if position > 0 && spent >= budget { return (folded, false) }
            let keys = RedisKeys(account: name)
            // An account that kept changing stays marked, for the next step; it does not hold back the ones after it.
            if try refoldWeights(keys, background: true) { folded += 1 } else { isComplete = false }
            spent += Int(try send(RedisCommand("HLEN", key: keys.conversationNumbers)).integer ?? 0)
        }
        return (folded, isComplete)
    }

    /// The setting that holds the fingerprint of the learned policy the weights follow.
    static let weightsSetting = "ranking.weights"

    /// Deletes an account's donations older than the retention allows, through its conversations' oldest dates.
    /// - Returns: what was deleted; whether the expiry is complete; and under a learned ranking, whether the
    ///   account's weights are marked to be folded (`lw` field `fold`), read in the same round trip as the expired
    ///   conversations so that maintenance need not ask again: `nil` when there is no expiry, or when it deleted
    ///   something (its rewrites mark the weights, or it folded them).
    /// - Parameter background: maintenance's expiry, which waits briefly for a recording's lease (`rewrite`).
    private func expire(
        account: String, now: Timestamp, retention: Retention, conversations limit: Int, background: Bool
    ) throws(StoreError) -> (report: DeletionReport, isComplete: Bool, foldMark: Bool?) {
        guard let cutoff = retention.oldestKept(at: now) else { return (DeletionReport(), true, nil) }
        let keys = RedisKeys(account: account)
        var command = RedisCommand(
            "ZRANGEBYSCORE", key: keys.oldest, "-inf", "(" + String(decoding: ScriptBuilder.score(cutoff.seconds), as: UTF8.self))
        if limit != .max {
            command.append("LIMIT")
            command.append(0)
            command.append(limit + 1)
        }
        var reads = [command]
        if ranking.learnedPolicy != nil { reads.append(RedisCommand("HGET", key: keys.learnedWeights, "fold")) }
        let replies = try pipeline(reads)
        let numbers = (try replies[0].checkedArray() ?? []).compactMap { $0.string.flatMap(Int64.init) }
        var report = DeletionReport()
        for number in numbers.prefix(limit) {
            let outcome = try rewrite(
                number, keys: keys, dropping: { $0.date < cutoff.seconds }, allowingOutOfMemory: true,
                background: background)
            guard outcome.removed > 0 else { continue }
            report.donations += outcome.removed
            report.conversations.append(outcome.identifier)
            if outcome.isGone { report.removedConversations.append(outcome.identifier) }
        }
        report.conversations.sort { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        report.removedConversations.sort { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        let isComplete = numbers.count <= limit
        // Once the account's expiry is complete its weights are folded (else they stay marked by the rewrites, for
        // the fold at the end of the maintenance step).
        if isComplete && report.donations > 0 { try refoldWeights(keys, background: background) }
        let foldMark = reads.count > 1 && report.donations == 0 ? replies[1].string == "1" : nil
        return (report, isComplete, foldMark)
    }

    /// Rebuilds the conversations of every account whose state was built under another policy, or before the
    /// hashes kept `dd` (`shownLayoutSetting` not yet `1`), in account and number order, resuming where the last
    /// step stopped (`ranking.recompute`).
    private func reconcilePolicy(budget: Int) throws(StoreError) -> (recomputed: Int, isComplete: Bool) {
        let layoutDone = try setting(Self.shownLayoutSetting) == "1"
        guard try owesRebuild() else { return (0, true) }
        // What the progress belongs to: a pass of another policy, or one before the layout, starts over.
        let target = policyFingerprint + (layoutDone ? "" : ";shown")
        var resumeAccount = ""
        var resumeNumber: Int64 = 0
        if let progress = try setting("ranking.recompute"), progress.hasPrefix(target + "@") {
            let rest = progress.dropFirst(target.count + 1)
            if let separator = rest.lastIndex(of: "#") {
                resumeAccount = String(rest[..<separator])
                resumeNumber = Int64(rest[rest.index(after: separator)...]) ?? 0
            }
        }
        // The bookmark goes first: a step rewrites one conversation at a time, and a process of another version
        // beside this one must read from it that the hashes are being rebuilt under another policy before any is
        // (`owesRebuild`: its walk takes no stop at the idle cutoff on keys of this policy).
        try setSetting("ranking.recompute", target + "@" + resumeAccount + "#" + String(resumeNumber))
        var recomputed = 0
        for account in try accountNames()
        where !account.utf8.lexicographicallyPrecedes(resumeAccount.utf8) {
            let keys = RedisKeys(account: account)
            for number in try allConversationNumbers(keys).sorted()
            where account != resumeAccount || number >= resumeNumber {
                guard recomputed < budget else {
                    try setSetting("ranking.recompute", target + "@" + account + "#" + String(number))
                    return (recomputed, false)
                }
                guard try unlessHeld({ () throws(StoreError) in try rebuild(number, keys: keys) }) != nil else {
                    // A recording holds the account: the pass goes on from this conversation at a later step.
                    try setSetting("ranking.recompute", target + "@" + account + "#" + String(number))
                    return (recomputed, false)
                }
                recomputed += 1
            }
        }
        try setSetting("ranking.policy", policyFingerprint)
        try setSetting(Self.shownLayoutSetting, "1")
        forgetSettings()
        _ = try write([RedisCommand("HDEL", key: RedisKeys.settings, "ranking.recompute")])
        return (recomputed, true)
    }

    /// Recomputes one conversation's state from all its donations under the store's policy.
    private func rebuild(_ number: Int64, keys: RedisKeys) throws(StoreError) {
        _ = try rewrite(number, keys: keys, dropping: { _ in false }, rebuildingAnyway: true, background: true)
    }
}

extension RedisDonationStore {
    /// Also before the hashes kept `dd` (`shownLayoutSetting`), and when another policy's pass has been under way
    /// since this one's finished: an older version's process beside this one (an upgrade with it still running)
    /// rebuilds under its own rule, conversation by conversation, leaving this version's fingerprint in place until
    /// it is done; what it has rebuilt is redone.
    public func owesRebuild() throws(StoreError) -> Bool {
        if try setting("ranking.policy") != policyFingerprint { return true }
        if try setting(Self.shownLayoutSetting) != "1" { return true }
        guard let progress = try setting("ranking.recompute") else { return false }
        return !progress.hasPrefix(policyFingerprint + "@")
    }

    /// Whether the stored keys follow this store's policy, from settings read now: kept ones may be older than the
    /// keys a caller has just read (`owesRebuild()`).
    func keysFollowThePolicyNow() throws(StoreError) -> Bool {
        forgetSettings()
        return try !owesRebuild()
    }
}
