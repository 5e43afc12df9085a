import RedisCluster
import Synchronization
import SuggestCore

/// Accounts' ranking state kept in memory by a long-lived server on a Redis Cluster, used only while it is exactly
/// the account's state in Redis: a query on a mirrored account reads one key from Redis (the account's state stamp,
/// `StateStamp`) and walks memory, instead of paging through sorted sets and scoring candidates in round trips,
/// and gets the same answer to the bit, because the mirror holds what those round trips would read.
///
/// Every change to an account leaves a new stamp in the script that makes it, so an equal stamp means nothing was
/// written since the mirror was read, by this server, another server or a command. A rebuild reads the stamp, the
/// account's records, weights and preferences, then the stamp again, and keeps the result only if both were the
/// same. Rebuilds run off the request path, in `refresh(store:)`, which the server's periodic checkpoint calls
/// (`RedisDonationStore.checkpoint()`); the bookkeeping (demand, budget) is `MirrorCatalog`'s.
public final class RedisRankingMirror: Sendable {
    public let configuration: RankingMirrorConfiguration
    private let catalog: Mutex<MirrorCatalog<MirroredRedisAccount>>
    /// Queries ranked from memory, counted apart from the catalog: a hit takes no lock (`generation`).
    private let hits = Atomic<Int>(0)
    /// Changes whenever a mirror is dropped or kept, so that a store may use the mirror it found last without
    /// asking the catalog again while this is unchanged: a server's threads would otherwise queue on the catalog's
    /// lock at every query (a fifth of the server's time, measured with 32 handler threads).
    private let generation = Atomic<UInt64>(0)

    /// A mirror that holds nothing yet.
    public init(_ configuration: RankingMirrorConfiguration = RankingMirrorConfiguration()) {
        self.configuration = configuration
        catalog = Mutex(MirrorCatalog(configuration))
    }

    /// What the mirror has done, and holds now.
    public var statistics: RankingMirrorStatistics {
        var statistics = catalog.withLock { $0.statistics }
        statistics.hits += hits.load(ordering: .relaxed)
        return statistics
    }

    /// The account's mirror, which the caller checks against the stamp in Redis; `nil`, counted as demand, when it
    /// has none. Also the generation it was found at, for `isUnchanged(since:)`.
    func mirror(of account: String) -> (mirror: MirroredRedisAccount?, generation: UInt64) {
        catalog.withLock { catalog in
            (catalog.mirror(of: Array(account.utf8)), generation.load(ordering: .relaxed))
        }
    }

    /// Whether no mirror was dropped or kept since `generation`: a mirror found then is still the catalog's.
    func isUnchanged(since generation: UInt64) -> Bool {
        self.generation.load(ordering: .acquiring) == generation
    }

    /// Counts a query whose stamp matched: ranked from memory.
    func hit() { hits.add(1, ordering: .relaxed) }

    /// Counts a query whose stamp did not match, as demand for a rebuild.
    func stale(_ mirror: MirroredRedisAccount) { catalog.withLock { $0.stale(Array(mirror.account.utf8)) } }

    /// Counts a query that began in memory and met a change before it was done.
    func abandoned(_ mirror: MirroredRedisAccount) { catalog.withLock { $0.abandoned(Array(mirror.account.utf8)) } }

    /// Rebuilds the account that most queries missed, if enough did, and drops the least recently used mirrors past
    /// the budget: one bounded step, for a background task between requests.
    /// - Returns: whether an account was read (kept or discarded).
    /// - Throws: `StoreError` when Redis cannot be read; the account stays unmirrored.
    @discardableResult
    public func refresh(store: RedisDonationStore) throws -> Bool {
        let next = catalog.withLock { catalog -> (account: [UInt8], counters: RankedAnswers.Counters)? in
            guard let chosen = catalog.nextToRebuild() else { return nil }
            // Its out-of-date mirror is gone from the catalog: no store may use it again.
            generation.add(1, ordering: .releasing)
            return (chosen, catalog.answerCounters)
        }
        guard let (chosen, answerCounters) = next else { return false }
        let account = String(decoding: chosen, as: UTF8.self)
        let built: MirroredRedisAccount?
        do {
            built = try Self.read(account: account, store: store, answerCounters: answerCounters)
        } catch {
            catalog.withLock { $0.failed() }
            throw error
        }
        catalog.withLock { catalog in
            if let built {
                catalog.keep(built, of: chosen)
                generation.add(1, ordering: .releasing)
            } else {
                catalog.discarded()
            }
        }
        return true
    }

    /// How many conversations' hashes one round trip of a rebuild reads.
    static let readBatch = 1_000

    /// Reads one account: `nil` when its stamp changed while it was read, or when it has none (nothing written to
    /// it since the store began keeping stamps, or every key deleted).
    static func read(account: String, store: RedisDonationStore, answerCounters: RankedAnswers.Counters)
        throws(StoreError) -> MirroredRedisAccount?
    {
        let keys = RedisKeys(account: account)
        let head = try store.pipeline([
            RedisCommand("GET", key: keys.stateStamp),
            RedisCommand("HVALS", key: keys.conversationNumbers),
            RedisCommand("HGET", key: keys.learnedWeights, "w"),
            RedisCommand("HGETALL", key: keys.preferences),
        ])
        guard let stamp = head[0].bytes else { return nil }
        let keysFollowThePolicy = try store.keysFollowThePolicyNow()
        let numbers = (try head[1].checkedArray() ?? []).compactMap { $0.string.flatMap(Int64.init) }.sorted()
        let weights = try head[2].bytes.map(RecordCoding.decodeWeights) ?? .empty
        var preferences: [[UInt8]: String] = [:]
        for (conversation, value) in try head[3].checkedArray()?.fieldPairs ?? [] {
            if let conversation = conversation.bytes, let value = value.string { preferences[conversation] = value }
        }
        var conversations: [MirroredRedisAccount.Conversation] = []
        conversations.reserveCapacity(numbers.count)
        var start = 0
        while start < numbers.count {
            let batch = numbers[start..<min(start + readBatch, numbers.count)]
            start += batch.count
            let replies = try store.pipeline(batch.map { RedisCommand("HMGET", key: keys.conversation($0), "id", "r") })
            for (number, reply) in zip(batch, replies) {
                guard let fields = try reply.checkedArray(), fields.count == 2 else {
                    throw StoreError.damaged("a conversation's hash in Redis")
                }
                // A number whose conversation never got a hash (a write that failed after it was given).
                guard let identifier = fields[0].string, let record = fields[1].bytes else { continue }
                conversations.append(
                    .init(number: number, identifier: identifier, record: try RecordCoding.decodeRecord(record)))
            }
        }
        guard try store.send(RedisCommand("GET", key: keys.stateStamp)).bytes == stamp else { return nil }
        return MirroredRedisAccount(
            account: account, stamp: stamp, keysFollowThePolicy: keysFollowThePolicy, weights: weights,
            conversations: conversations, preferences: preferences,
            channelCount: store.policy.channels.count, answerCounters: answerCounters)
    }
}
