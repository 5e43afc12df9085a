import RedisCluster
import SuggestCore
import SuggestRedisStore
import SuggestSQLiteStore
import Synchronization

/// How a program other than `suggest` (the server's executable) opens the store that `--store` and the environment
/// name, as the commands do.
public enum StoreOpening {
    /// What opens a connection to the store the options name: the embedded store in a directory, or the store on the
    /// Redis Cluster a `redis://` URL names (one client, shared by every connection the opener makes). Nothing is
    /// opened until it is called.
    /// - Parameters:
    ///   - creating: whether a missing directory store is created (a cluster always exists).
    ///   - reading: for a command that only reads (as `RedisDonationStore.open(client:...)`'s `reading` says).
    /// - Throws: `CommandError.usage` when the options name no store (an empty `--store`), or a URL that does not
    ///   parse.
    public static func opener(_ arguments: ParsedArguments, io: CommandIO, creating: Bool = true, reading: Bool = false)
        throws -> @Sendable () throws -> any DonationStore
    {
        if let url = StoreOptions.redisURL(arguments, environment: io.environment) {
            let client = try redisClient(url)
            return { try RedisDonationStore.open(client: client, reading: reading) }
        }
        let location = try StoreOptions.location(arguments, io)
        return {
            try SQLiteDonationStore.open(
                location, checkpoints: .everyPages(StoreOptions.checkpointPages), createIfMissing: creating)
        }
    }

    /// What a long-lived server opens its connections with, and what it reports of them.
    public struct Serving: Sendable {
        /// Opens one connection.
        public let open: @Sendable () throws -> any DonationStore
        /// The store's lines for `/metrics`, in Prometheus' text format: the ranking mirror's queries, rebuilds
        /// and size, and the group commits of its writing connection (the embedded store), or its writes' losses
        /// to other writers and waits for their leases (a Redis Cluster store).
        public let metrics: @Sendable () -> String
        /// Whether the store is across the network (a Redis Cluster), so that every query waits on round trips.
        public let isRemote: Bool
    }

    /// The connections of a long-lived server: a page cache that keeps what requests touch
    /// (`serverPageCacheKiB`), checkpoints left to the server's background task (with one in a commit only past
    /// `serverCheckpointPages`, which writes the log over in place), one ranking mirror shared by every connection
    /// (`serverMirror`), which the background checkpoint keeps up to date, and one connection that writes every
    /// donation (`GroupCommitWriter`).
    /// - Parameter creating: whether a missing directory store is created.
    /// - Throws: as `opener(_:io:creating:)`.
    public static func serving(_ arguments: ParsedArguments, io: CommandIO, creating: Bool = true) throws -> Serving {
        if let url = StoreOptions.redisURL(arguments, environment: io.environment) {
            // One client and one mirror for every connection, as for the embedded store.
            let client = try redisClient(url)
            let mirror = RedisRankingMirror(serverMirror)
            let contention = WriteContentionStatistics()
            // The first connection is the server's start: a cluster that cannot keep the promise of durability is
            // refused then, as by any command that writes. A later one (a worker's, an export's) may be opened
            // after a failover left a master of `appendfsync everysec` without a replica: it opens for reading,
            // so that GETs go on, and its writes are refused (`misconfigured`, 503) until the promise holds again.
            // Opened for writing, it failed, and every export and new worker's GET with it.
            let started = Atomic<Bool>(false)
            return Serving(
                open: {
                    let first = !started.load(ordering: .acquiring)
                    let store = try RedisDonationStore.open(
                        client: client, mirror: mirror, contention: contention, reading: !first,
                        waitingForTheCluster: first)
                    started.store(true, ordering: .releasing)
                    return store
                },
                metrics: { mirrorMetrics(mirror.statistics) + contentionMetrics(contention) }, isRemote: true)
        }
        let location = try StoreOptions.location(arguments, io)
        // One mirror for every connection the server opens: the accounts' ranking state once, not per worker.
        let mirror = RankingMirror(serverMirror)
        // Every connection must have the file the first one opened: a store deleted under the server, then created
        // again at its path, would take the donations of the connections opened since, unseen by the older ones.
        // Only the first open creates a missing store.
        let firstFile = Mutex<DatabaseFile?>(nil)
        let connection = { @Sendable (groupCommit: GroupCommitWriter?, pageCacheKiB: Int) throws -> SQLiteDonationStore in
            let first = firstFile.withLock { $0 }
            let store = try SQLiteDonationStore.open(
                location, checkpoints: .everyPagesInPlace(serverCheckpointPages),
                createIfMissing: creating && first == nil, pageCacheKiB: pageCacheKiB,
                largeImportCacheKiB: serverPageCacheKiB, mirror: mirror, groupCommit: groupCommit,
                pacingRewrites: .server, waitingOutImports: false)
            store.importMemoryBudget = serverImportMemoryBudget
            if let first {
                try store.requireFile(first)
            } else {
                let identity = try store.fileIdentity()
                try firstFile.withLock { known in
                    if let known, known != identity { try store.requireFile(known) }
                    known = identity
                }
            }
            return store
        }
        // One connection writes every donation, so that its page cache stays valid (`GroupCommitWriter`); it has the
        // large cache. The others (one per worker and handler thread) read little: queries go to the mirror.
        let groupCommit = GroupCommitWriter { try connection(nil, serverPageCacheKiB) }
        return Serving(
            open: { try connection(groupCommit, serverConnectionPageCacheKiB) },
            metrics: { mirrorMetrics(mirror.statistics) + groupCommitMetrics(groupCommit.statistics) }, isRemote: false)
    }

    /// The client of the Redis Cluster a `redis://` URL names.
    /// - Throws: `CommandError.usage` for a URL that does not parse.
    private static func redisClient(_ url: String) throws -> RedisClusterClient {
        do {
            return try RedisClusterClient(url: url)
        } catch {
            throw CommandError.usage("--store: \(error)")
        }
    }

    /// How the Redis store's writes met other writers of their accounts, as Prometheus text.
    static func contentionMetrics(_ statistics: WriteContentionStatistics) -> String {
        """
        # HELP suggest_store_write_retries_total Tries of writes to a Redis account that another writer of the \
        account stopped: it changed what they had read (conflict), or held the account's write lease, which they \
        waited for (leased, once a wait).
        # TYPE suggest_store_write_retries_total counter
        suggest_store_write_retries_total{reason="conflict"} \(statistics.conflicts)
        suggest_store_write_retries_total{reason="leased"} \(statistics.leasedTries)
        # HELP suggest_store_write_leases_total Write leases taken by writes that kept losing to other writers.
        # TYPE suggest_store_write_leases_total counter
        suggest_store_write_leases_total \(statistics.leasesTaken)
        # HELP suggest_store_write_lease_wait_seconds_total Time writes waited for other writers' leases.
        # TYPE suggest_store_write_lease_wait_seconds_total counter
        suggest_store_write_lease_wait_seconds_total \(statistics.secondsWaited)

        """
    }

    /// The ranking mirror's statistics as Prometheus text.
    static func mirrorMetrics(_ statistics: RankingMirrorStatistics) -> String {
        """
        # HELP suggest_ranking_mirror_queries_total Ranking queries, by where they were answered: from memory (hit), \
        or from the store because the account had no mirror (miss), because something was committed since it was built \
        (stale), or because a commit landed while the query ran (abandoned).
        # TYPE suggest_ranking_mirror_queries_total counter
        suggest_ranking_mirror_queries_total{result="hit"} \(statistics.hits)
        suggest_ranking_mirror_queries_total{result="miss"} \(statistics.misses)
        suggest_ranking_mirror_queries_total{result="stale"} \(statistics.staleReads)
        suggest_ranking_mirror_queries_total{result="abandoned"} \(statistics.abandoned)
        # HELP suggest_ranked_answers_total Answers of queries ranked from memory: computed and kept (kept), or given \
        again because nothing was written since, no expert turned stale and the idle cutoff still admits all they \
        list (reused).
        # TYPE suggest_ranked_answers_total counter
        suggest_ranked_answers_total{result="kept"} \(statistics.answersKept)
        suggest_ranked_answers_total{result="reused"} \(statistics.answersReused)
        # HELP suggest_ranking_mirror_rebuilds_total Accounts read into memory: kept, discarded (a commit landed \
        while they were read, or the account is larger than the budget), or failed.
        # TYPE suggest_ranking_mirror_rebuilds_total counter
        suggest_ranking_mirror_rebuilds_total{result="kept"} \(statistics.rebuilds)
        suggest_ranking_mirror_rebuilds_total{result="discarded"} \(statistics.discardedRebuilds)
        suggest_ranking_mirror_rebuilds_total{result="failed"} \(statistics.failures)
        # HELP suggest_ranking_mirror_evictions_total Mirrors dropped to stay within the budget.
        # TYPE suggest_ranking_mirror_evictions_total counter
        suggest_ranking_mirror_evictions_total \(statistics.evictions)
        # HELP suggest_ranking_mirror_accounts Accounts mirrored now.
        # TYPE suggest_ranking_mirror_accounts gauge
        suggest_ranking_mirror_accounts \(statistics.accounts)
        # HELP suggest_ranking_mirror_conversations Conversations of the accounts mirrored now.
        # TYPE suggest_ranking_mirror_conversations gauge
        suggest_ranking_mirror_conversations \(statistics.conversations)
        # HELP suggest_ranking_mirror_bytes About how many bytes the mirrors hold, as their budget counts them.
        # TYPE suggest_ranking_mirror_bytes gauge
        suggest_ranking_mirror_bytes \(statistics.bytes)

        """
    }

    /// The group commit writer's statistics as Prometheus text.
    static func groupCommitMetrics(_ statistics: GroupCommitWriter.Statistics) -> String {
        """
        # HELP suggest_group_commits_total Transactions that committed requests' donations together.
        # TYPE suggest_group_commits_total counter
        suggest_group_commits_total \(statistics.groups)
        # HELP suggest_group_commit_pieces_total Requests' donations (one, or one batch) those transactions carried.
        # TYPE suggest_group_commit_pieces_total counter
        suggest_group_commit_pieces_total \(statistics.pieces)

        """
    }

    /// A server's ranking mirror (`RankingMirror`): about 64 MiB of accounts' ranking state (an account of 100,000
    /// conversations takes about 30 MB), an account rebuilt once 4 queries have found it out of date.
    public static let serverMirror = RankingMirror.Configuration(byteBudget: 64 << 20, readsBeforeRebuild: 4)

    /// The page cache of a server's writing connection (`GroupCommitWriter`), through which every donation goes:
    /// 12 MiB, enough for the pages most donations touch (the heads of the channel lists, the latest blocks, the
    /// popular conversations); a page past it is one read from the system's cache. Twice that took as many
    /// donations a second and more memory (by hand, GETs then batches and single POSTs on one server: a peak of
    /// 110 MB against 94).
    public static let serverPageCacheKiB = 12_288

    /// What a server's batch of donations may hold in memory before it writes what it has, within its transaction
    /// (`SQLiteDonationStore.importMemoryBudget`): a command's 384 MiB, for one body of 480,000 donations to as many
    /// new conversations, took the server to 600 MB; a batch of fewer donations than `largeImport` goes through the
    /// group writer, bounded to 12 MiB.
    public static let serverImportMemoryBudget = 16 << 20

    /// The page cache of each of a server's other connections (workers, handler threads): SQLite's default. They
    /// answer queries from the mirror and hand donations to the writing connection, so a large cache would only
    /// fill with the pages of deletions, shares and large batches, once per connection (36 of them by default):
    /// with 24 MiB each, twelve batches of 9,999 donations at once left the server at 347 MB, where it is now at
    /// 65 MB. A batch of `largeImport` donations or more, recorded on the request's own connection, has
    /// `serverPageCacheKiB` for its transaction (a 2 MB cache made one of 65,000 donations 1.5 times slower).
    public static let serverConnectionPageCacheKiB = 2_000

    /// About 256 MB of log: past it, the commit that reaches it checkpoints; below it, the server's checkpoint every
    /// second does, off the requests' path. A donation into a large store adds about 25 pages (100 KB) to the log,
    /// so a server taking 1,600 donations a second passed 64 MB every 0.4 s, before its own checkpoint came, and a
    /// request waited about 140 ms for each of those checkpoints.
    public static let serverCheckpointPages = 65_536
}
