import RedisCluster
import SuggestCore

extension RedisDonationStore {
    public func record(_ donation: Interaction, now: Timestamp) throws -> DonationOutcome {
        try recordOne(donation, now: now, requiringExisting: false)
    }

    public func recordShare(_ donation: Interaction, now: Timestamp) throws -> DonationOutcome? {
        do {
            return try recordOne(donation, now: now, requiringExisting: true)
        } catch is ConversationGone {
            return nil
        }
    }

    /// Admits one donation and writes it, undone when it fails after reaching the master (no replica confirmed it
    /// in time): a refused donation must not stay, since one without an identifier of its own would be recorded
    /// twice when retried.
    /// - Throws: `ConversationGone` when `requiringExisting` and its conversation has no donation.
    private func recordOne(_ donation: Interaction, now: Timestamp, requiringExisting: Bool) throws -> DonationOutcome {
        let interaction: Interaction
        switch try DonationAdmission.decide(
            donation, now: now, oldestKept: try retention().oldestKept(at: now))
        {
        case .expired: return .expired
        case .record(let admitted): interaction = admitted
        }
        var outcome: DonationOutcome = .expired
        let mayStay =
            interaction.identifier.map {
                "the donation may have been recorded all the same (as \($0)); retrying it records it once"
            } ?? "the donation may have been recorded all the same; give donations identifiers, so that a retry "
            + "records each once"
        // Says whether it was taken back, so that the caller knows whether a retry can record it twice.
        try undoingOnFailure(
            leftover: mayStay, undone: "it was taken back, so nothing of it is kept: retry it", lostReply: mayStay
        ) { written in
            outcome = try writeDonations([interaction], ledger: &written, requiringExisting: requiringExisting)[0]
        }
        return outcome
    }

    /// A share's conversation has no donation any more (`recordShare`): nothing was recorded.
    struct ConversationGone: Error {}

    /// Records donations (of any accounts), each account's part by rounds of one script, retrying a conversation
    /// another client changed meanwhile.
    /// - Parameters:
    ///   - ledger: notes every donation recorded, also when a later script fails (so that it can be undone).
    ///   - requiringExisting: record nothing, and throw `ConversationGone`, when a donation's conversation has no
    ///     donation at the moment of writing (`recordShare`).
    /// - Returns: each donation's outcome, in order.
    func writeDonations(_ donations: [Interaction], ledger: inout ImportLedger, requiringExisting: Bool = false)
        throws -> [DonationOutcome]
    {
        var outcomes = [DonationOutcome](repeating: .expired, count: donations.count)
        let (named, accounts) = Self.byAccount(donations, ledger: &ledger)
        for (keys, indices) in accounts {
            let written = try writeDonations(
                indices.map { named[$0] }, keys: keys, ledger: &ledger, requiringExisting: requiringExisting)
            for (offset, outcome) in written.enumerated() {
                outcomes[indices[offset]] = outcome
            }
        }
        return outcomes
    }

    /// The donations, each with an identifier (a random one for those that came without), and their indices by
    /// account, accounts in order of first appearance.
    static func byAccount(_ donations: [Interaction], ledger: inout ImportLedger)
        -> (named: [Interaction], accounts: [(RedisKeys, [Int])])
    {
        var byAccount: [ByteKey: [Int]] = [:]
        var accountOrder: [ByteKey] = []
        for (index, donation) in donations.enumerated() {
            let key = ByteKey(donation.account)
            if byAccount[key] == nil { accountOrder.append(key) }
            byAccount[key, default: []].append(index)
        }
        var random = SystemRandomNumberGenerator()
        var named = donations
        for index in named.indices where named[index].identifier == nil {
            let identifier = Interaction.generatedIdentifier(using: &random)
            named[index].identifier = identifier
            ledger.generated.insert(identifier)
        }
        let accounts = accountOrder.map { account in (RedisKeys(account: account.string), byAccount[account] ?? []) }
        return (named, accounts)
    }

    /// Records one account's donations: each round reserves sequence numbers, reads the conversations and the
    /// account's learned weights, applies the donations in sequence order (each conversation's record, and under a
    /// learned ranking the weights, `LearnedWeights.record` with the conversation's state just before and after),
    /// and writes everything by one script that checks every conversation and the weights are as they were read.
    /// A round that another client overtook (a version changed, or the weights learned from a later sequence
    /// number meanwhile) is read and computed again, with new sequence numbers: two clients of one account never
    /// lose an update, and the weights learn in the order `export` gives the donations back.
    private func writeDonations(
        _ donations: [Interaction], keys: RedisKeys, ledger: inout ImportLedger, requiringExisting: Bool
    ) throws -> [DonationOutcome] {
        var outcomes = [DonationOutcome?](repeating: nil, count: donations.count)
        let groups = Self.conversationGroups(of: donations, outcomes: &outcomes)
        guard !groups.isEmpty else { return outcomes.map { $0 ?? .duplicate(identifier: "") } }
        if requiringExisting {
            // Before anything is written: registering the account, or reserving a number, would put back the name
            // of an account deleted since (the check in the rounds below covers a deletion after this one).
            let identifiers = groups.map { donations[$0[0]].conversationIdentifier }
            let numbered = try numberedConversations(identifiers, keys)
            guard numbered.count == identifiers.count, numbered.allSatisfy(\.hasHash) else { throw ConversationGone() }
        }
        let registeredNow = try register(keys)
        try completeRounds(
            groups, of: donations, keys: keys, outcomes: &outcomes, ledger: &ledger,
            requiringExisting: requiringExisting, registeredNow: registeredNow)
        return outcomes.map { $0 ?? .duplicate(identifier: "") }
    }

    /// Runs rounds (`readRound`, `computeRound`) until every donation of `pending` is recorded or found a duplicate,
    /// each round written and answered before the next is read. Rounds that other writers keep overtaking take
    /// the account's write lease (`WriteLease`); rounds that find another writer's lease wait for it.
    /// - Parameters:
    ///   - registeredNow: whether this write added the account to the list of accounts.
    ///   - overtaken: whether these donations' round lost already (in the pipelined import).
    func completeRounds(
        _ pending: [[Int]], of donations: [Interaction], keys: RedisKeys, outcomes: inout [DonationOutcome?],
        ledger: inout ImportLedger, requiringExisting: Bool = false, registeredNow: Bool = false,
        overtaken: Bool = false
    ) throws {
        var pending = pending
        var rounds = 0
        let donationCount = pending.reduce(0) { $0 + $1.count }
        var contention = Contention(
            keys, conflictsBeforeLease: WriteLease.conflictsBeforeTaking(donations: donationCount),
            as: .recording, conflicts: overtaken ? 1 : 0)
        defer { contention.end(self) }
        while !pending.isEmpty {
            guard try contention.mayTry(self) else { continue }
            rounds += 1
            guard contention.conflicts < 50 else {
                throw StoreError(.busy, "the account's conversations kept changing under this write; retry in a moment")
            }
            let read = try readRound(
                pending, of: donations, keys: keys, ledger: &ledger, registeredNow: rounds == 1 && registeredNow,
                after: nil)
            guard try contention.keepsLease(self) else { continue }
            let round = try computeRound(
                read, of: donations, keys: keys, requiringExisting: requiringExisting, lease: contention.scriptLease)
            guard try contention.keepsLease(self) else { continue }
            guard let script = round.script else {
                // Every donation left was recorded meanwhile by another client.
                round.noteDuplicates(in: &outcomes, donations)
                return
            }
            let replies: [RedisValue]
            let failure: StoreError?
            do {
                (replies, failure) = try writeReplicated([script])
            } catch {
                // No reply: the round may have run all the same; its donations are noted for the undo. A refusal
                // (the slot moving, a full node) ran nothing, and an undo of it would be said to be in doubt.
                if error.mayHaveBeenRecorded { ledger.noteUnanswered(round, donations) }
                throw error
            }
            let outcome = try settle(
                round, reply: replies[0], failure: failure, donations, outcomes: &outcomes, ledger: &ledger)
            guard outcome != .applied else { return contention.applied() }
            try contention.lost(outcome, self)
            pending = Self.leftover(of: pending, outcomes)
        }
    }

    /// The batch's indices grouped by conversation, in order of first appearance: within the batch, the first
    /// donation of an identifier is the one, later ones are noted duplicates.
    static func conversationGroups(of donations: [Interaction], outcomes: inout [DonationOutcome?]) -> [[Int]] {
        var firstOfIdentifier: Set<ByteKey> = []
        var groups: [[Int]] = []
        var groupOf: [ByteKey: Int] = [:]
        for (index, donation) in donations.enumerated() {
            guard firstOfIdentifier.insert(ByteKey(donation.identifier ?? "")).inserted else {
                outcomes[index] = .duplicate(identifier: donation.identifier ?? "")
                continue
            }
            let conversation = ByteKey(donation.conversationIdentifier)
            if let group = groupOf[conversation] {
                groups[group].append(index)
            } else {
                groupOf[conversation] = groups.count
                groups.append([index])
            }
        }
        return groups
    }

    /// The groups' donations that have no outcome yet, for the next round.
    static func leftover(of groups: [[Int]], _ outcomes: [DonationOutcome?]) -> [[Int]] {
        var retry: [[Int]] = []
        for group in groups {
            let left = group.filter { outcomes[$0] == nil }
            if !left.isEmpty { retry.append(left) }
        }
        return retry
    }

    /// Adds the account to the list of accounts before its first donation, once per store: every write paying a
    /// `WAIT` on the master of `sg:accounts` would make any account's writes wait on that master's replica.
    /// - Returns: whether it was added now.
    func register(_ keys: RedisKeys) throws -> Bool {
        let accountBytes = Array(keys.account.utf8)
        guard !registeredAccounts.contains(accountBytes) else { return false }
        try listAccount(keys)
        registeredAccounts.insert(accountBytes)
        return true
    }

    /// Adds the account to the list of accounts (`sg:accounts`), which maintenance, retention and `accounts()` go by.
    func listAccount(_ keys: RedisKeys) throws(StoreError) {
        var command = RedisCommand(script: RedisScripts.listAccount, keys: [RedisKeys.accounts])
        command.append(keys.account)
        _ = try write([command])
    }

    /// One round of an account's donations, read and computed: the script that records them, and the account as
    /// the script leaves it.
    struct RecordingRound {
        /// The donations found recorded already (by the store, or by the round before this one).
        var duplicates: [Int] = []
        /// The donations the script records.
        var recorded: [Int] = []
        /// `nil` when every donation of the round is a duplicate.
        var script: RedisCommand?
        var after: AccountAfterRound

        func noteDuplicates(in outcomes: inout [DonationOutcome?], _ donations: [Interaction]) {
            for index in duplicates { outcomes[index] = .duplicate(identifier: donations[index].identifier ?? "") }
        }
    }

    /// An account as a round's script leaves it, once it runs: what reading it then would find of the conversations
    /// the round changed, its learned weights and the identifiers it recorded. The next round can be computed from
    /// it while the script is still on its way; that round's own checks (versions, last sequence numbers,
    /// identifiers) hold only if the script ran as expected.
    struct AccountAfterRound {
        let account: String
        var conversations: [Int64: StoredConversation] = [:]
        var weights: (weights: LearnedWeights, version: Int64) = (.empty, 0)
        var identifiers: Set<ByteKey> = []
    }

    /// What a round reads before it computes: its sequence numbers and conversation numbers (reserved), the
    /// conversations and weights (read, or taken from the rounds before it not answered yet), and which of its
    /// identifiers are recorded already.
    struct RoundReads {
        let pending: [[Int]]
        /// The last sequence number reserved, and how many.
        let last: Int64
        let total: Int
        /// One per group of `pending`.
        let stored: [StoredConversation]
        let weights: (weights: LearnedWeights, version: Int64)
        /// The donations whose identifiers are recorded already.
        let recordedAlready: Set<Int>
    }

    /// Reads one round of `pending` (groups of the batch's indices, one per conversation), reserving its numbers;
    /// lists the account again when its sequence counter was new.
    /// - Parameters:
    ///   - registeredNow: whether this is the first round since this store added the account to the list of
    ///     accounts (a new sequence counter is then no sign of a deletion).
    ///   - previous: the account as rounds not answered yet leave it: its conversations and weights are taken
    ///     from there instead of read, and its identifiers count as recorded.
    func readRound(
        _ pending: [[Int]], of donations: [Interaction], keys: RedisKeys, ledger: inout ImportLedger,
        registeredNow: Bool, after previous: AccountAfterRound?
    ) throws -> RoundReads {
        let total = pending.reduce(0) { $0 + $1.count }
        // Noted before the numbers are asked for: a reply lost after the script ran leaves numbers to take back.
        ledger.numbered(account: keys.account, conversations: pending.map { donations[$0[0]].conversationIdentifier })
        var numbers = RedisCommand(script: RedisScripts.numbers, keys: [keys.conversationNumbers, keys.meta])
        numbers.append(total)
        for group in pending { numbers.append(donations[group[0]].conversationIdentifier) }
        guard let reserved = try send(numbers).checkedArray(), reserved.count == pending.count + 1,
            let last = reserved[0].integer
        else { throw StoreError.damaged("a reply of Redis to a reservation of numbers") }
        // A sequence counter that was 0: the account was deleted, or forgotten once emptied, since this store
        // registered it; in any round, since a deletion between two rounds (whose write then conflicted) forgets it
        // too. Listed at once: this reservation is the only one to see it, whatever becomes of its round (sent, read
        // again, or all duplicates).
        if last == Int64(total) && !registeredNow { try listAccount(keys) }
        let conversationNumbers = reserved.dropFirst().map { $0.integer ?? 0 }
        let unknown = conversationNumbers.filter { previous?.conversations[$0] == nil }
        var read: [Int64: StoredConversation] = [:]
        for conversation in try readConversations(unknown, keys: keys) { read[conversation.number] = conversation }
        let stored = conversationNumbers.map { number in
            previous?.conversations[number] ?? read[number]
                ?? StoredConversation(
                    number: number, version: 0, record: .empty, people: [], groups: [], lastSequence: 0)
        }
        let weights: (weights: LearnedWeights, version: Int64)
        if let previous {
            weights = previous.weights
        } else {
            let read = try readWeights(keys)
            weights = (read.weights, read.version)
        }
        var known = RedisCommand("HMGET", key: keys.identifiers)
        let indices = pending.flatMap { $0 }
        for index in indices { known.append(donations[index].identifier ?? "") }
        guard let existing = try send(known).checkedArray(), existing.count == indices.count else {
            throw StoreError.damaged("a reply of Redis to a read of identifiers")
        }
        var recordedAlready: Set<Int> = []
        for (index, value) in zip(indices, existing)
        where !value.isNull || previous?.identifiers.contains(ByteKey(donations[index].identifier ?? "")) == true {
            recordedAlready.insert(index)
        }
        return RoundReads(
            pending: pending, last: last, total: total, stored: stored, weights: weights,
            recordedAlready: recordedAlready)
    }

    /// Computes a round from what it read (`readRound`): the script, and what it leaves.
    /// - Parameter lease: how its script treats the account's write lease.
    func computeRound(
        _ read: RoundReads, of donations: [Interaction], keys: RedisKeys, requiringExisting: Bool,
        lease: ScriptBuilder.Lease
    ) throws -> RecordingRound {
        let (pending, stored, account, last, total) = (read.pending, read.stored, read.weights, read.last, read.total)
        let learned = ranking.learnedPolicy
        var round = RecordingRound(after: AccountAfterRound(account: keys.account))
        if requiringExisting, stored.contains(where: { $0.version == 0 }) {
            // Gone since it was suggested (or deleted between two rounds: the script's check of its version
            // sent the round back here). The number just reserved for it goes too.
            try forgetNumbersWithoutConversations(
                among: pending.map { donations[$0[0]].conversationIdentifier }, keys)
            throw ConversationGone()
        }
        var groupOfIndex: [Int: Int] = [:]
        for (group, indices) in pending.enumerated() {
            for index in indices { groupOfIndex[index] = group }
        }
        // Sequence numbers in the order of the batch (the export's order), whatever the grouping; the
        // donations are applied in that order, so that the weights learn in it.
        let order = pending.flatMap { $0 }.sorted()
        var sequenceOf: [Int: Int64] = [:]
        for (offset, index) in order.enumerated() {
            sequenceOf[index] = last - Int64(total) + 1 + Int64(offset)
        }
        var working = stored.map(WorkingConversation.init)
        var weights = account.weights
        var firstSequence: Int64 = 0
        var lastSequence: Int64 = 0
        for index in order {
            guard let group = groupOfIndex[index], !read.recordedAlready.contains(index) else {
                round.duplicates.append(index)
                continue
            }
            // A share takes its conversation's group identifier as this round read it, which the script's check
            // of the conversation's version covers (`DonationStore.recordShare`).
            let donation =
                requiringExisting ? donations[index].inheritingGroup(of: stored[group].groups) : donations[index]
            let sequence = sequenceOf[index] ?? 0
            let before = working[group].record.state
            working[group].append(donation, index: index, sequence: sequence, types: types, policy: policy)
            if let learned {
                weights.record(
                    ConversationState.Event(donation), before: before, after: working[group].record.state,
                    policy: learned)
            }
            if firstSequence == 0 { firstSequence = sequence }
            lastSequence = sequence
        }
        guard firstSequence > 0 else { return round }
        var script = ScriptBuilder(keys)
        script.lease = lease
        for (position, change) in working.enumerated() where !change.recorded.isEmpty {
            change.write(
                identifier: donations[pending[position][0]].conversationIdentifier, keys: keys, store: self,
                into: &script)
            round.recorded += change.recorded
            round.after.conversations[change.stored.number] = change.after
            for identifier in change.identifiers { round.after.identifiers.insert(ByteKey(identifier)) }
        }
        let weightsKey = keys.learnedWeights
        if learned != nil {
            script.check(weightsKey, version: account.version, firstSequence: firstSequence)
            script.hset(weightsKey, "w", RecordCoding.encode(weights))
            script.hset(weightsKey, "ls", Array(String(lastSequence).utf8))
        } else {
            // Recorded without learning: whoever ranks with learned weights folds them again.
            script.hset(weightsKey, "fold", Array("1".utf8))
            script.bumpVersion(weightsKey)
        }
        // Stored as their bits (`RecordCoding`): what a read would find, to the bit.
        round.after.weights = (weights, account.version + 1)
        round.script = script.command
        return round
    }

    /// Takes a round's reply: notes what it recorded (in `outcomes`, and in the ledger, to undo it if a later write
    /// fails) and the duplicates it found.
    /// - Parameter failure: why the script, which ran, is not acknowledged (`writeReplicated`): thrown once what it
    ///   recorded is noted, so that the caller's undo takes it back (it stayed, and a retry recorded the donations
    ///   without identifiers of their own twice).
    /// - Returns: what the script answered; unless it was applied, the round changed nothing (read it again, with
    ///   new sequence numbers).
    func settle(
        _ round: RecordingRound, reply: RedisValue, failure: StoreError?, _ donations: [Interaction],
        outcomes: inout [DonationOutcome?], ledger: inout ImportLedger
    ) throws -> ApplyOutcome {
        round.noteDuplicates(in: &outcomes, donations)
        let outcome = try Self.applyOutcome(reply)
        guard outcome == .applied else { return outcome }
        for index in round.recorded {
            let identifier = donations[index].identifier ?? ""
            outcomes[index] = .recorded(identifier: identifier)
            ledger.note(account: round.after.account, identifier: identifier)
        }
        if let failure { throw failure }
        return outcome
    }

    /// One conversation's part of a round: its record and indexes as the round's donations leave them, and the
    /// operations that write them.
    private struct WorkingConversation {
        let stored: StoredConversation
        var record: ConversationRecord
        var entries: [[UInt8]] = []
        var snapshots: [String: [UInt8]] = [:]
        /// The body the conversation is shown by from now on (field `i`), when a donation of the round changed it.
        var latest: [UInt8]?
        var shown: ShownDonation
        var people: DistinctStrings
        var groups: DistinctStrings
        var oldest = Double.infinity
        var firstSequence: Int64 = 0
        var lastSequence: Int64 = 0
        /// The batch's indices of the donations it records, and their identifiers.
        var recorded: [Int] = []
        var identifiers: [String] = []
        /// The people keys and group identifiers it gains.
        var newPeople: [String] = []
        var newGroups: [String] = []

        init(_ stored: StoredConversation) {
            self.stored = stored
            record = stored.record
            shown = ShownDonation(describedAt: stored.describedAt)
            people = DistinctStrings(stored.people)
            groups = DistinctStrings(stored.groups)
        }

        /// Applies one donation (`ConversationRecord.apply`) and notes what it writes.
        /// - Parameter index: the donation's place in the batch.
        mutating func append(
            _ donation: Interaction, index: Int, sequence: Int64, types: UniformTypeTree, policy: FrecencyPolicy
        ) {
            let identifier = donation.identifier ?? ""
            let body = donation.intent.snapshotBody
            let snapshot = RedisDonationStore.snapshotKey(body)
            let isLatest = record.apply(
                date: donation.date, direction: donation.direction, isEngagedSuggestion: donation.isEngagedSuggestion,
                isGroup: donation.intent.isGroup, contentKinds: types.contentKinds(of: donation.intent.contentTypes),
                serviceName: donation.intent.serviceName, policy: policy)
            if shown.takes(date: donation.date, describes: donation.intent.describesConversation, isLatest: isLatest) {
                latest = body
            }
            if firstSequence == 0 { firstSequence = sequence }
            entries.append(
                RecordCoding.encode(
                    RecordCoding.Entry(
                        sequence: sequence, identifier: identifier, groupIdentifier: donation.groupIdentifier,
                        date: donation.date.seconds, direction: donation.direction, engaged: donation.isEngagedSuggestion,
                        contentTypes: donation.intent.contentTypes, snapshot: snapshot)))
            identifiers.append(identifier)
            snapshots[snapshot] = body
            for person in donation.intent.participants {
                for key in person.matchKeys where people.insert(key) { newPeople.append(key) }
            }
            if let groupIdentifier = donation.groupIdentifier, groups.insert(groupIdentifier) {
                newGroups.append(groupIdentifier)
            }
            oldest = min(oldest, donation.date.seconds)
            lastSequence = sequence
            recorded.append(index)
        }

        /// The conversation as the round's script leaves it: what `readConversations` finds once it ran (the
        /// record is stored as its numbers' bits, so to the bit).
        var after: StoredConversation {
            StoredConversation(
                number: stored.number, version: stored.version + 1, record: record, people: people.elements,
                groups: groups.elements,
                lastSequence: lastSequence, describedAt: shown.describedAt, hasDescribedAt: true)
        }

        /// The conversation's check (its version, and its last donation before this round's first) and its
        /// operations: the identifiers, people and groups it gains, its hash, snapshots, donations and lists.
        func write(identifier: String, keys: RedisKeys, store: RedisDonationStore, into script: inout ScriptBuilder) {
            let conversation = stored
            let number = conversation.number
            let hash = keys.conversation(number)
            script.check(hash, version: conversation.version, firstSequence: firstSequence)
            if conversation.version == 0 {
                script.checkNumber(keys.conversationNumbers, identifier: identifier, number: number)
            }
            let numberBytes = Array(String(number).utf8)
            for identifier in identifiers {
                script.checkedIdentifiers.append(identifier)
                script.hset(keys.identifiers, identifier, numberBytes)
            }
            for person in newPeople { script.sadd(keys.person(person), number) }
            for group in newGroups { script.sadd(keys.group(group), number) }
            script.hset(hash, "id", Array(identifier.utf8))
            script.hset(hash, "ls", Array(String(lastSequence).utf8))
            if let latest { script.hset(hash, "i", latest) }
            if !stored.hasDescribedAt || shown.describedAt != stored.describedAt {
                script.hset(hash, "dd", StoredConversation.describedAtField(shown.describedAt))
            }
            if !newPeople.isEmpty {
                script.hset(hash, "pk", RecordCoding.encode(strings: people.elements))
            }
            if !newGroups.isEmpty {
                script.hset(hash, "gk", RecordCoding.encode(strings: groups.elements))
            }
            for (snapshot, body) in snapshots.sorted(by: { $0.key < $1.key }) {
                script.hsetnx(keys.snapshots(number), snapshot, body)
            }
            script.rpush(keys.donations(number), entries)
            store.writeState(of: conversation, to: record, keys: keys, into: &script)
            script.zaddLess(keys.oldest, oldest, number)
        }
    }

    /// The account's learned weights and the version of their hash (0 when it has none), as a round reads them.
    func readWeights(_ keys: RedisKeys) throws(StoreError) -> (weights: LearnedWeights, version: Int64, fold: Bool) {
        guard let fields = try send(RedisCommand("HMGET", key: keys.learnedWeights, "w", "v", "fold")).checkedArray(),
            fields.count == 3
        else { throw StoreError.damaged("an account's learned weights in Redis") }
        let weights = try fields[0].bytes.map(RecordCoding.decodeWeights) ?? .empty
        return (weights, fields[1].string.flatMap(Int64.init) ?? 0, fields[2].string == "1")
    }

    /// A snapshot's key in its conversation's `sn` hash: 128 bits of two FNV-1a hashes of its body (two bodies of one
    /// conversation that share both are as likely as a collision of random 128-bit values).
    static func snapshotKey(_ body: [UInt8]) -> String {
        var first = StableHash()
        var second = StableHash()
        body.withUnsafeBufferPointer { bytes in
            first.combine(utf8: bytes)
            [UInt8(0x5A)].withUnsafeBufferPointer { second.combine(utf8: $0) }
            second.combine(utf8: bytes)
        }
        func hex(_ value: UInt64) -> String {
            let text = String(value, radix: 16)
            return String(repeating: "0", count: 16 - text.count) + text
        }
        return hex(first.value) + hex(second.value)
    }

    /// The intent a snapshot holds.
    static func decodeIntent(_ bytes: [UInt8]) throws(StoreError) -> SendMessageIntent {
        do {
            return try bytes.withUnsafeBufferPointer { buffer throws(InputError) in
                try SendMessageIntent(jsonBytes: buffer, path: "intent")
            }
        } catch {
            throw StoreError.damaged("a snapshot in Redis (\(error))")
        }
    }

    /// A preference as the `pref` hash holds it: `BLOCKED,LESS`.
    static func preference(_ text: String) -> (blocked: Bool, less: Int) {
        let parts = text.split(separator: ",")
        return (parts.first == "1", parts.count > 1 ? Int(parts[1]) ?? 0 : 0)
    }
}
