import RedisCluster
import SuggestCore

extension RedisDonationStore {
    /// Runs `body` with the account's ranking state: with a `RedisRankingMirror` whose copy of the account has the
    /// stamp Redis holds now (one `GET`), that copy; a change met before `body` is done makes it run again on
    /// Redis alone.
    public func withRankingSource<T>(account: String, _ body: (RedisRankingSource) throws -> T) throws -> T {
        let keys = RedisKeys(account: account)
        if let mirror, let mirrored = mirrorToCheck(account, in: mirror) {
            if try send(RedisCommand("GET", key: keys.stateStamp)).bytes == mirrored.stamp {
                mirror.hit()
                do {
                    return try body(RedisRankingSource(store: self, keys: keys, mirrored: mirrored))
                } catch is MirrorWentStale {
                    recentMirror = nil
                    mirror.abandoned(mirrored)
                }
            } else {
                recentMirror = nil
                mirror.stale(mirrored)
            }
        }
        return try body(RedisRankingSource(store: self, keys: keys))
    }

    /// The account's mirror, to be checked against its stamp: the one this store found last if the catalog has
    /// changed nothing since, otherwise the catalog's.
    private func mirrorToCheck(_ account: String, in mirror: RedisRankingMirror) -> MirroredRedisAccount? {
        if var recent = recentMirror, recent.uses < RecentMirror.reuses, recent.account.hasSameBytes(as: account),
            mirror.isUnchanged(since: recent.generation)
        {
            recent.uses += 1
            recentMirror = recent
            return recent.mirror
        }
        let (found, generation) = mirror.mirror(of: account)
        recentMirror = found.map { RecentMirror(account: account, mirror: $0, generation: generation) }
        return found
    }

    /// The account's donations in recording order, as the embedded store exports them: each conversation's list
    /// read (64 conversations per round trip), then merged by sequence number.
    public func forEachDonation(
        account: String, interruption: () throws -> Void, _ body: (Interaction) throws -> Void
    ) throws {
        let donations = try recordedDonations(account: account, interruption: interruption)
        for (offset, donation) in donations.enumerated() {
            if offset & 255 == 255 { try interruption() }
            try body(donation.interaction(account: account))
        }
    }

    /// The account's donations read into memory as the store keeps them (entries sharing their conversations'
    /// intents), made into donations one at a time as the reader asks: Redis keeps no read open between calls.
    public func openDonationCursor(account: String) throws -> any DonationCursor {
        RecordedDonations(account: account, donations: try recordedDonations(account: account, interruption: {}))
    }

    /// One donation as the store keeps it: its log entry and its conversation's intent for the entry's snapshot.
    struct RecordedDonation {
        var entry: RecordCoding.Entry
        var intent: SendMessageIntent

        func interaction(account: String) -> Interaction {
            var intent = intent
            if !entry.contentTypes.isEmpty { intent.contentTypes = entry.contentTypes }
            return Interaction(
                account: account, identifier: entry.identifier, groupIdentifier: entry.groupIdentifier,
                date: Timestamp(seconds: entry.date), direction: entry.direction, intent: intent,
                isEngagedSuggestion: entry.engaged)
        }
    }

    /// A cursor over `RecordedDonation`s.
    final class RecordedDonations: DonationCursor {
        private let account: String
        private var donations: [RecordedDonation]
        private var position = 0

        init(account: String, donations: [RecordedDonation]) {
            self.account = account
            self.donations = donations
        }

        func next() throws -> Interaction? {
            guard position < donations.count else { return nil }
            defer { position += 1 }
            return donations[position].interaction(account: account)
        }

        func close() { donations = [] }
    }

    /// The account's donations in recording order, each conversation's log and snapshots read in pipelined batches.
    private func recordedDonations(account: String, interruption: () throws -> Void) throws -> [RecordedDonation] {
        let keys = RedisKeys(account: account)
        let numbers = try allConversationNumbers(keys).sorted()
        var donations: [RecordedDonation] = []
        var start = 0
        while start < numbers.count {
            try interruption()
            let batch = numbers[start..<min(start + 64, numbers.count)]
            start += batch.count
            for log in try conversationLogs(batch, keys) {
                donations += log.entries.map { RecordedDonation(entry: $0.entry, intent: $0.intent) }
            }
        }
        donations.sort { $0.entry.sequence < $1.entry.sequence }
        return donations
    }

    /// The logs of some of an account's conversations, in one round trip: each entry (`LRANGE` of the log) with the
    /// intent of its snapshot (`HGETALL` of the conversation's snapshots).
    /// - Throws: `.damaged` for an entry whose snapshot is missing.
    func conversationLogs(_ numbers: ArraySlice<Int64>, _ keys: RedisKeys) throws(StoreError)
        -> [(number: Int64, entries: [(entry: RecordCoding.Entry, intent: SendMessageIntent)])]
    {
        let replies = try pipeline(
            numbers.flatMap { number in
                [
                    RedisCommand("LRANGE", key: keys.donations(number), 0, -1),
                    RedisCommand("HGETALL", key: keys.snapshots(number)),
                ]
            })
        return try numbers.enumerated().map { (offset, number) throws(StoreError) in
            var intents: [String: SendMessageIntent] = [:]
            for (key, snapshot) in try replies[2 * offset + 1].checkedArray()?.fieldPairs ?? [] {
                guard let key = key.string, let snapshot = snapshot.bytes else { continue }
                intents[key] = try Self.decodeIntent(snapshot)
            }
            let entries = try (try replies[2 * offset].checkedArray() ?? []).map {
                value throws(StoreError) -> (entry: RecordCoding.Entry, intent: SendMessageIntent) in
                let entry = try RecordCoding.decodeEntry(value.bytes ?? [])
                guard let intent = intents[entry.snapshot] else {
                    throw StoreError.damaged("a donation's snapshot in Redis")
                }
                return (entry, intent)
            }
            return (number, entries)
        }
    }

    public func donationCount(account: String) throws -> Int {
        let keys = RedisKeys(account: account)
        let numbers = try allConversationNumbers(keys)
        var count = 0
        var start = 0
        while start < numbers.count {
            let batch = numbers[start..<min(start + 512, numbers.count)]
            start += batch.count
            for reply in try pipeline(batch.map { RedisCommand("LLEN", key: keys.donations($0)) }) {
                count += Int(reply.integer ?? 0)
            }
        }
        return count
    }

    public func accounts() throws -> [String] { try accountNames() }

    /// The accounts with donations, in byte-wise order.
    func accountNames() throws(StoreError) -> [String] {
        let names = (try send(RedisCommand("SMEMBERS", key: RedisKeys.accounts)).checkedArray() ?? []).compactMap(\.string)
        let sizes = try pipeline(names.map { RedisCommand("HLEN", key: RedisKeys(account: $0).conversationNumbers) })
        return zip(names, sizes).filter { ($0.1.integer ?? 0) > 0 }.map(\.0)
            .sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
    }

    // MARK: Preferences

    public func isBlocked(conversation: String, account: String) throws -> Bool {
        guard let value = try send(RedisCommand("HGET", key: RedisKeys(account: account).preferences, conversation)).string
        else { return false }
        return Self.preference(value).blocked
    }

    /// Through the account's identifier hash (identifier to conversation number), then the conversation's hash.
    public func conversation(ofDonation identifier: String, account: String) throws -> String? {
        let keys = RedisKeys(account: account)
        guard let number = try send(RedisCommand("HGET", key: keys.identifiers, identifier)).string.flatMap(Int64.init)
        else { return nil }
        return try send(RedisCommand("HGET", key: keys.conversation(number), "id")).string
    }

    public func setBlocked(_ blocked: Bool, conversation: String, account: String) throws {
        try changePreference(blocked ? "block" : "unblock", conversation: conversation, account: account)
    }

    public func blockedConversations(account: String) throws -> [String] {
        try storedPreferences(RedisKeys(account: account)).filter(\.blocked).map(\.conversation)
            .sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
    }

    /// The account's preferences (its `pref` hash): each conversation with its block and its "suggest less" count.
    func storedPreferences(_ keys: RedisKeys) throws(StoreError) -> [(conversation: String, blocked: Bool, less: Int)] {
        let pairs = try send(RedisCommand("HGETALL", key: keys.preferences)).checkedArray() ?? []
        return pairs.fieldPairs.compactMap { field, value in
            guard let conversation = field.string, let value = value.string else { return nil }
            let preference = Self.preference(value)
            return (conversation, preference.blocked, preference.less)
        }
    }

    /// Sends commands of the preference script (`RedisScripts.changePreference`); throws on the first refused.
    func changePreferences(_ commands: [RedisCommand]) throws(StoreError) {
        _ = try write(commands)
    }

    @discardableResult
    public func suggestLess(conversation: String, account: String) throws -> Int {
        try changePreference("less", conversation: conversation, account: account)
    }

    public func resetFeedback(conversation: String, account: String) throws {
        try changePreference("reset", conversation: conversation, account: account)
    }

    @discardableResult
    private func changePreference(_ operation: String, conversation: String, account: String) throws(StoreError) -> Int {
        let keys = RedisKeys(account: account)
        // A change that only takes away needs no registration of the account (a preference to take away has one
        // already). The registration is a write of its own, before the change: in one pipeline with it, a failure
        // of one said nothing of the other (a change made, then a node of the list lost, was "nothing changed").
        if !RedisScripts.onlyTakesAway(operation) { try listAccount(keys) }
        let stamp = StateStamp.next()
        let change = RedisScripts.changePreference(conversation, operation, keys: keys, stamp: stamp)
        guard !undoing else {
            let reply = try pipeline([change])[0]
            return Int(reply.integer ?? 0)
        }
        // Whether the change may take away the conversation's last trace: then its name must leave the nodes' files
        // as a deletion's does (an unblock after a deletion left it in the append-only files).
        var mayEraseLastTrace = false
        if RedisScripts.onlyTakesAway(operation) {
            mayEraseLastTrace = try send(RedisCommand("HEXISTS", key: keys.preferences, conversation)).integer == 1
        }
        let (replies, failure) = try writeReplicated([change])
        // Refused as every write is (`changePreferences` too): a full node's as at `maxmemory`, a user's missing
        // permission as such.
        let reply = try Self.refusingErrors(replies)[0]
        if let failure {
            // On the master but not acknowledged: a "suggest less" left there would count twice when the caller
            // retries it (the other changes set a state, and a retry sets the same), so it is taken back, by a
            // write that waits for no replica, as a refused donation is. Only while the account's stamp is still
            // the one it set: after a failover that lost it, or a later change, a decrement could take back
            // another request's, acknowledged.
            if operation == "less" {
                undoing = true
                defer { undoing = false }
                _ = try? pipeline([
                    RedisScripts.changePreference(conversation, "unless", keys: keys, undoing: stamp)
                ])
            }
            throw failure
        }
        if mayEraseLastTrace {
            let left = try pipeline([
                RedisCommand("HEXISTS", key: keys.preferences, conversation),
                RedisCommand("HEXISTS", key: keys.conversationNumbers, conversation),
            ])
            // Not thrown: the preference changed, and an error would tell a retry otherwise. A user who may not
            // rewrite leaves the rewrite owed (`files.rewrite`), as a node that is down does. The account goes
            // too when that was all it had. But a rewrite owed that could not be noted either is said: nothing
            // else would remove the name from the nodes' files.
            if left.allSatisfy({ $0.integer == 0 }) {
                try? forgetAccountIfNothingIsLeft(keys)
                do {
                    _ = try rewriteFiles(slowLogs: .account(keys))
                } catch where error.leftDeletedBytesUnnoted {
                    throw error
                } catch {}
            }
        }
        return Int(reply.integer ?? 0)
    }
}
