import CSystem
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
                // Numbers whose conversation never got a hash (a write that failed after the number was given).
                _ = try write([RedisCommand("DEL", key: keys.conversationNumbers)])
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
        var people: [String] = []
        var peopleSeen: Set<[UInt8]> = []
        var groups: [String] = []
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
                    for key in person.matchKeys where peopleSeen.insert(Array(key.utf8)).inserted { people.append(key) }
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
            if let group = entry.groupIdentifier, !groups.contains(where: { $0.hasSameBytes(as: group) }) {
                groups.append(group)
            }
            oldest = min(oldest, entry.date)
        }
        let hash = keys.conversation(number)
        if let latest { script.hset(hash, "i", latest) }
        script.hset(hash, "dd", StoredConversation.describedAtField(shown.describedAt))
        script.hset(hash, "pk", RecordCoding.encode(strings: people))
        script.hset(hash, "gk", RecordCoding.encode(strings: groups))
        for person in stored.people where !peopleSeen.contains(Array(person.utf8)) {
            script.srem(keys.person(person), number)
        }
        for group in stored.groups where !groups.contains(where: { $0.hasSameBytes(as: group) }) {
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
                let replies = try pipeline(
                    batch.flatMap { number in
                        [
                            RedisCommand("LRANGE", key: keys.donations(number), 0, -1),
                            RedisCommand("HGETALL", key: keys.snapshots(number)),
                        ]
                    })
                for (offset, number) in batch.enumerated() {
                    var isGroup: [String: Bool] = [:]
                    for (key, body) in try replies[2 * offset + 1].checkedArray()?.fieldPairs ?? [] {
                        guard let key = key.string, let body = body.bytes else { continue }
                        isGroup[key] = try Self.decodeIntent(body).isGroup
                    }
                    for value in try replies[2 * offset].checkedArray() ?? [] {
                        let entry = try RecordCoding.decodeEntry(value.bytes ?? [])
                        guard let group = isGroup[entry.snapshot] else {
                            throw StoreError.damaged("a donation's snapshot in Redis")
                        }
                        donations.append(
                            (
                                entry.sequence, number,
                                ConversationState.Event(
                                    date: Timestamp(seconds: entry.date), direction: entry.direction,
                                    isEngagedSuggestion: entry.engaged, isGroup: group)
                            ))
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

    /// Asks every node (masters and replicas) to rewrite its append-only file, and to write a new snapshot when it
    /// keeps them, so that deleted values leave the nodes' files as well as their memory.
    ///
    /// A rewrite already under way may have begun before the deletion (its copy of the data may hold what was
    /// deleted), so it does not count: a node busy with one is asked again until a rewrite starts after the
    /// deletion, this one's or another client's (a deletion that another deletion's rewrite follows needs no fork
    /// of its own, so a burst of deletions shares the rewrites). The nodes are asked together, for up to 5 seconds
    /// in all; a node still busy then is noted (`files.rewrite` in the settings) and asked again by the next
    /// maintenance step.
    /// - Parameter slowLogs: whose entries to take out of the nodes' slow logs (`emptySlowLogs`): none for
    ///   maintenance's expiry and owed rewrites, which run every few seconds and would leave an operator no slow
    ///   log to read.
    /// - Returns: whether every node started (or scheduled) a rewrite that follows the deletion.
    /// - Throws: `.misconfigured` when the Redis user may not run a rewrite (its ACL), noted as a busy node is:
    ///   the deletion is done, but its bytes stay in that node's files until the user may. It was reported as a
    ///   node busy or down, retried by every later command, and the deleted names stayed in the files for good.
    func rewriteFiles(slowLogs: SlowLogScope = .none) throws(StoreError) -> Bool {
        guard let nodes = try? client.nodes() else {
            // Owed all the same: the next maintenance step asks again once the nodes can be listed.
            if let unnoted = noteFileRewrites(done: false) { throw Self.rewriteNotOwed(unnoted) }
            return false
        }
        // The snapshot too, whatever the node's `save` setting: a replica's full resync writes one even under
        // `save ""`, with what was deleted since in it.
        var requests = nodes.flatMap { node in FileRewrite.allCases.map { RewriteRequest(node: node, kind: $0) } }
        let deadline = ContinuousClock.now + .seconds(5)
        while requests.contains(where: { $0.state == .asking }) && ContinuousClock.now < deadline {
            for index in requests.indices where requests[index].state == .asking { ask(&requests[index]) }
            if requests.contains(where: { $0.state == .asking }) {
                var pause = timespec(tv_sec: 0, tv_nsec: 20_000_000)
                _ = nanosleep(&pause, nil)
            }
        }
        let done = requests.allSatisfy { $0.state == .started }
        let unnoted = noteFileRewrites(done: done)
        // Not the nodes found down just now: each would cost the connection's timeout again. (A node that refused a
        // rewrite, where a managed service disables it, may still empty its slow log.)
        let answering = nodes.filter { node in
            !requests.contains { $0.node.endpoint == node.endpoint && $0.unreachable }
        }
        let slowLogRefusal = emptySlowLogs(of: answering, naming: slowLogs)
        if let refused = requests.first(where: { $0.refusal != nil }), let message = refused.refusal {
            throw StoreError(
                .misconfigured,
                "deleted, but the Redis user may not run \(refused.kind.command.name) on \(refused.node.endpoint) "
                    + "(\(message.prefix(100))), so what was deleted stays in that node's files: give the user the "
                    + "permissions in docs/redis.md, \"A user of its own\"; "
                    + (unnoted.map { "then run BGREWRITEAOF and BGSAVE on every node: the note that owes the rewrite "
                        + "could not be written (\($0.message))" }
                        ?? "the next deletion or maintenance step rewrites them then"))
        }
        if let unnoted { throw Self.rewriteNotOwed(unnoted) }
        if let (node, message) = slowLogRefusal {
            throw StoreError(
                .misconfigured,
                "deleted, but the Redis user may not run SLOWLOG (GET and RESET) on \(node.endpoint) "
                    + "(\(message.prefix(100))), so names of what was deleted may stay in that node's slow log until "
                    + "newer slow commands push them out: give the user the permissions in docs/redis.md, \"A user of "
                    + "its own\"")
        }
        return done
    }

    /// Whose entries a deletion takes out of the nodes' slow logs.
    enum SlowLogScope {
        /// None (maintenance).
        case none
        /// Those that name the account: its keys, or its name alone (`sg:accounts`' members).
        case account(RedisKeys)
        /// Those that name any key of suggest's (`delete --everything`, a retention change).
        case everyAccount
    }

    /// Empties, best effort, the slow log of every node whose log names what `scope` says. A node keeps the first
    /// 32 arguments (128 bytes of each) of every command slower than `slowlog-log-slower-than` (10 ms by default)
    /// in memory, the latest 128 by default, where `SLOWLOG GET` shows them: an import's scripts name the account
    /// and its person keys (a person's address), which stayed there after the deletion left the files clean (a
    /// sweep found them after `delete --everything`). A log that names them is emptied whole (Redis takes out no
    /// single entry), other accounts' entries with it; one that does not is left to the operator.
    /// - Returns: a node that refused for want of the permission, and Redis's answer; other failures (a node down,
    ///   `SLOWLOG` renamed away) are left alone: the log is memory, and newer commands push the entries out.
    private func emptySlowLogs(of nodes: [RedisNode], naming scope: SlowLogScope) -> (RedisNode, String)? {
        // An entry (a command's arguments) that names what was deleted: one of its keys holds the account's escaped
        // prefix, within the 128 bytes a logged argument keeps; or it is a command on the list of accounts, and the
        // name is one of its arguments (whole, or cut at 128 bytes). Not any string that holds the name, nor any
        // argument equal to it: a short name such as "1" is in every log's client addresses, script hashes and
        // counts, and emptied every node's log.
        let names: ([[UInt8]]) -> Bool
        switch scope {
        case .none: return nil
        case .account(let keys):
            let prefix = Array(Array(keys.prefix.utf8).prefix(100))
            let name = Array(keys.account.utf8)
            let accounts = Array(RedisKeys.accounts.utf8)
            names = { arguments in
                arguments.contains { $0.firstRange(of: prefix) != nil }
                    || (arguments.contains(accounts)
                        && arguments.contains { $0 == name || (name.count > 100 && $0.starts(with: name.prefix(100))) })
            }
        case .everyAccount:
            let prefix = Array("sg:".utf8)
            names = { arguments in arguments.contains { $0.firstRange(of: prefix) != nil } }
        }
        var refusal: (RedisNode, String)?
        for node in nodes {
            do {
                let log = try client.send(RedisCommand("SLOWLOG", "GET", -1), to: node.endpoint)
                guard Self.entries(of: log).contains(where: names) else { continue }
                _ = try client.send(RedisCommand("SLOWLOG", "RESET"), to: node.endpoint)
            } catch {
                if case .server(_, let message) = error, Self.permissionDenied(message) != nil, refusal == nil {
                    refusal = (node, message)
                }
            }
        }
        return refusal
    }

    /// The arguments of each entry of a `SLOWLOG GET` reply (an entry is its id, time, duration, arguments, client
    /// address and name).
    private static func entries(of log: RedisValue) -> [[[UInt8]]] {
        guard case .array(let entries) = log else { return [] }
        return entries.map { entry in
            guard case .array(let fields) = entry, fields.count > 3, case .array(let arguments) = fields[3] else {
                return []
            }
            return arguments.compactMap(\.bytes)
        }
    }

    /// Notes in the settings whether a rewrite of the nodes' files is still owed (`files.rewrite`), for the next
    /// maintenance step.
    /// - Throws: when a rewrite is owed and the note could not be written: nothing else would ask for the rewrite,
    ///   and the deleted bytes would stay in the nodes' files while the deletion said the next upkeep removes them.
    ///   (A rewrite done whose note stays costs one more rewrite: not an error.)
    private func noteFileRewrites(done: Bool) -> StoreError? {
        forgetSettings()
        guard !done else {
            _ = try? write([RedisCommand("HDEL", key: RedisKeys.settings, "files.rewrite")])
            return nil
        }
        // On the master is enough (no replica need confirm it): the note is the same however often it is written.
        let note = RedisCommand(
            script: RedisScripts.setSettings, keys: [RedisKeys.settings], arguments: "files.rewrite", "1")
        let replies: [RedisValue]
        do {
            replies = try writeReplicated([note]).replies
        } catch {
            return error
        }
        do {
            _ = try Self.refusingErrors(replies)
        } catch {
            return Self.translate(error)
        }
        return nil
    }

    /// The error for a rewrite owed that could not be noted (`noteFileRewrites`), which nothing would ask for again.
    private static func rewriteNotOwed(_ unnoted: StoreError) -> StoreError {
        StoreError(
            unnoted.kind,
            "deleted, but not every Redis node could rewrite its append-only file and snapshot now, and the note that "
                + "the store's upkeep owes them a rewrite could not be written (\(unnoted.message)): what was deleted "
                + "stays in those files until they are rewritten, by the next deletion or by BGREWRITEAOF and BGSAVE "
                + "on every node")
    }

    /// The two files of a node that hold its data: the append-only file and the snapshot.
    private enum FileRewrite: CaseIterable {
        case appendOnlyFile, snapshot

        var command: RedisCommand {
            switch self {
            case .appendOnlyFile: RedisCommand("BGREWRITEAOF")
            case .snapshot: RedisCommand("BGSAVE", "SCHEDULE")
            }
        }

        /// The field of `INFO persistence` that counts the node's rewrites of this file, raised as each one starts.
        var startsField: String {
            switch self {
            case .appendOnlyFile: "aof_rewrites"
            case .snapshot: "rdb_saves"
            }
        }
    }

    /// One node's rewrite of one file after a deletion.
    private struct RewriteRequest {
        enum State { case asking, started, failed }
        let node: RedisNode
        let kind: FileRewrite
        var state = State.asking
        /// Redis's answer when the user may not run the rewrite (`NOPERM`): the state is `.failed`.
        var refusal: String?
        /// Whether the node could not be reached, or did not answer: the state is `.failed`.
        var unreachable = false
        /// How many rewrites of the file the node had started when one was first found under way: one more means a
        /// rewrite began after that, so after the deletion.
        var startsSeen: Int?
    }

    /// Asks for the rewrite once: `.started` when it started or was scheduled, or another rewrite started after
    /// the deletion; still `.asking` while one that may predate the deletion is under way (counted the first time);
    /// `.failed` on any other answer.
    private func ask(_ request: inout RewriteRequest) {
        // Greater, not different: a count that went down was reset (CONFIG RESETSTAT, a restarted node), which says
        // nothing of a rewrite since.
        if let seen = request.startsSeen, let now = startsSoFar(request), now > seen {
            request.state = .started
            return
        }
        do {
            _ = try client.send(request.kind.command, to: request.node.endpoint)
            request.state = .started
        } catch {
            guard case .server(_, let message) = error, message.contains("already in progress") else {
                request.state = .failed
                switch error {
                case .unreachable, .connectionLost, .timeout: request.unreachable = true
                default: break
                }
                if case .server(_, let message) = error, Self.permissionDenied(message) != nil {
                    request.refusal = message
                }
                return
            }
            // Counted after the refusal: the rewrite under way is in the count, any later one raises it.
            if request.startsSeen == nil { request.startsSeen = startsSoFar(request) }
        }
    }

    /// The node's count of rewrites of the request's file (`INFO persistence`), or `nil` when it cannot be read.
    private func startsSoFar(_ request: RewriteRequest) -> Int? {
        guard let info = try? client.send(RedisCommand("INFO", "persistence"), to: request.node.endpoint).string
        else { return nil }
        let prefix = request.kind.startsField + ":"
        for line in info.split(whereSeparator: \.isNewline) where line.hasPrefix(prefix) {
            return Int(line.dropFirst(prefix.count))
        }
        return nil
    }
}
