import RedisCluster
import SuggestCore

extension RedisDonationStore {
    public func retention() throws -> Retention {
        var retention = Retention.default
        if let text = try setting("retention.maximumAgeDays"), let days = Double(text) { retention.maximumAgeDays = days }
        if let text = try setting("retention.idleDays"), let days = Double(text) { retention.idleDays = days }
        return retention
    }

    @discardableResult
    public func setRetention(_ retention: Retention, now: Timestamp) throws -> DeletionReport {
        try retention.validate()
        forgetSettings()
        _ = try write([
            RedisCommand(
                "HSET", key: RedisKeys.settings, "retention.maximumAgeDays", JSONWriter.format(retention.maximumAgeDays),
                "retention.idleDays", JSONWriter.format(retention.idleDays))
        ])
        var report = DeletionReport()
        for account in try accountNames() {
            let expired = try expire(account: account, now: now, retention: retention, conversations: .max)
            report.donations += expired.report.donations
            report.conversations += expired.report.conversations
            report.removedConversations += expired.report.removedConversations
        }
        report.conversations.sort { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        report.removedConversations.sort { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        if report.donations > 0 { report.logTruncated = rewriteFiles() }
        return report
    }

    /// One bounded step of upkeep: conversations built under another policy are rebuilt (every account's, in
    /// order, resuming where the last step stopped), then the account's expired donations are deleted (every
    /// account's for `nil`).
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
        let retention = try retention()
        var complete = policyDone
        let accounts = try account.map { [$0] } ?? accountNames()
        for name in accounts {
            let expired = try expire(account: name, now: now, retention: retention, conversations: left)
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
            report.expired.logTruncated = rewriteFiles()
        }
        report.isComplete = complete
        return report
    }

    /// Deletes an account's donations older than the retention allows, through its conversations' oldest dates.
    private func expire(account: String, now: Timestamp, retention: Retention, conversations limit: Int)
        throws(StoreError) -> (report: DeletionReport, isComplete: Bool)
    {
        guard let cutoff = retention.oldestKept(at: now) else { return (DeletionReport(), true) }
        let keys = RedisKeys(account: account)
        var command = RedisCommand(
            "ZRANGEBYSCORE", key: keys.oldest, "-inf", "(" + String(decoding: ScriptBuilder.score(cutoff.seconds), as: UTF8.self))
        if limit != .max {
            command.append("LIMIT")
            command.append(0)
            command.append(limit + 1)
        }
        let numbers = try members(command)
        var report = DeletionReport()
        for number in numbers.prefix(limit) {
            let outcome = try rewrite(number, keys: keys) { $0.date < cutoff.seconds }
            guard outcome.removed > 0 else { continue }
            report.donations += outcome.removed
            report.conversations.append(outcome.identifier)
            if outcome.isGone { report.removedConversations.append(outcome.identifier) }
        }
        report.conversations.sort { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        report.removedConversations.sort { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        return (report, numbers.count <= limit)
    }

    /// Rebuilds the conversations of every account whose state was built under another policy, in account and
    /// number order, resuming where the last step stopped (`ranking.recompute`).
    private func reconcilePolicy(budget: Int) throws(StoreError) -> (recomputed: Int, isComplete: Bool) {
        guard try setting("ranking.policy") != policyFingerprint else { return (0, true) }
        var resumeAccount = ""
        var resumeNumber: Int64 = 0
        if let progress = try setting("ranking.recompute"), progress.hasPrefix(policyFingerprint + "@") {
            let rest = progress.dropFirst(policyFingerprint.count + 1)
            if let separator = rest.lastIndex(of: "#") {
                resumeAccount = String(rest[..<separator])
                resumeNumber = Int64(rest[rest.index(after: separator)...]) ?? 0
            }
        }
        var recomputed = 0
        for account in try accountNames()
        where !account.utf8.lexicographicallyPrecedes(resumeAccount.utf8) {
            let keys = RedisKeys(account: account)
            for number in try members(RedisCommand("HVALS", key: keys.conversationNumbers)).sorted()
            where account != resumeAccount || number >= resumeNumber {
                guard recomputed < budget else {
                    try setSetting("ranking.recompute", policyFingerprint + "@" + account + "#" + String(number))
                    return (recomputed, false)
                }
                try rebuild(number, keys: keys)
                recomputed += 1
            }
        }
        try setSetting("ranking.policy", policyFingerprint)
        forgetSettings()
        _ = try write([RedisCommand("HDEL", key: RedisKeys.settings, "ranking.recompute")])
        return (recomputed, true)
    }

    /// Recomputes one conversation's state from all its donations under the store's policy.
    private func rebuild(_ number: Int64, keys: RedisKeys) throws(StoreError) {
        _ = try rewrite(number, keys: keys, dropping: { _ in false }, rebuildingAnyway: true)
    }
}
