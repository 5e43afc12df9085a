import RedisCluster
import SuggestCore

extension RedisDonationStore {
    /// An import's rounds (`readRound`, `computeRound`), one account's part of a chunk each, in a pipeline: while
    /// one round's script runs on its master, the next round, read before it was sent, is computed; a round's
    /// replicas are waited for while the rounds after it go on.
    ///
    /// One after the other, the client, the master and its replica each waited for the other two (a round's
    /// computing, its script, the replica's copy), and an import took as long as their three times added.
    ///
    /// A round may share conversations with the rounds before it that have no reply yet (the one in flight, the
    /// one prepared): it takes those conversations, the account's learned weights and recorded identifiers from
    /// what they leave (`AccountAfterRound`) instead of from its reads, which may come before their scripts run.
    /// Its own script's checks (each conversation's version and last sequence number, the weights' version) then
    /// hold only if they ran as computed; it is sent only once the round before it answered so, and when another
    /// client's write overtook one, every round computed after it is read and written again, by rounds of its own;
    /// those of the overtaken round's account take its write lease at once (`WriteLease`: it has another writer).
    struct ImportRounds {
        /// The round whose script was sent, until its reply is read.
        private var inFlight: Unit?
        /// The round computed and not sent yet.
        private var prepared: Unit?
        /// The writes of rounds answered, whose replicas are still to confirm them.
        private var unconfirmed: [PendingWrite] = []
        private(set) var recorded = 0
        private(set) var duplicates = 0

        /// One account's donations of a chunk, and their round.
        private struct Unit {
            let keys: RedisKeys
            let donations: [Interaction]
            let groups: [[Int]]
            var outcomes: [DonationOutcome?]
            let round: RecordingRound
            var write: PendingWrite?
        }

        /// Records donations of any accounts, each account's part by a round.
        mutating func write(_ donations: [Interaction], store: RedisDonationStore, ledger: inout ImportLedger) throws {
            let (named, accounts) = RedisDonationStore.byAccount(donations, ledger: &ledger)
            for (keys, indices) in accounts {
                try write(indices.map { named[$0] }, keys: keys, store: store, ledger: &ledger)
            }
        }

        /// Reads a round, sends the prepared one (once the one in flight answered), computes the round while that
        /// one runs, and keeps it as the prepared one.
        private mutating func write(
            _ donations: [Interaction], keys: RedisKeys, store: RedisDonationStore, ledger: inout ImportLedger
        ) throws {
            var outcomes = [DonationOutcome?](repeating: nil, count: donations.count)
            let groups = RedisDonationStore.conversationGroups(of: donations, outcomes: &outcomes)
            guard !groups.isEmpty else { return count(outcomes) }
            let registeredNow = try store.register(keys)
            var previous: AccountAfterRound?
            for unit in [inFlight, prepared] {
                guard let unit, unit.keys.account.hasSameBytes(as: keys.account) else { continue }
                previous = previous.map { $0.followed(by: unit.round.after) } ?? unit.round.after
            }
            let reads = try store.readRound(
                groups, of: donations, keys: keys, ledger: &ledger, registeredNow: registeredNow, after: previous)
            if let overtaken = try sendPrepared(store: store, ledger: &ledger) {
                // Read with what an overtaken round was to leave.
                try store.completeRounds(
                    groups, of: donations, keys: keys, outcomes: &outcomes, ledger: &ledger,
                    overtaken: overtaken.hasSameBytes(as: keys.account))
                return count(outcomes)
            }
            let round = try store.computeRound(
                reads, of: donations, keys: keys, requiringExisting: false, lease: .respected)
            guard round.script != nil else {
                round.noteDuplicates(in: &outcomes, donations)
                return count(outcomes)
            }
            prepared = Unit(keys: keys, donations: donations, groups: groups, outcomes: outcomes, round: round)
        }

        /// Sends the prepared round, once the round in flight answered that it ran as computed.
        /// - Returns: the account of the round in flight when another client's write overtook it: that round was
        ///   written again, and so was the prepared round (computed from it, or not), by rounds of their own, which
        ///   take the lease at once if they are of the same account (it has another writer). `nil` when the round
        ///   in flight ran as computed, or none was.
        private mutating func sendPrepared(store: RedisDonationStore, ledger: inout ImportLedger) throws -> String? {
            if let overtaken = try settleInFlight(store: store, ledger: &ledger) {
                if var unit = prepared {
                    prepared = nil
                    try store.completeRounds(
                        unit.groups, of: unit.donations, keys: unit.keys, outcomes: &unit.outcomes, ledger: &ledger,
                        overtaken: overtaken.hasSameBytes(as: unit.keys.account))
                    count(unit.outcomes)
                }
                return overtaken
            }
            guard var unit = prepared, let script = unit.round.script else { return nil }
            prepared = nil
            unit.write = try store.startWrite([script])
            inFlight = unit
            return nil
        }

        /// Reads the reply of the round in flight, and notes what it recorded; when another client's write
        /// overtook it, its donations are written again by rounds of their own. Confirms the rounds answered before
        /// it: their replicas had this round's time to take them.
        /// - Returns: the round's account when another client's write overtook it; `nil` when it ran as computed, or
        ///   none was in flight.
        private mutating func settleInFlight(store: RedisDonationStore, ledger: inout ImportLedger) throws -> String? {
            guard var unit = inFlight, let write = unit.write else { return nil }
            inFlight = nil
            let replies: [RedisValue]
            do {
                replies = try store.writeReplies(write)
            } catch {
                // No reply: the round may have run all the same; its donations are noted for the undo (not after a
                // refusal, which ran nothing).
                if error.mayHaveBeenRecorded { ledger.noteUnanswered(unit.round, unit.donations) }
                unconfirmed.append(write)
                throw error
            }
            unconfirmed.append(write)
            let outcome = try store.settle(
                unit.round, reply: replies[0], failure: nil, unit.donations, outcomes: &unit.outcomes, ledger: &ledger)
            let ran = outcome == .applied
            if !ran {
                if outcome == .leased { store.contention.noteLeased() } else { store.contention.noteConflict() }
                try store.completeRounds(
                    RedisDonationStore.leftover(of: unit.groups, unit.outcomes), of: unit.donations, keys: unit.keys,
                    outcomes: &unit.outcomes, ledger: &ledger, overtaken: true)
            }
            count(unit.outcomes)
            while unconfirmed.count > 1 { try store.confirmWrite(unconfirmed.removeFirst()) }
            return ran ? nil : unit.keys.account
        }

        /// Writes the rounds left, and returns once a replica confirmed every one (as `writeReplicated` promises).
        mutating func finish(store: RedisDonationStore, ledger: inout ImportLedger) throws {
            _ = try sendPrepared(store: store, ledger: &ledger)
            _ = try settleInFlight(store: store, ledger: &ledger)
            while !unconfirmed.isEmpty { try store.confirmWrite(unconfirmed.removeFirst()) }
        }

        /// After a failure: waits for the writes under way, noting what the round in flight recorded, for the
        /// undo; the prepared round was never sent.
        mutating func abandon(store: RedisDonationStore, ledger: inout ImportLedger) {
            prepared = nil
            if var unit = inFlight, let write = unit.write {
                inFlight = nil
                switch write.replies() {
                case .success(let replies) where !replies.isEmpty:
                    _ = try? store.settle(
                        unit.round, reply: replies[0], failure: nil, unit.donations, outcomes: &unit.outcomes,
                        ledger: &ledger)
                case .failure(let error) where !error.mayHaveRun:
                    break  // refused: it ran nothing
                default:
                    ledger.noteUnanswered(unit.round, unit.donations)
                }
                unconfirmed.append(write)
            }
            for write in unconfirmed { _ = write.outcome() }
            unconfirmed = []
        }

        private mutating func count(_ outcomes: [DonationOutcome?]) {
            for outcome in outcomes {
                if case .recorded = outcome { recorded += 1 } else { duplicates += 1 }
            }
        }
    }
}

extension RedisDonationStore.AccountAfterRound {
    /// What this round and a later one leave together: the later one's conversations and weights where it has them.
    func followed(by later: Self) -> Self {
        var merged = self
        merged.conversations.merge(later.conversations) { _, latest in latest }
        merged.weights = later.weights
        merged.identifiers.formUnion(later.identifiers)
        return merged
    }
}
