import Synchronization
import CSQLite
import SuggestCore

/// Accounts' ranking state kept in memory for a long-lived server, used only while it is exactly the store's
/// current state: a query on a mirrored account walks memory instead of SQLite's indexes, and gets the same answer
/// to the bit, because it reads the same rows.
///
/// Every store connection a server opens shares one mirror (`SQLiteDonationStore.open(_:mirror:...)`). The mirror
/// keeps a connection of its own that never writes, and reads the store's version at every query: the header of
/// the write-ahead log's index (`WALIndexHeader`), which every commit of any connection rewrites (the server's
/// workers, a command, another process, maintenance), read from memory; or, where that file cannot be mapped, its
/// connection's `PRAGMA data_version`, the same information through a read transaction. An account's mirror is
/// used only while the version is the one it was built at. Otherwise the query reads SQLite as without a mirror,
/// and counts as demand for a rebuild; rebuilds run off the request path, in `refresh()`, which the server's
/// periodic checkpoint calls (`SQLiteDonationStore.checkpoint()`).
///
/// A rebuild reads the version, then the account's rows in one read transaction on a second connection, then the
/// version again, and keeps the result only if both were the same: nothing was committed while it read. Memory is
/// bounded by `byteBudget`: the least recently queried accounts' mirrors are dropped to stay under it, and an
/// account larger than the whole budget is never mirrored.
public final class RankingMirror: Sendable {
    /// What the mirror may hold and when it rebuilds.
    public struct Configuration: Sendable, Equatable {
        /// About how many bytes every account's mirror may take together.
        public var byteBudget: Int
        /// How many queries must have found an account's mirror missing or out of date before `refresh()`
        /// rebuilds it: an account read once in a while is not worth reading whole.
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

    /// What the mirror has done since it was made: for tests, benchmarks and `/metrics`.
    public struct Statistics: Sendable, Equatable {
        /// Queries ranked from memory.
        public var hits = 0
        /// Queries on an account with no mirror yet (or none kept), ranked from SQLite.
        public var misses = 0
        /// Queries that found the account's mirror out of date (something was committed since it was built),
        /// ranked from SQLite.
        public var staleReads = 0
        /// Queries that began in memory but met a commit before they had read what they read from SQLite (the
        /// latest intents, the people), and were answered again from SQLite.
        public var abandoned = 0
        /// Mirrors built and kept.
        public var rebuilds = 0
        /// Mirrors built and thrown away because something was committed while they were read.
        public var discardedRebuilds = 0
        /// Mirrors dropped to stay within the budget.
        public var evictions = 0
        /// Accounts mirrored now.
        public var accounts = 0
        /// The conversations of the accounts mirrored now.
        public var conversations = 0
        /// About how many bytes they hold.
        public var bytes = 0
        /// Rebuilds that failed (a store error), which left the account unmirrored.
        public var failures = 0

        /// Nothing done yet.
        public init() {}
    }

    /// The budget and the rebuild threshold.
    public let configuration: Configuration

    private struct Entry {
        var mirror: MirroredAccount?
        /// Queries that missed since the last rebuild.
        var demand = 0
        var lastUse: UInt64 = 0
        /// Larger than the whole budget: not rebuilt again.
        var oversized = false
    }

    private struct State {
        var path: String?
        /// The connection that keeps the store open and, without `header`, is asked `PRAGMA data_version`; opened
        /// with the first store.
        var versions: Database?
        /// The log index's header, mapped once the connection has read.
        var header: WALIndexHeader?
        var entries: [ByteKey: Entry] = [:]
        var clock: UInt64 = 0
        var statistics = Statistics()
    }

    private let state = Mutex(State())
    /// The connection rebuilds read with, apart from `state` so that a rebuild never holds up a query.
    private let builder = Mutex<Database?>(nil)

    /// At most this many accounts are tracked (mirrored or waiting for enough demand); past it, unmirrored ones
    /// are forgotten.
    static let trackedAccounts = 65_536

    /// A mirror that holds nothing yet; it is bound to a store by the first `SQLiteDonationStore.open` given it.
    public init(_ configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    /// What the mirror has done, and holds now.
    public var statistics: Statistics { state.withLock { $0.statistics } }

    /// Binds the mirror to the database at `path` (the first store opened with it) and opens its version
    /// connection; a later store must be the same database.
    func attach(path: String) throws {
        try state.withLock { state in
            if let bound = state.path {
                guard bound == path else {
                    throw StoreError(
                        .failed, "a ranking mirror serves one store: it holds \(bound), not \(path); give each store its own")
                }
                return
            }
            let connection = try Self.connection(path: path)
            // A first read creates the log's index if no connection had.
            _ = try connection.statement("PRAGMA data_version").scalarInt()
            state.versions = connection
            state.header = WALIndexHeader(databasePath: path)
            state.path = path
        }
    }

    /// A connection that cannot write and does not checkpoint when it closes (the store's own connections decide
    /// when the log is copied).
    private static func connection(path: String) throws -> Database {
        let database = try Database(path: path)
        try database.setCheckpointOnClose(false)
        try database.execute("PRAGMA query_only = ON; PRAGMA cache_size = -512")
        return database
    }

    /// The store's version now; `nil` when it cannot be told (a writer is rewriting the header, the connection
    /// failed), which no mirror matches.
    private static func version(_ state: State) -> StoreVersion? {
        if let header = state.header { return header.read() }
        guard let versions = state.versions, let number = try? versions.statement("PRAGMA data_version").scalarInt()
        else { return nil }
        return StoreVersion(UInt64(bitPattern: number), 0, 0, 0, 0, 0, 0, 0)
    }

    /// The account's mirror if it is the store's current state now; otherwise `nil`, counted as demand. A version
    /// that cannot be read (the connection failed) is `nil` too: the query then reads SQLite, which reports any
    /// failure of the store itself.
    func current(account: String) -> MirroredAccount? {
        let key = ByteKey(account)
        return state.withLock { state -> MirroredAccount? in
            state.clock += 1
            let now = state.clock
            guard var entry = state.entries[key] else {
                state.statistics.misses += 1
                if state.entries.count < Self.trackedAccounts { state.entries[key] = Entry(demand: 1, lastUse: now) }
                return nil
            }
            entry.lastUse = now
            defer { state.entries[key] = entry }
            guard let mirror = entry.mirror else {
                state.statistics.misses += 1
                entry.demand += 1
                return nil
            }
            guard Self.version(state) == mirror.version else {
                state.statistics.staleReads += 1
                entry.demand += 1
                return nil
            }
            state.statistics.hits += 1
            return mirror
        }
    }

    /// Whether `mirror` is still the store's current state: asked after a connection has begun the read
    /// transaction in which a query reads what the mirror does not hold.
    func isCurrent(_ mirror: MirroredAccount) -> Bool {
        state.withLock { state in Self.version(state) == mirror.version }
    }

    /// Counts a query that began in memory and was answered from SQLite after all.
    func abandoned(_ mirror: MirroredAccount) {
        state.withLock { state in
            state.statistics.abandoned += 1
            state.entries[ByteKey(mirror.account)]?.demand += 1
        }
    }

    /// Runs `truncate`, which starts the write-ahead log over when it returns `true`: that changes nothing stored,
    /// but every other connection sees it as a change (`PRAGMA data_version`), so the mirrors that were current
    /// before it are rebuilt at the next `refresh()` without waiting for queries to miss them.
    func rebuildingCurrent(across truncate: () throws -> Bool) throws -> Bool {
        let current: [ByteKey] = state.withLock { state in
            guard let version = Self.version(state) else { return [] }
            return state.entries.filter { $0.value.mirror?.version == version }.map(\.key)
        }
        let truncated = try truncate()
        if truncated, !current.isEmpty {
            let threshold = configuration.readsBeforeRebuild
            state.withLock { state in
                for key in current {
                    guard var entry = state.entries[key] else { continue }
                    entry.demand = max(entry.demand, threshold)
                    state.entries[key] = entry
                }
            }
        }
        return truncated
    }

    /// Rebuilds the account that most queries missed, if enough did, and drops the least recently used mirrors
    /// past the budget: one bounded step, for a background task between requests.
    /// - Parameter channelCount: the channels of the store's policy, the lists to build.
    /// - Returns: whether an account was rebuilt (kept or discarded).
    /// - Throws: `StoreError` when the store cannot be read; the account stays unmirrored.
    @discardableResult
    public func refresh(channelCount: Int) throws -> Bool {
        let threshold = configuration.readsBeforeRebuild
        let chosen: (key: ByteKey, account: String, version: StoreVersion, path: String)? = state.withLock { state in
            guard let path = state.path, let version = Self.version(state) else { return nil }
            var best: (key: ByteKey, demand: Int)?
            for (key, entry) in state.entries where !entry.oversized && entry.demand >= threshold {
                if best == nil || entry.demand > best?.demand ?? 0 { best = (key, entry.demand) }
            }
            guard let best, var entry = state.entries[best.key] else { return nil }
            // An out-of-date mirror is never used again: its memory goes before the new one is read.
            if let old = entry.mirror {
                state.statistics.accounts -= 1
                state.statistics.conversations -= old.count
                state.statistics.bytes -= old.estimatedBytes
                entry.mirror = nil
            }
            entry.demand = 0
            state.entries[best.key] = entry
            let account = String(decoding: best.key.bytes, as: UTF8.self)
            return (best.key, account, version, path)
        }
        guard let chosen else { return false }
        let built: MirroredAccount
        do {
            built = try builder.withLock { connection -> MirroredAccount in
                let database: Database
                if let connection {
                    database = connection
                } else {
                    database = try Self.connection(path: chosen.path)
                    connection = database
                }
                return try database.read {
                    try MirroredAccount.read(
                        account: chosen.account, version: chosen.version, channelCount: channelCount, in: database)
                }
            }
        } catch {
            state.withLock { $0.statistics.failures += 1 }
            throw error
        }
        state.withLock { state in
            guard Self.version(state) == chosen.version else {
                state.statistics.discardedRebuilds += 1
                // The queries that keep missing it will ask again.
                return
            }
            guard built.estimatedBytes <= configuration.byteBudget else {
                state.entries[chosen.key]?.oversized = true
                state.statistics.discardedRebuilds += 1
                return
            }
            state.entries[chosen.key]?.mirror = built
            // The queries that missed while it was read were answered from SQLite at this same version: the new
            // mirror stands for them, and counting them would rebuild a current mirror at the next refresh.
            state.entries[chosen.key]?.demand = 0
            state.statistics.rebuilds += 1
            state.statistics.accounts += 1
            state.statistics.conversations += built.count
            state.statistics.bytes += built.estimatedBytes
            // The least recently used mirrors go until the rest fit.
            while state.statistics.bytes > configuration.byteBudget {
                var oldest: (key: ByteKey, lastUse: UInt64)?
                for (key, entry) in state.entries where entry.mirror != nil && key != chosen.key {
                    if oldest == nil || entry.lastUse < oldest?.lastUse ?? .max { oldest = (key, entry.lastUse) }
                }
                guard let oldest, let dropped = state.entries[oldest.key]?.mirror else { break }
                state.entries[oldest.key]?.mirror = nil
                state.statistics.evictions += 1
                state.statistics.accounts -= 1
                state.statistics.conversations -= dropped.count
                state.statistics.bytes -= dropped.estimatedBytes
            }
        }
        return true
    }
}

/// A version of the store as a mirror tells them apart: the six words of the log index's header, or the
/// `PRAGMA data_version` of the mirror's connection in the first lane where the header cannot be read.
typealias StoreVersion = SIMD8<UInt64>
