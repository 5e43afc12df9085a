import RedisCluster
import SuggestCore

/// One account's ranking state in Redis, seen through `RankingSource`: its sorted sets give sorted access, in pages
/// (every list's first page in one round trip, the same as the learned weights'), and a script gives random access
/// to a batch of conversations with their preferences and latest intents in one round trip. A handle is the
/// conversation's number in the account.
///
/// A query takes as few round trips as its steps allow: the weights and first pages, one per batch of candidates
/// and per later page, and none for the intents of the top K, read with the candidates.
///
/// Redis has no snapshot across round trips: a query that pages while another client writes the account may meet a
/// conversation twice (the walk counts it once) or miss one that moved up meanwhile. A query with no concurrent write
/// is exact, as on every store.
///
/// On a store opened with a `RedisRankingMirror`, a source may instead read the account's mirror, whose stamp the
/// store has just read from Redis: sorted and random access then read memory (handles are the mirror's slots), and
/// what the mirror does not hold (the latest intents, the people) is read with the stamp in one round trip, and
/// kept; a changed stamp there throws `MirrorWentStale`, and the query runs again on Redis.
public final class RedisRankingSource: RankingSource {
    let store: RedisDonationStore
    let keys: RedisKeys
    /// The account's mirror, when the query ranks from memory.
    let mirrored: MirroredRedisAccount?

    /// The first page of each list: enough for a top 8 to end within it, most of the time (on the generated 100k
    /// history a plain top 8 meets 27 conversations; with pages of 16 one list needed a second page, a round trip).
    static let firstPage = 32

    /// First pages read with the weights (`learnedWeights(beforeOpening:)`), `pages[i]` of `pagedLists[i]`, each
    /// taken by the `sortedAccess` that opens its list. Pairs of arrays rather than dictionaries, here and for the
    /// intents: the first dictionary keyed by a type in a process searches the run-time conformance tables for its
    /// `Hashable` conformance, tens of microseconds (`Int64KeyTable`), for a few entries searched in nanoseconds.
    private var pagedLists: [SortedList] = []
    private var pages: [[SortedEntry]] = []
    /// The latest intents (as stored) that random access read, `intentBytes[i]` of conversation `intentNumbers[i]`,
    /// for `latestIntents`.
    private var intentNumbers: [Int64] = []
    private var intentBytes: [[UInt8]] = []
    /// How many conversations' intents are kept: a walk's, not a scan's (the brute-force reference reads every
    /// conversation through this source).
    static let keptIntents = 1024
    /// Whether the account has any preference (a block, a "suggest less"), asked in the round trip of the first
    /// pages; `nil` until then. Without one, random access is plain `HMGET`s in one pipeline, which cost Redis
    /// about a third of the `candidates` script (150 µs for 32 conversations, mostly its calls from Lua); with one,
    /// or before it is known, the script looks up each conversation's preference beside its record.
    private var hasPreferences: Bool?

    init(store: RedisDonationStore, keys: RedisKeys, mirrored: MirroredRedisAccount? = nil) {
        self.store = store
        self.keys = keys
        self.mirrored = mirrored
    }

    /// As many as a first page: a plain top 8 is then scored in one round trip (27 conversations met on the
    /// generated 100k history: two batches of 16); a walk that ends early reads a few more candidates than it
    /// needs, each a few hundred bytes in the same round trip. From a mirror, one at a time, as a local source.
    public var randomAccessBatchSize: Int { mirrored == nil ? 32 : 1 }

    /// The answers kept with the mirror, when the query ranks from one: they hold for the account's state stamp.
    public var rankedAnswers: RankedAnswers? { mirrored?.cache.answers }

    /// Whether the store owed no rebuild: as of the mirror's stamp, or now, read afresh (kept settings may be
    /// older than the keys the walk read), once a query, when a walk could stop at the idle cutoff.
    public func keysFollowThePolicy() throws -> Bool {
        if let mirrored { return mirrored.keysFollowThePolicy }
        return try store.keysFollowThePolicyNow()
    }

    public func sortedAccess(_ lists: [SortedList]) throws -> [Cursor] {
        if let mirrored {
            return try lists.map { list in
                guard let entries = mirrored.list(list) else { throw MirrorWentStale() }
                return Cursor(source: self, entries: entries)
            }
        }
        _ = try pipeline([], readingFirstPagesOf: lists)
        return lists.map { list in
            Cursor(source: self, key: keys.list(list), page: takePage(of: list), offset: Self.firstPage)
        }
    }

    /// Sends `commands`, then reads the first page of each of `lists` not read yet, in one pipeline (one round trip:
    /// every key of the account is on one node), and keeps the pages for `sortedAccess`.
    /// - Returns: the replies, those of `commands` first.
    private func pipeline(_ commands: [RedisCommand], readingFirstPagesOf lists: [SortedList]) throws -> [RedisValue] {
        var commands = commands
        let leading = commands.count
        var unread: [SortedList] = []
        for list in lists where !pagedLists.contains(where: { $0 == list }) {
            unread.append(list)
            commands.append(RedisCommand("ZREVRANGE", key: keys.list(list), 0, Self.firstPage - 1, "WITHSCORES"))
        }
        let asksPreferences = hasPreferences == nil && !unread.isEmpty
        if asksPreferences { commands.append(RedisCommand("EXISTS", key: keys.preferences)) }
        let replies = try store.pipeline(commands)
        for offset in unread.indices {
            pages.append(try Self.entries(replies[leading + offset]))
            pagedLists.append(unread[offset])
        }
        if asksPreferences, let exists = replies[leading + unread.count].integer { hasPreferences = exists != 0 }
        return replies
    }

    /// The first page of `list` read ahead, forgotten as it is taken (empty if it was not read: no list asks twice).
    private func takePage(of list: SortedList) -> [SortedEntry] {
        guard let index = pagedLists.firstIndex(where: { $0 == list }) else { return [] }
        pagedLists.remove(at: index)
        return pages.remove(at: index)
    }

    /// A list's entries from a `ZREVRANGE ... WITHSCORES` reply.
    static func entries(_ reply: RedisValue) throws(StoreError) -> [SortedEntry] {
        guard let items = try reply.checkedArray() else { return [] }
        var entries: [SortedEntry] = []
        entries.reserveCapacity(items.count / 2)
        for index in stride(from: 0, to: items.count - 1, by: 2) {
            guard let member = items[index].string, let number = Int64(member), let score = items[index + 1].string,
                let key = parseScore(score)
            else { throw StoreError.damaged("a sorted list in Redis") }
            entries.append(SortedEntry(key: key, conversation: ConversationHandle(rawValue: number)))
        }
        return entries
    }

    /// A score as Redis writes it (`%.17g`, `inf`, `-inf`): the `Double` that was stored, to the bit.
    static func parseScore(_ text: String) -> Double? {
        switch text {
        case "inf", "+inf": return .infinity
        case "-inf": return -.infinity
        default: return Double(text)
        }
    }

    /// Pages through one sorted set, each next page twice the last; or walks a mirror's list.
    public struct Cursor: SortedAccessCursor {
        let source: RedisRankingSource
        let key: String
        var page: [SortedEntry]
        var position = 0
        var offset: Int
        var pageSize = RedisRankingSource.firstPage
        var exhausted: Bool
        var mirrored: MirroredList.Cursor?

        init(source: RedisRankingSource, key: String, page: [SortedEntry], offset: Int) {
            self.source = source
            self.key = key
            self.page = page
            self.offset = offset
            exhausted = page.count < RedisRankingSource.firstPage
        }

        init(source: RedisRankingSource, entries: MirroredList) {
            self.init(source: source, key: "", page: [], offset: 0)
            exhausted = true
            mirrored = MirroredList.Cursor(entries)
        }

        public mutating func next() throws -> SortedEntry? {
            if mirrored != nil { return mirrored?.next() }
            if position == page.count {
                guard !exhausted else { return nil }
                pageSize = min(pageSize * 2, 4096)
                let reply = try source.store.send(
                    RedisCommand("ZREVRANGE", key: key, offset, offset + pageSize - 1, "WITHSCORES"))
                page = try RedisRankingSource.entries(reply)
                position = 0
                offset += page.count
                exhausted = page.count < pageSize
                guard !page.isEmpty else { return nil }
            }
            defer { position += 1 }
            return page[position]
        }
    }

    public func candidate(_ conversation: ConversationHandle, contentKinds: [String]) throws -> RankingCandidate? {
        try candidates([conversation], contentKinds: contentKinds)[0]
    }

    public func candidates(_ conversations: [ConversationHandle], contentKinds: [String]) throws -> [RankingCandidate?] {
        guard !conversations.isEmpty else { return [] }
        if let mirrored {
            return conversations.map { handle in
                guard let slot = Self.slot(handle, in: mirrored) else { return nil }
                return mirrored.candidate(slot, handle: handle, contentKinds: contentKinds)
            }
        }
        // Each conversation's identifier, record, preference and latest intent, `fields` values apiece.
        let fields = RedisScripts.candidateFields
        var items: [RedisValue]
        if hasPreferences == false {
            let replies = try store.pipeline(
                conversations.map { RedisCommand("HMGET", key: keys.conversation($0.rawValue), "id", "r", "i") })
            items = []
            items.reserveCapacity(fields * conversations.count)
            for reply in replies {
                guard let values = try reply.checkedArray(), values.count == 3 else {
                    throw StoreError.damaged("a reply of Redis to a read of conversations")
                }
                items += [values[0], values[1], .null, values[2]]
            }
        } else {
            let reply = try store.send(
                RedisCommand(
                    script: RedisScripts.candidates,
                    keys: [keys.preferences] + conversations.map { keys.conversation($0.rawValue) }))
            guard let values = try reply.checkedArray(), values.count == fields * conversations.count else {
                throw StoreError.damaged("a reply of Redis to a read of conversations")
            }
            items = values
        }
        return try conversations.indices.map { index in
            let at = fields * index
            guard let identifier = items[at].string, let bytes = items[at + 1].bytes else { return nil }
            if intentNumbers.count < Self.keptIntents, let intent = items[at + 3].bytes {
                intentNumbers.append(conversations[index].rawValue)
                intentBytes.append(intent)
            }
            var record = try RecordCoding.decodeRecord(bytes)
            if let preference = items[at + 2].string {
                let (blocked, less) = RedisDonationStore.preference(preference)
                record.state.isBlocked = blocked
                record.state.lessFeedback = less
            }
            return RankingCandidate(
                conversation: conversations[index], conversationIdentifier: identifier, state: record.state,
                contentSums: contentKinds.map { record.contentSums[$0] ?? LogSpace.zero }, serviceName: record.serviceName)
        }
    }

    /// A mirror's slot of a handle it gave, `nil` for any other.
    private static func slot(_ handle: ConversationHandle, in mirrored: MirroredRedisAccount) -> Int32? {
        handle.rawValue >= 0 && handle.rawValue < Int64(mirrored.count) ? Int32(handle.rawValue) : nil
    }

    /// Sends `commands` with a read of the account's stamp after them, in one round trip (one node holds the
    /// account), and returns their replies if the stamp is still the mirror's: nothing was written since it was
    /// built, so the replies are of the state it holds.
    /// - Throws: `MirrorWentStale` otherwise.
    private func readAtMirrorsStamp(_ commands: [RedisCommand], _ mirrored: MirroredRedisAccount) throws
        -> [RedisValue]
    {
        var replies = try store.pipeline(commands + [RedisCommand("GET", key: keys.stateStamp)])
        guard replies.removeLast().bytes == mirrored.stamp else { throw MirrorWentStale() }
        return replies
    }

    public func conversations(withPeople people: [String]) throws -> [[ConversationHandle]] {
        if let mirrored { return try mirroredConversations(withPeople: people, mirrored) }
        let replies = try store.pipeline(people.map { RedisCommand("SMEMBERS", key: keys.person($0)) })
        return try replies.map { reply in
            (try reply.checkedArray() ?? []).compactMap { $0.string.flatMap(Int64.init) }.map(ConversationHandle.init)
        }
    }

    private func mirroredConversations(withPeople people: [String], _ mirrored: MirroredRedisAccount) throws
        -> [[ConversationHandle]]
    {
        var found = people.map { mirrored.cache.people($0) }
        let unread = people.indices.filter { found[$0] == nil }
        if !unread.isEmpty {
            let replies = try readAtMirrorsStamp(
                unread.map { RedisCommand("SMEMBERS", key: keys.person(people[$0])) }, mirrored)
            for (index, reply) in zip(unread, replies) {
                // Every conversation of the set has a record at this stamp, so the mirror has its slot.
                let slots = try (try reply.checkedArray() ?? []).compactMap { $0.string.flatMap(Int64.init) }
                    .map { number in
                        guard let slot = mirrored.slotsByNumber[number] else { throw MirrorWentStale() }
                        return slot
                    }
                mirrored.cache.keepPeople(people[index], slots)
                found[index] = slots
            }
        }
        return found.map { ($0 ?? []).map { ConversationHandle(rawValue: Int64($0)) } }
    }

    public func conversation(identifiedBy conversationIdentifier: String) throws -> ConversationHandle? {
        if let mirrored {
            return mirrored.slotsByIdentifier[Array(conversationIdentifier.utf8)].map {
                ConversationHandle(rawValue: Int64($0))
            }
        }
        return try store.send(RedisCommand("HGET", key: keys.conversationNumbers, conversationIdentifier)).string
            .flatMap(Int64.init).map(ConversationHandle.init)
    }

    /// The intents random access read with the conversations (the top K of a walk were all read so), and the
    /// others' in one round trip.
    public func latestIntents(_ conversations: [ConversationHandle]) throws -> [SendMessageIntent?] {
        if let mirrored { return try mirroredIntents(conversations, mirrored) }
        var bytes = conversations.map { conversation in
            intentNumbers.firstIndex(of: conversation.rawValue).map { intentBytes[$0] }
        }
        let unread = conversations.indices.filter { bytes[$0] == nil }
        let replies = try store.pipeline(
            unread.map { RedisCommand("HGET", key: keys.conversation(conversations[$0].rawValue), "i") })
        for offset in unread.indices { bytes[unread[offset]] = replies[offset].bytes }
        return try bytes.map { intent in try intent.map(RedisDonationStore.decodeIntent) }
    }

    /// The intents cached with the mirror, and the others' read with the stamp in one round trip, then cached.
    private func mirroredIntents(_ conversations: [ConversationHandle], _ mirrored: MirroredRedisAccount) throws
        -> [SendMessageIntent?]
    {
        let slots = try conversations.map { handle in
            guard let slot = Self.slot(handle, in: mirrored) else { throw MirrorWentStale() }
            return slot
        }
        var intents = mirrored.cache.intents(slots)
        let unread = slots.indices.filter { intents[$0] == nil }
        if !unread.isEmpty {
            let replies = try readAtMirrorsStamp(
                unread.map { RedisCommand("HGET", key: keys.conversation(mirrored.numbers[Int(slots[$0])]), "i") },
                mirrored)
            var read: [(Int32, SendMessageIntent?)] = []
            for (index, reply) in zip(unread, replies) {
                let intent = try reply.bytes.map(RedisDonationStore.decodeIntent)
                intents[index] = .some(intent)
                read.append((slots[index], intent))
            }
            mirrored.cache.keepIntents(read)
        }
        return intents.map { $0 ?? nil }
    }

    public func allConversations() throws -> [ConversationHandle] {
        if let mirrored { return (0..<Int64(mirrored.count)).map(ConversationHandle.init) }
        return try store.allConversationNumbers(keys).sorted().map(ConversationHandle.init)
    }

    /// The account's weights (`lw`, field `w`), `.empty` without them.
    public func learnedWeights() throws -> LearnedWeights {
        try learnedWeights(beforeOpening: [])
    }

    /// The weights, and the first page of each of `lists`, in one pipeline: one round trip, since every key of the
    /// account is on one node.
    public func learnedWeights(beforeOpening lists: [SortedList]) throws -> LearnedWeights {
        if let mirrored { return mirrored.weights }
        let reply = try pipeline([RedisCommand("HGET", key: keys.learnedWeights, "w")], readingFirstPagesOf: lists)[0]
        return try reply.bytes.map(RecordCoding.decodeWeights) ?? .empty
    }

    public func conversationCount() throws -> Int {
        if let mirrored { return mirrored.count }
        return Int(try store.send(RedisCommand("HLEN", key: keys.conversationNumbers)).integer ?? 0)
    }
}

extension RedisValue {
    /// The elements of an array reply (`nil` for a nil reply); an error reply is thrown as the store's error.
    func checkedArray() throws(StoreError) -> [RedisValue]? {
        if let message = errorMessage {
            throw RedisDonationStore.permissionDenied(message)
                ?? StoreError(.failed, "Redis refused a command: \(message)")
        }
        return array
    }
}
