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
    public typealias Configuration = RankingMirrorConfiguration
    /// What the mirror has done since it was made.
    public typealias Statistics = RankingMirrorStatistics

    /// The budget and the rebuild threshold.
    public let configuration: Configuration

    private struct State {
        var path: String?
        /// The connection that keeps the store open and, without `header`, is asked `PRAGMA data_version`; opened
        /// with the first store.
        var versions: Database?
        /// The log index's header, read through `versions`' own mapping of the index: it lives as long as `versions`.
        var header: WALIndexHeader?
        var catalog: MirrorCatalog<MirroredAccount>
    }

    private let state: Mutex<State>
    /// The connection rebuilds read with, apart from `state` so that a rebuild never holds up a query.
    private let builder = Mutex<Database?>(nil)

    /// A mirror that holds nothing yet; it is bound to a store by the first `SQLiteDonationStore.open` given it.
    public init(_ configuration: Configuration = Configuration()) {
        self.configuration = configuration
        state = Mutex(State(catalog: MirrorCatalog(configuration)))
    }

    /// What the mirror has done, and holds now.
    public var statistics: Statistics { state.withLock { $0.catalog.statistics } }

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
            // Its file noted, so that the mirror knows when the store is found deleted (`current`).
            try connection.checkFileInPlace()
            state.versions = connection
            state.header = WALIndexHeader(connection: connection)
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
        state.withLock { state -> MirroredAccount? in
            // A store deleted under the process is not answered from memory either (`Database.isGone`).
            if state.versions?.isGone == true { return nil }
            guard let mirror = state.catalog.mirror(of: Array(account.utf8)) else { return nil }
            guard Self.version(state) == mirror.version else {
                state.catalog.stale(Array(account.utf8))
                return nil
            }
            state.catalog.hit()
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
        state.withLock { state in state.catalog.abandoned(Array(mirror.account.utf8)) }
    }

    /// Runs `truncate`, which starts the write-ahead log over when it returns `true`: that changes nothing stored,
    /// but every other connection sees it as a change (`PRAGMA data_version`), so the mirrors that were current
    /// before it are rebuilt at the next `refresh()` without waiting for queries to miss them.
    func rebuildingCurrent(across truncate: () throws -> Bool) throws -> Bool {
        let current: [[UInt8]] = state.withLock { state in
            guard let version = Self.version(state) else { return [] }
            return state.catalog.accounts { $0.version == version }
        }
        let truncated = try truncate()
        if truncated, !current.isEmpty { state.withLock { $0.catalog.demandRebuild(of: current) } }
        return truncated
    }

    /// Drops the mirrors something was committed since, then rebuilds the account that most queries missed, if
    /// enough did, and drops the least recently used mirrors past the budget: one bounded step, for a background
    /// task between requests. (An out-of-date mirror never answers again; under a stream of donations and no
    /// queries, an account of 100,000 conversations kept 30 MB for nothing.)
    /// - Parameter policy: the store's policy: its channels are the lists to build.
    /// - Returns: whether an account was rebuilt (kept or discarded).
    /// - Throws: `StoreError` when the store cannot be read; the account stays unmirrored.
    @discardableResult
    public func refresh(policy: FrecencyPolicy) throws -> Bool {
        let chosen: (account: String, version: StoreVersion, path: String, counters: RankedAnswers.Counters)? =
            state.withLock { state in
                guard let path = state.path, let version = Self.version(state) else { return nil }
                state.catalog.dropMirrors { $0.version != version }
                guard let account = state.catalog.nextToRebuild() else { return nil }
                return (String(decoding: account, as: UTF8.self), version, path, state.catalog.answerCounters)
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
                        account: chosen.account, version: chosen.version, policy: policy,
                        answerCounters: chosen.counters, in: database)
                }
            }
        } catch {
            state.withLock { $0.catalog.failed() }
            throw error
        }
        state.withLock { state in
            guard Self.version(state) == chosen.version else { return state.catalog.discarded() }
            state.catalog.keep(built, of: Array(chosen.account.utf8))
        }
        return true
    }
}

/// A version of the store as a mirror tells them apart: the six words of the log index's header, or the
/// `PRAGMA data_version` of the mirror's connection in the first lane where the header cannot be read.
typealias StoreVersion = SIMD8<UInt64>
