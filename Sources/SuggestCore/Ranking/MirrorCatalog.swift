import Synchronization

/// One account's ranking state held in memory by a server, as a store's mirror builds it: what `MirrorCatalog`
/// needs to know of it to keep it within a budget.
public protocol MirroredState: AnyObject, Sendable {
    /// How many conversations it holds.
    var count: Int { get }
    /// About how many bytes it holds, and its caches may hold beyond that: what the budget counts
    /// (`MirrorReadCache.budgetedBytes(ofMirrorHolding:)`).
    var estimatedBytes: Int { get }
}

/// What a store's ranking mirror may hold and when it rebuilds: the same for every store that keeps one.
public struct RankingMirrorConfiguration: Sendable, Equatable {
    /// About how many bytes every account's mirror may take together.
    public var byteBudget: Int
    /// How many queries must have found an account's mirror missing or out of date before it is rebuilt: an
    /// account read once in a while is not worth reading whole.
    public var readsBeforeRebuild: Int

    /// - Parameters:
    ///   - byteBudget: about how many bytes the mirrors may take together (64 MiB by default: about 200,000
    ///     conversations).
    ///   - readsBeforeRebuild: the queries that must have missed an account before it is rebuilt (at least 1).
    public init(byteBudget: Int = 64 << 20, readsBeforeRebuild: Int = 4) {
        self.byteBudget = byteBudget
        self.readsBeforeRebuild = max(1, readsBeforeRebuild)
    }
}

/// What a ranking mirror has done since it was made: for tests, benchmarks and `/metrics`.
public struct RankingMirrorStatistics: Sendable, Equatable {
    /// Queries ranked from memory.
    public var hits = 0
    /// Queries on an account with no mirror yet (or none kept), ranked from the store.
    public var misses = 0
    /// Queries that found the account's mirror out of date (something was written since it was built), ranked
    /// from the store.
    public var staleReads = 0
    /// Queries that began in memory but met a write before they had read what they read from the store (the
    /// latest intents, the people), and were answered again from the store.
    public var abandoned = 0
    /// Mirrors built and kept.
    public var rebuilds = 0
    /// Mirrors built and thrown away because something was written while they were read, or because the account
    /// is larger than the whole budget.
    public var discardedRebuilds = 0
    /// Mirrors dropped to stay within the budget.
    public var evictions = 0
    /// Accounts mirrored now.
    public var accounts = 0
    /// The conversations of the accounts mirrored now.
    public var conversations = 0
    /// About how many bytes they hold, as the budget counts them (a small mirror with its caches' floors).
    public var bytes = 0
    /// Rebuilds that failed (a store error), which left the account unmirrored.
    public var failures = 0
    /// Queries ranked from memory whose answer was kept, to be given again while nothing is written
    /// (`RankedAnswers`).
    public var answersKept = 0
    /// Queries given an answer kept before: nothing was written since, and the moment still admits all it lists.
    public var answersReused = 0

    /// Nothing done yet.
    public init() {}
}

/// The bookkeeping of a ranking mirror, whatever store it mirrors: which accounts are mirrored, how often queries
/// missed each (its demand for a rebuild), which to rebuild next, and which to drop to stay within the budget
/// (the least recently queried). It knows nothing of versions: each store's mirror tells whether a mirror is
/// current its own way, and reports here what it found.
///
/// A value type without a lock of its own: its owner keeps it behind one (`Mutex`).
public struct MirrorCatalog<Mirror: MirroredState> {
    public let configuration: RankingMirrorConfiguration
    /// What the catalog counted itself; `statistics` adds the kept answers'.
    private var counts = RankingMirrorStatistics()
    /// Where the answers kept with this catalog's mirrors are counted (`RankedAnswers`): given to each mirror built.
    public let answerCounters = RankedAnswers.Counters()

    /// What the mirrors have done, and hold now.
    public var statistics: RankingMirrorStatistics {
        var statistics = counts
        statistics.answersKept = answerCounters.keptCount
        statistics.answersReused = answerCounters.reusedCount
        return statistics
    }

    private struct Entry {
        var mirror: Mirror?
        /// Queries that missed since the last rebuild.
        var demand = 0
        var lastUse: UInt64 = 0
        /// Larger than the whole budget: not rebuilt again.
        var oversized = false
    }

    private var entries: [[UInt8]: Entry] = [:]
    /// The queries of the accounts not tracked, roughly (`DemandSketch`).
    private var sketch = DemandSketch()
    /// The bytes of the tracked accounts' names: a name may be 4 KiB, so the count alone does not bound them.
    private var trackedNameBytes = 0
    private var clock: UInt64 = 0

    /// At most this many accounts are tracked (mirrored or waiting for enough demand).
    public static var trackedAccounts: Int { 65_536 }
    /// At most about this many bytes of their names.
    public static var trackedNameBudget: Int { 8 << 20 }

    /// How many accounts are tracked now: for tests.
    public var trackedCount: Int { entries.count }

    public init(_ configuration: RankingMirrorConfiguration) {
        self.configuration = configuration
    }

    /// The account's mirror, current or not, marked as just used; `nil` (counted as a miss, and as demand) when it
    /// has none. The caller then tells whether it is current: `hit(_:)` or `stale(_:)`.
    /// - Parameter account: the account's name as the store compares it: its UTF-8 bytes.
    public mutating func mirror(of account: [UInt8]) -> Mirror? {
        clock += 1
        guard var entry = entries[account] else {
            counts.misses += 1
            track(account)
            return nil
        }
        entry.lastUse = clock
        defer { entries[account] = entry }
        guard let mirror = entry.mirror else {
            counts.misses += 1
            entry.demand += 1
            return nil
        }
        return mirror
    }

    /// Counts a query answered from the mirror `mirror(of:)` gave.
    public mutating func hit() { counts.hits += 1 }

    /// Counts a query that found the account's mirror out of date, as demand for a rebuild.
    public mutating func stale(_ account: [UInt8]) {
        counts.staleReads += 1
        entries[account]?.demand += 1
    }

    /// Counts a query that began in memory and was answered from the store after all, as demand for a rebuild.
    public mutating func abandoned(_ account: [UInt8]) {
        counts.abandoned += 1
        entries[account]?.demand += 1
    }

    /// The accounts whose mirrors pass `isCurrent`.
    public func accounts(where isCurrent: (Mirror) -> Bool) -> [[UInt8]] {
        entries.filter { $0.value.mirror.map(isCurrent) ?? false }.map(\.key)
    }

    /// Drops the mirrors that fail `isCurrent`, keeping their accounts' demand: a mirror out of date never answers
    /// a query again (a rebuild replaces it), so under a stream of writes it would only hold its memory.
    /// (The accounts are found first and changed after: changing `entries` while iterating it would copy the whole
    /// table, up to `trackedAccounts`, under the lock every query takes.)
    public mutating func dropMirrors(where isOutOfDate: (Mirror) -> Bool) {
        guard counts.accounts > 0 else { return }
        var outOfDate: [[UInt8]] = []
        for (account, entry) in entries {
            if let mirror = entry.mirror, isOutOfDate(mirror) { outOfDate.append(account) }
        }
        for account in outOfDate {
            guard let mirror = entries[account]?.mirror else { continue }
            entries[account]?.mirror = nil
            remove(mirror)
        }
    }

    /// Gives `accounts` at least the demand that rebuilds them at the next refresh.
    public mutating func demandRebuild(of accounts: [[UInt8]]) {
        let threshold = configuration.readsBeforeRebuild
        for account in accounts {
            guard var entry = entries[account] else { continue }
            entry.demand = max(entry.demand, threshold)
            entries[account] = entry
        }
    }

    /// The account most queries missed, if enough did, to be rebuilt now: its out-of-date mirror, never used
    /// again, is dropped first, so that its memory goes before the new one is read; its demand starts over.
    public mutating func nextToRebuild() -> [UInt8]? {
        var best: (account: [UInt8], demand: Int)?
        for (account, entry) in entries where !entry.oversized && entry.demand >= configuration.readsBeforeRebuild {
            if best == nil || entry.demand > best?.demand ?? 0 { best = (account, entry.demand) }
        }
        guard let best, var entry = entries[best.account] else { return nil }
        if let old = entry.mirror {
            remove(old)
            entry.mirror = nil
        }
        entry.demand = 0
        entries[best.account] = entry
        return best.account
    }

    /// Keeps a mirror just built (unless it is larger than the whole budget, which is never rebuilt again), then
    /// drops the least recently used others until the rest fit.
    public mutating func keep(_ built: Mirror, of account: [UInt8]) {
        guard built.estimatedBytes <= configuration.byteBudget else {
            entries[account]?.oversized = true
            counts.discardedRebuilds += 1
            return
        }
        guard entries[account] != nil else { return }
        entries[account]?.mirror = built
        // The queries that missed while it was read were answered from the store at this same version: the new
        // mirror stands for them, and counting them would rebuild a current mirror at the next refresh.
        entries[account]?.demand = 0
        counts.rebuilds += 1
        counts.accounts += 1
        counts.conversations += built.count
        counts.bytes += built.estimatedBytes
        while counts.bytes > configuration.byteBudget {
            var oldest: (account: [UInt8], lastUse: UInt64)?
            for (key, entry) in entries where entry.mirror != nil && key != account {
                if oldest == nil || entry.lastUse < oldest?.lastUse ?? .max { oldest = (key, entry.lastUse) }
            }
            guard let oldest, let dropped = entries[oldest.account]?.mirror else { break }
            entries[oldest.account]?.mirror = nil
            counts.evictions += 1
            remove(dropped)
        }
    }

    /// Counts a rebuild thrown away because something was written while it was read: the queries that keep
    /// missing the account will ask again.
    public mutating func discarded() { counts.discardedRebuilds += 1 }

    /// Counts a rebuild that failed.
    public mutating func failed() { counts.failures += 1 }

    /// Counts a query of an account that is not tracked, and tracks it once its queries reach the demand that
    /// rebuilds it (`DemandSketch`): a flood of made-up accounts, each queried once, never enters the table, where
    /// an account queried a few times while about 100,000 others are does. When the table is full, the less
    /// recently queried half of the accounts without a mirror is forgotten first (the sketch still counts them):
    /// a table that only grew would let any client, querying made-up accounts, fill it for good, after which no new
    /// account would be mirrored, and its names would hold hundreds of megabytes. Halving keeps the sweep's cost, one
    /// pass over the table, to a few steps per account tracked.
    private mutating func track(_ account: [UInt8]) {
        let demand = sketch.count(account)
        // A counter holds 255 at most.
        guard demand >= min(configuration.readsBeforeRebuild, 255) else { return }
        func full() -> Bool {
            entries.count >= Self.trackedAccounts || trackedNameBytes + account.count > Self.trackedNameBudget
        }
        if full() { forgetLessRecentlyQueriedHalf() }
        guard !full() else { return }
        entries[account] = Entry(demand: demand, lastUse: clock)
        trackedNameBytes += account.count
    }

    /// Forgets the less recently queried half of the tracked accounts that have no mirror (and were not found
    /// too large for one: forgetting those would read them whole again).
    private mutating func forgetLessRecentlyQueriedHalf() {
        var uses: [UInt64] = []
        for entry in entries.values where entry.mirror == nil && !entry.oversized { uses.append(entry.lastUse) }
        guard !uses.isEmpty else { return }
        uses.sort()
        let cutoff = uses[(uses.count - 1) / 2]
        var forgotten: [[UInt8]] = []
        for (account, entry) in entries where entry.mirror == nil && !entry.oversized && entry.lastUse <= cutoff {
            forgotten.append(account)
        }
        for account in forgotten {
            entries[account] = nil
            trackedNameBytes -= account.count
        }
    }

    private mutating func remove(_ mirror: Mirror) {
        counts.accounts -= 1
        counts.conversations -= mirror.count
        counts.bytes -= mirror.estimatedBytes
    }
}

/// One sorted list as a mirror holds it: the keys, best first, and the slots of their conversations (the mirror's
/// own numbering, dense from 0), side by side.
public struct MirroredList: Sendable {
    public var keys: [Double] = []
    public var slots: [Int32] = []

    public init() {}

    /// The list of `keyed`, sorted best first.
    public init(sorting keyed: [(key: Double, slot: Int32)]) {
        let ordered = keyed.sorted { $0.key > $1.key }
        keys = ordered.map(\.key)
        slots = ordered.map(\.slot)
    }

    /// Sorted access along the list, the handles being the slots.
    public struct Cursor: SortedAccessCursor {
        let list: MirroredList
        var position = 0

        public init(_ list: MirroredList) { self.list = list }

        public mutating func next() -> SortedEntry? {
            guard position < list.keys.count else { return nil }
            defer { position += 1 }
            let conversation = ConversationHandle(rawValue: Int64(list.slots[position]))
            return SortedEntry(key: list.keys[position], conversation: conversation)
        }
    }
}

/// What a query on a mirror read from its store beside the mirror (the latest intents of the conversations shown,
/// the conversations of a person), and the answers it gave, which later queries may use without reading again:
/// valid exactly as long as the mirror it belongs to, since the mirror stands for one version of the store. A
/// server's queries ask for the same few dozen, so each kind keeps at most `limit` entries, and within `byteLimit`
/// bytes: 4,096 intents that each name a thousand people held 700 MB for one account of 4,000 conversations.
public final class MirrorReadCache: Sendable {
    private struct Entries {
        var intents: [Int32: SendMessageIntent?] = [:]
        var people: [[UInt8]: [Int32]] = [:]
        /// About how many bytes `intents` hold, and `people`: each within `byteLimit`, so that queries of made-up
        /// people do not take the intents' room.
        var intentBytes = 0
        var peopleBytes = 0
    }

    private let entries = Mutex(Entries())
    public static var limit: Int { 4_096 }
    /// About how many bytes the kept intents may hold, and the kept people: the mirror's own size, or
    /// `smallestRoom` for a small one.
    private let byteLimit: Int
    /// Whole answers of the mirror's queries (`RankedAnswers`), kept as long as the intents they show.
    public let answers: RankedAnswers

    /// - Parameters:
    ///   - answerCounters: where the kept answers are counted, shared by every account of one mirror.
    ///   - mirrorBytes: the mirror's own size, without its caches: each of the three (answers, intents, people)
    ///     may hold about as much, or `smallestRoom` for a small mirror.
    public init(answerCounters: RankedAnswers.Counters = RankedAnswers.Counters(), mirrorBytes: Int = .max) {
        let room = max(mirrorBytes, Self.smallestRoom)
        answers = RankedAnswers(counters: answerCounters, byteLimit: room)
        byteLimit = room
    }

    /// The least each cache of a mirror may hold: a mirror of a few conversations (under 1 KB) is smaller than one
    /// answer listing them (1–3 KB) or than their intents, and each room must hold a few of them for the next query
    /// to find what the last one read. 16 KiB holds about 25 ordinary intents, more than the conversations of an
    /// account whose mirror is that small.
    public static let smallestRoom = 16 << 10

    /// What a mirror whose arrays hold `arrayBytes` counts against the mirrors' budget: the arrays, and what its
    /// three caches may hold beyond three times as much (the floors of a small mirror). So the budget bounds the
    /// mirrors, and their caches take at most three times it, however many small accounts are mirrored: a small
    /// mirror is under 1 KB, its caches' floors 48 KiB.
    public static func budgetedBytes(ofMirrorHolding arrayBytes: Int) -> Int {
        arrayBytes + 3 * max(0, smallestRoom - arrayBytes)
    }

    /// The cached latest intents of `slots`: `.some(nil)` for a conversation read without one, `nil` where not read
    /// yet.
    public func intents(_ slots: [Int32]) -> [SendMessageIntent??] {
        entries.withLock { entries in slots.map { entries.intents[$0] } }
    }

    public func keepIntents(_ intents: [(Int32, SendMessageIntent?)]) {
        entries.withLock { entries in
            for (slot, intent) in intents where entries.intents.count < Self.limit && entries.intents[slot] == nil {
                let bytes = Self.approximateBytes(intent)
                guard entries.intentBytes + bytes <= byteLimit else { return }
                entries.intents[slot] = intent
                entries.intentBytes += bytes
            }
        }
    }

    /// The cached slots of a person key's conversations (the key compared by its bytes).
    public func people(_ key: String) -> [Int32]? { entries.withLock { $0.people[Array(key.utf8)] } }

    public func keepPeople(_ key: String, _ slots: [Int32]) {
        entries.withLock { entries in
            let keyBytes = Array(key.utf8)
            let bytes = 64 + keyBytes.count + slots.count * MemoryLayout<Int32>.stride
            guard entries.people.count < Self.limit, entries.people[keyBytes] == nil,
                entries.peopleBytes + bytes <= byteLimit
            else { return }
            entries.people[keyBytes] = slots
            entries.peopleBytes += bytes
        }
    }

    /// About what an intent takes in memory: its strings and the headers of its values.
    static func approximateBytes(_ intent: SendMessageIntent?) -> Int {
        guard let intent else { return 16 }
        func count(_ text: String?) -> Int { text?.utf8.count ?? 0 }
        var bytes = 160 + count(intent.conversationIdentifier) + count(intent.speakableGroupName)
            + count(intent.serviceName) + count(intent.image)
        for person in intent.recipients + (intent.sender.map { [$0] } ?? []) {
            bytes += 128 + count(person.customIdentifier) + count(person.displayName)
                + count(person.personHandle?.value) + count(person.contactIdentifier) + count(person.image)
        }
        return bytes
    }
}

/// Roughly how often each account was queried lately, in fixed memory, whatever the number of accounts: a
/// count-min sketch (two counters an account, from its hash; the smaller is the estimate), halved every
/// `counters / 8` counts (131,072 queries of accounts not tracked) so that old queries fade and the counters stay
/// sparse (under half a count each on average): a made-up account queried once reads 4 or more about once in 5,000;
/// one queried a few times within such a window reads at least that many, since a count is never underestimated.
struct DemandSketch {
    /// Counters of a byte each: 1 MiB.
    static let counters = 1 << 20
    private var counts = [UInt8](repeating: 0, count: counters)
    private var added = 0
    /// A seed of this process's own, so that no client can choose names that share counters.
    private let seed = Int.random(in: .min ... .max)

    /// Counts one query of `account`.
    /// - Returns: its estimated queries so far, this one included.
    mutating func count(_ account: [UInt8]) -> Int {
        var hasher = Hasher()
        hasher.combine(seed)
        hasher.combine(account)
        // The second index from a multiplicative mix of the hash, which a 32-bit `Int` has all of as well.
        let hash = UInt64(truncatingIfNeeded: hasher.finalize())
        let first = Int(hash & UInt64(Self.counters - 1))
        let second = Int((hash &* 0x9E37_79B9_7F4A_7C15) >> UInt64(64 - Self.counters.trailingZeroBitCount))
        if counts[first] < .max { counts[first] += 1 }
        if counts[second] < .max { counts[second] += 1 }
        // Read before any halving: this query counts whole.
        let estimate = Int(min(counts[first], counts[second]))
        added += 1
        if added >= Self.counters / 8 {
            for index in counts.indices { counts[index] >>= 1 }
            added = 0
        }
        return estimate
    }
}

/// A query that began on an account's mirror met a change to the account (or a list the mirror does not hold)
/// before it was done: the store answers it again from what it keeps (SQLite, Redis).
public struct MirrorWentStale: Error {
    public init() {}
}
