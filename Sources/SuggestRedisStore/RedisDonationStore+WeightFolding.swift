import RedisCluster
import SuggestCore

extension RedisDonationStore {
    /// Folds the account's learned weights again from its remaining donations, in sequence order
    /// (`LearnedWeights.fold`, each donation with its snapshot's kind), and writes them, clearing the mark, by a
    /// script that checks that the weights' version is still the one read before the donations were: every change
    /// of an account's donations increments it, so weights folded from a history that changed meanwhile are
    /// folded again; a fold that lost once holds the account's write lease for the next try, renewing it while it
    /// reads, so that recordings wait for it (`WriteLease`), unless a try takes longer than `longestFold`. An
    /// account with no donation left loses its weights' hash. Under fixed weights, which cannot be folded here, the
    /// weights become `.empty` and stay marked: nothing learned from a deleted donation stays.
    /// - Returns: whether the weights were written (`false`: the account kept changing, or other writers held its
    ///   lease too long; they stay marked for the next maintenance step).
    /// - Complexity: O(n log n) for the account's n donations, read 64 conversations per round trip.
    /// - Parameter background: a maintenance step's fold, which waits while a recording holds the lease (as
    ///   `rewrite` says), briefly (`Contention.backgroundPatience`).
    @discardableResult
    func refoldWeights(_ keys: RedisKeys, background: Bool = false) throws(StoreError) -> Bool {
        try unlessHeld({ () throws(StoreError) in try foldWeights(keys, background: background) }) ?? false
    }

    private func foldWeights(_ keys: RedisKeys, background: Bool) throws(StoreError) -> Bool {
        // Every recording changes the weights, and a fold reads the whole account: it takes the lease after one
        // loss, unless that try took longer than a fold may keep the recordings waiting.
        var contention = Contention(
            keys, conflictsBeforeLease: WriteLease.conflictsBeforeFolding, as: background ? .maintenance : .deletion)
        defer { contention.end(self) }
        while contention.conflicts < 20 {
            guard try contention.mayTry(self) else { continue }
            let started = ContinuousClock.now
            // The lease kept (renewed when due), and not held past `longestFold`; else the weights stay marked.
            func mayGoOn() throws(StoreError) -> Bool {
                try contention.keepsLease(self)
                    && (!contention.holdsLease || ContinuousClock.now - started < WriteLease.longestFold)
            }
            let read = try readWeights(keys)
            let numbers = try allConversationNumbers(keys).sorted()
            var donations: [(sequence: Int64, conversation: Int64, event: ConversationState.Event)] = []
            var start = 0
            while start < numbers.count {
                guard try mayGoOn() else { return false }
                let batch = numbers[start..<min(start + 64, numbers.count)]
                start += batch.count
                for log in try conversationLogs(batch, keys) {
                    for (entry, intent) in log.entries {
                        let event = ConversationState.Event(
                            date: Timestamp(seconds: entry.date), direction: entry.direction,
                            isEngagedSuggestion: entry.engaged, isGroup: intent.isGroup)
                        donations.append((entry.sequence, log.number, event))
                    }
                }
            }
            donations.sort { $0.sequence < $1.sequence }
            guard try mayGoOn() else { return false }
            var script = ScriptBuilder(keys)
            script.lease = contention.scriptLease
            // Weights of a fixed size written over: after a deletion on a full node too.
            script.allowsOutOfMemory = true
            let hash = keys.learnedWeights
            script.check(hash, version: read.version)
            if donations.isEmpty {
                script.delete(hash)
            } else if let learned = ranking.learnedPolicy {
                let folded = LearnedWeights.fold(
                    donations.lazy.map { (conversation: $0.conversation, event: $0.event) }, policy: learned)
                script.hset(hash, "w", RecordCoding.encode(folded.weights))
                script.hdel(hash, "fold")
            } else {
                script.hset(hash, "w", RecordCoding.encode(LearnedWeights.empty))
                script.hset(hash, "fold", Array("1".utf8))
            }
            let outcome = try Self.applyOutcome(try write([script.command])[0])
            guard outcome != .applied else {
                contention.applied()
                return true
            }
            let tried = ContinuousClock.now - started
            // Lost under the lease, to a writer that ignores it (a person's deletion, an undo, an older version):
            // another try would keep the recordings waiting again. The weights stay marked.
            guard !contention.holdsLease else { return false }
            try contention.lost(outcome, self)
            // A try under the lease would take as long as this one did: the weights stay marked.
            guard tried < WriteLease.longestFold else { return false }
        }
        return false
    }
}
