import RedisCluster
import SuggestCore

extension RedisDonationStore {
    /// Deletes the selected donations of one account; each conversation they fed is recomputed from its remaining
    /// donations, in recording order (the fold the embedded store replays), by one script, and a conversation left
    /// without donations is removed with its names, people, pictures and indexes. Then the account's learned
    /// weights are folded again from all of its remaining donations (`refoldWeights`), and every node rewrites its
    /// append-only file (and snapshot, when it keeps one), so that the deleted bytes leave the nodes' files.
    ///
    /// A deletion that spans several conversations is atomic per conversation, and safe to repeat. Each
    /// conversation's script marks the weights to be folded, so that a fold that another client's change keeps
    /// from finishing is done by the next maintenance step.
    public func delete(_ selector: DeletionSelector, account: String) throws -> DeletionReport {
        let keys = RedisKeys(account: account)
        let numbers: [Int64]
        let drops: (RecordCoding.Entry) -> Bool
        switch selector {
        case .conversation(let identifier):
            numbers = try send(RedisCommand("HGET", key: keys.conversationNumbers, identifier)).string.flatMap(Int64.init)
                .map { [$0] } ?? []
            drops = { _ in true }
        case .identifier(let identifier):
            numbers = try send(RedisCommand("HGET", key: keys.identifiers, identifier)).string.flatMap(Int64.init)
                .map { [$0] } ?? []
            drops = { $0.identifier.hasSameBytes(as: identifier) }
        case .groupIdentifier(let group):
            numbers = try conversationNumbers(listedBy: RedisCommand("SMEMBERS", key: keys.group(group)))
            drops = { $0.groupIdentifier?.hasSameBytes(as: group) == true }
        case .before(let date):
            let below = "(" + String(decoding: ScriptBuilder.score(date.seconds), as: UTF8.self)
            numbers = try conversationNumbers(listedBy: RedisCommand("ZRANGEBYSCORE", key: keys.oldest, "-inf", below))
            drops = { $0.date < date.seconds }
        case .all, .account:
            numbers = try allConversationNumbers(keys)
            drops = { _ in true }
        }
        let wholeAccount = selector == .all || selector == .account
        var report = DeletionReport()
        // Whatever fails from here on, the files are rewritten before the failure is reported: a conversation's
        // script that no replica confirmed in time (a `WAIT` that timed out, a replica stopped) has run on its
        // master all the same, and its deleted bytes would stay in the nodes' files, with no mark for maintenance
        // to rewrite them later.
        var forgotPreferences = false
        var failure: StoreError?
        do {
            for number in numbers.sorted() {
                let outcome = try rewrite(number, keys: keys, dropping: drops, allowingOutOfMemory: true)
                guard outcome.removed > 0 else { continue }
                report.donations += outcome.removed
                report.conversations.append(outcome.identifier)
                if outcome.isGone { report.removedConversations.append(outcome.identifier) }
            }
            if wholeAccount {
                // Numbers whose conversation never got a hash (a write that failed after the number was given), and
                // only those: a conversation that another client recorded after the listing above keeps its number,
                // and so the account, as if recorded after the deletion. Without its number, its hash, log and lists
                // would be where no route reaches them: suggested, never exported, never deleted.
                let numbered = try send(RedisCommand("HKEYS", key: keys.conversationNumbers)).checkedArray() ?? []
                try forgetNumbersWithoutConversations(among: numbered.compactMap(\.string), keys)
            }
            if report.donations > 0 { try refoldWeights(keys) }
            switch selector {
            case .conversation(let identifier): forgotPreferences = try forgetSuggestLess(keys, of: [identifier])
            case .all: forgotPreferences = try forgetSuggestLess(keys, of: nil)
            case .account: forgotPreferences = try forgetPreferences(keys)
            case .identifier, .groupIdentifier, .before: break
            }
            if wholeAccount {
                try forgetAccountIfEmpty(keys)
            } else if !report.removedConversations.isEmpty || forgotPreferences {
                try forgetAccountIfNothingIsLeft(keys)
            }
        } catch {
            // Deletion goes conversation by conversation: one that failed part-way leaves the rest for a retry,
            // which said only why it failed (a lost connection's "not acknowledged"), not that half was gone.
            var partly = error
            if report.donations > 0 || error.mayHaveBeenRecorded {
                partly.message += "; the deletion may be partly done: run it again (repeating it is harmless)"
            }
            failure = partly
        }
        report.conversations.sort { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        report.removedConversations.sort { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        report.preferencesForgotten = forgotPreferences
        if report.donations > 0 || forgotPreferences || failure != nil {
            do {
                report.logTruncated = try rewriteFiles(slowLogs: .account(keys))
            } catch {
                failure = failure ?? error
            }
        }
        if let failure { throw failure }
        return report
    }

    /// Every preference of the account, blocks too (the whole account goes), each by the preference script, which
    /// moves the account's state stamp as any change of a preference does.
    /// - Returns: whether there was one.
    private func forgetPreferences(_ keys: RedisKeys) throws(StoreError) -> Bool {
        let commands = try storedPreferences(keys).flatMap { preference in
            ["unblock", "forget-less"].map { RedisScripts.changePreference(preference.conversation, $0, keys: keys) }
        }
        guard !commands.isEmpty else { return false }
        try changePreferences(commands)
        return true
    }

    /// "Suggest Less" goes with a conversation (or all of an account's, `conversations` nil) deleted as a whole,
    /// whether it had donations or not: it was about that conversation. A block is a standing choice and stays.
    /// - Returns: whether one was forgotten (its name is then in the nodes' files until they are rewritten).
    private func forgetSuggestLess(_ keys: RedisKeys, of conversations: [String]?) throws(StoreError) -> Bool {
        var named: [String] = []
        if let conversations {
            for conversation in conversations {
                let value = try send(RedisCommand("HGET", key: keys.preferences, conversation)).string
                if let value, Self.preference(value).less != 0 { named.append(conversation) }
            }
        } else {
            named = try storedPreferences(keys).filter { $0.less != 0 }.map(\.conversation)
        }
        guard !named.isEmpty else { return false }
        try changePreferences(named.map { RedisScripts.changePreference($0, "forget-less", keys: keys) })
        return true
    }

    /// After the whole account was deleted: its name goes from the list of accounts and its own keys (counters,
    /// weights, state stamp), unless a preference (a block, "suggest less") keeps the account, as it keeps it in the
    /// embedded store. A conversation recorded meanwhile by another client keeps it too.
    ///
    /// The name leaves the list first and comes back if the account is not empty after all: a client that records
    /// into the account after its keys went finds its counters at zero and puts the name back itself.
    func forgetAccountIfEmpty(_ keys: RedisKeys) throws(StoreError) {
        _ = try write([RedisCommand("SREM", key: RedisKeys.accounts, keys.account)])
        let forget = RedisCommand(
            script: RedisScripts.forgetAccount,
            keys: [
                keys.conversationNumbers, keys.preferences, keys.stateStamp, keys.meta, keys.learnedWeights,
                keys.identifiers, keys.oldest, keys.writeLease,
            ])
        guard try write([forget])[0].integer == 1 else {
            try listAccount(keys)
            return
        }
        registeredAccounts.remove(Array(keys.account.utf8))
    }

    /// After a change that may have taken away an account's last conversation or preference (a deletion of less
    /// than the whole account, an unblock): when nothing is left, the account is forgotten as a deletion of the
    /// whole account forgets it (`forgetAccountIfEmpty`), or its name would stay in the list of accounts and two
    /// keys of its own, and so in every node's files, where the embedded store keeps nothing of such an account. Read
    /// first, so that a change that leaves something costs one round trip more.
    func forgetAccountIfNothingIsLeft(_ keys: RedisKeys) throws(StoreError) {
        let lengths = try pipeline([
            RedisCommand("HLEN", key: keys.conversationNumbers), RedisCommand("HLEN", key: keys.preferences),
        ])
        guard lengths.allSatisfy({ $0.integer == 0 }) else { return }
        try forgetAccountIfEmpty(keys)
    }

    /// Deletes every account's keys (preferences included): an empty store, with its settings kept.
    public func deleteEverything() throws -> DeletionReport {
        var report = DeletionReport()
        let accounts = try accountNames()
        for account in accounts { report.donations += try donationCount(account: account) }
        // As in `delete`: once anything may have gone, the files are rewritten before a failure is reported.
        do {
            try unlinkEveryKey(accounts: accounts)
        } catch {
            _ = try? rewriteFiles(slowLogs: .everyAccount)
            throw error
        }
        report.logTruncated = try rewriteFiles(slowLogs: .everyAccount)
        return report
    }

    /// Unlinks the state stamps of `accounts`, then every key of suggest's, then the list of accounts.
    private func unlinkEveryKey(accounts: [String]) throws(StoreError) {
        // The state stamps first: from here on no ranking mirror of these accounts is current, while the rest of
        // their keys go in whatever order the scan finds them.
        _ = try write(accounts.map { RedisCommand("UNLINK", key: RedisKeys(account: $0).stateStamp) })
        // Every key of suggest's is `sg:` and a tag: scan each master for them.
        let masters: [RedisNode]
        do {
            masters = try client.nodes().filter { $0.role == .master }
        } catch {
            throw Self.translate(error)
        }
        for master in masters {
            var cursor = "0"
            repeat {
                let reply: RedisValue
                do {
                    reply = try client.send(RedisCommand("SCAN", cursor, "MATCH", "sg:{*", "COUNT", 1000), to: master.endpoint)
                } catch {
                    throw Self.translate(error)
                }
                guard let parts = try reply.checkedArray(), parts.count == 2, let next = parts[0].string else {
                    throw StoreError(.failed, "Redis answered SCAN with \(reply)")
                }
                cursor = next
                let found = (parts[1].array ?? []).compactMap(\.bytes)
                if !found.isEmpty { _ = try write(found.map { RedisCommand("UNLINK", key: $0) }) }
            } while cursor != "0"
        }
        _ = try write([RedisCommand("DEL", key: RedisKeys.accounts)])
    }

    /// The conversation numbers that a set, hash or sorted set of them lists (the reply of `command`).
    func conversationNumbers(listedBy command: RedisCommand) throws(StoreError) -> [Int64] {
        (try send(command).checkedArray() ?? []).compactMap { $0.string.flatMap(Int64.init) }
    }

    /// The numbers of every conversation of the account.
    func allConversationNumbers(_ keys: RedisKeys) throws(StoreError) -> [Int64] {
        try conversationNumbers(listedBy: RedisCommand("HVALS", key: keys.conversationNumbers))
    }

    /// What a rewrite did to one conversation.
    struct Rewrite {
        var identifier = ""
        var removed = 0
        var isGone = false
    }

    /// Rewrites one conversation without the donations `dropping` selects: its list, record, latest intent,
    /// snapshots, people, groups, identifiers and sorted sets, from the donations that remain, by one script that
    /// checks nobody changed it meanwhile (else it is read and computed again).
    /// - Parameter rebuildingAnyway: recompute the conversation even when nothing is dropped (a new policy).
    /// - Parameter allowingOutOfMemory: run even on a server at its `maxmemory`: a deletion, an expiry, the undoing
    ///   of a failed import (what takes donations away must work on a full node; a rewrite keeping some of a
    ///   conversation's donations may pass the limit by its new state for a moment).
    /// - Parameter keepingSuggestLess: leave "suggest less" of a conversation left with no donation (an undone
    ///   import: the person's feedback was older than it); a deletion or expiry takes it.
    /// - Parameter background: maintenance's work (an expiry, a rebuild), which waits while a recording holds the
    ///   account's write lease, where a person's deletion and an import's undo go on (`WriteLease`): a rebuild
    ///   rewrites conversation after conversation, and each would make a recording's round lose again. It waits
    ///   briefly (`Contention.backgroundPatience`), then throws `Contention.outOfPatience`, and the step leaves
    ///   the account for the next one.
    func rewrite(
        _ number: Int64, keys: RedisKeys, dropping drops: (RecordCoding.Entry) -> Bool, rebuildingAnyway: Bool = false,
        allowingOutOfMemory: Bool = false, keepingSuggestLess: Bool = false, background: Bool = false
    ) throws(StoreError) -> Rewrite {
        // It loses only to writes of this conversation: a conversation that a donation changes every few
        // milliseconds.
        var contention = Contention(keys, conflictsBeforeLease: 3, as: background ? .maintenance : .deletion)
        defer { contention.end(self) }
        while contention.conflicts < 50 {
            guard try contention.mayTry(self) else { continue }
            let replies = try pipeline([
                RedisCommand("HMGET", key: keys.conversation(number), "v", "r", "pk", "gk", "ls", "id"),
                RedisCommand("LRANGE", key: keys.donations(number), 0, -1),
                RedisCommand("HGETALL", key: keys.snapshots(number)),
            ])
            guard let fields = try replies[0].checkedArray(), fields.count == 6 else {
                throw StoreError.damaged("a conversation's hash in Redis")
            }
            guard let version = fields[0].string.flatMap(Int64.init), let recordBytes = fields[1].bytes,
                let identifier = fields[5].string
            else { return Rewrite() }  // no such conversation (any more)
            let stored = StoredConversation(
                number: number, version: version, record: try RecordCoding.decodeRecord(recordBytes),
                people: try fields[2].bytes.map(RecordCoding.decodeStrings) ?? [],
                groups: try fields[3].bytes.map(RecordCoding.decodeStrings) ?? [],
                lastSequence: fields[4].string.flatMap(Int64.init) ?? 0)
            let entries = try (try replies[1].checkedArray() ?? []).map { value throws(StoreError) in
                try RecordCoding.decodeEntry(value.bytes ?? [])
            }
            var snapshots: [String: [UInt8]] = [:]
            for (key, body) in try replies[2].checkedArray()?.fieldPairs ?? [] {
                if let key = key.string, let body = body.bytes { snapshots[key] = body }
            }
            let kept = entries.filter { !drops($0) }
            let removed = entries.filter(drops)
            guard !removed.isEmpty || rebuildingAnyway else { return Rewrite(identifier: identifier) }
            var script = ScriptBuilder(keys)
            script.lease = contention.scriptLease
            script.check(keys.conversation(number), version: version)
            script.allowsOutOfMemory = allowingOutOfMemory
            // The account's weights no longer follow from its donations: marked, and any fold under way made to
            // read them again.
            script.hset(keys.learnedWeights, "fold", Array("1".utf8))
            script.bumpVersion(keys.learnedWeights)
            if kept.isEmpty {
                removeConversation(
                    stored, identifier: identifier, donationIdentifiers: removed.map(\.identifier), keys: keys,
                    into: &script)
            } else {
                try recompute(stored, kept: kept, removed: removed, snapshots: snapshots, keys: keys, into: &script)
            }
            let reply = try write([script.command])[0]
            switch try Self.applyOutcome(reply) {
            case .applied:
                contention.applied()
                if kept.isEmpty && !keepingSuggestLess {
                    // "Suggest Less" was about the deleted conversation; a block is a standing choice and stays.
                    _ = try write([
                        RedisScripts.changePreference(identifier, "forget-less", keys: keys)
                    ])
                }
                return Rewrite(identifier: identifier, removed: removed.count, isGone: kept.isEmpty)
            case let outcome:
                try contention.lost(outcome, self)
            }
        }
        throw StoreError(.busy, "a conversation kept changing while it was being rewritten; retry in a moment")
    }

    /// The operations that rebuild a conversation from the donations it keeps, in recording order.
    private func recompute(
        _ stored: StoredConversation, kept: [RecordCoding.Entry], removed: [RecordCoding.Entry],
        snapshots: [String: [UInt8]], keys: RedisKeys, into script: inout ScriptBuilder
    ) throws(StoreError) {
        let number = stored.number
        var record = ConversationRecord.empty
        var latest: [UInt8]?
        var shown = ShownDonation()
        var people = DistinctStrings()
        var groups = DistinctStrings()
        var intents: [String: SendMessageIntent] = [:]
        var oldest = Double.infinity
        for entry in kept {
            guard let body = snapshots[entry.snapshot] else { throw StoreError.damaged("a donation's snapshot in Redis") }
            let intent: SendMessageIntent
            if let known = intents[entry.snapshot] {
                intent = known
            } else {
                intent = try Self.decodeIntent(body)
                intents[entry.snapshot] = intent
                for person in intent.participants {
                    for key in person.matchKeys { people.insert(key) }
                }
            }
            let isLatest = record.apply(
                date: Timestamp(seconds: entry.date), direction: entry.direction, isEngagedSuggestion: entry.engaged,
                isGroup: intent.isGroup, contentKinds: types.contentKinds(of: entry.contentTypes),
                serviceName: intent.serviceName, policy: policy)
            if shown.takes(date: Timestamp(seconds: entry.date), describes: intent.describesConversation, isLatest: isLatest)
            {
                latest = body
            }
            if let group = entry.groupIdentifier { groups.insert(group) }
            oldest = min(oldest, entry.date)
        }
        let hash = keys.conversation(number)
        if let latest { script.hset(hash, "i", latest) }
        script.hset(hash, "dd", StoredConversation.describedAtField(shown.describedAt))
        script.hset(hash, "pk", RecordCoding.encode(strings: people.elements))
        script.hset(hash, "gk", RecordCoding.encode(strings: groups.elements))
        for person in stored.people where !people.contains(person) {
            script.srem(keys.person(person), number)
        }
        for group in stored.groups where !groups.contains(group) {
            script.srem(keys.group(group), number)
        }
        for entry in removed { script.hdel(keys.identifiers, entry.identifier) }
        for snapshot in snapshots.keys.sorted() where intents[snapshot] == nil {
            script.hdel(keys.snapshots(number), snapshot)
        }
        script.delete(keys.donations(number))
        script.rpush(keys.donations(number), kept.map(RecordCoding.encode))
        writeState(of: stored, to: record, keys: keys, into: &script)
        script.zadd(keys.oldest, oldest, number)
    }
}
