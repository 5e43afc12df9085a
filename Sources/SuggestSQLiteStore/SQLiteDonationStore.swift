import CSQLite
import CSystem
import SuggestCore

/// The embedded store: the durable donation log of one store directory, and the ranking state derived from it, in
/// SQLite.
///
/// Several processes may open the same store at once (an app and its share extension): SQLite's WAL lets readers
/// run beside one writer, and every write is one `BEGIN IMMEDIATE` transaction, so a killed process leaves either
/// all of its write or none. Each donation updates its conversation's ranking state in O(1) inside the same
/// transaction, so ranking never rescans the history. Not `Sendable`: open one per thread or process.
///
/// How the donations are kept (blocks per conversation, buckets of identifiers) is in docs/storage.md.
public final class SQLiteDonationStore: DonationStore {
    /// The directory the store lives in, and how it was chosen.
    public let location: StoreLocation
    /// Learned weights, kept per account in `learned_weights` (the default), or a policy's fixed ones.
    public let ranking: StoreRanking
    /// The policy the conversations' state is built with: `ranking.base`.
    public let policy: FrecencyPolicy
    public let types: UniformTypeTree
    /// When the write-ahead log is copied into the database and started over.
    public let checkpoints: CheckpointPolicy
    /// What a log that was copied and started over is trimmed to: 64 MiB, or for a connection that checkpoints past
    /// a number of pages (a server's), that many pages, so that a busy server's log is written over in place at each
    /// restart instead of being cut and grown again.
    var logSizeLimit: Int {
        guard let pages = checkpoints.pages else { return 64 << 20 }
        return max(64 << 20, pages * 4096)
    }

    /// The connection's page cache, in KiB (SQLite's default is 2,000: what a share extension can spare).
    public let pageCacheKiB: Int
    /// The page cache, in KiB, of an import's transaction of `largeImport` donations or more, when larger than
    /// `pageCacheKiB`; restored afterwards. 256 MiB unless given: a command's import has the machine to itself, a
    /// server's large batch shares it with every other request.
    public let largeImportCacheKiB: Int
    /// What an import's writer may hold in memory before it writes what it has (`DonationWriter.heldBytes`). An
    /// ordinary history stays well under it (163 MiB at the end of 2M donations over 100k conversations), so it
    /// writes once, at the end; without it, one whose every line names a thousand new people would hold 1.5 GB for
    /// 170 MB of lines. A server's connections set it low: a request's batch shares the machine with every other
    /// request. Tests set it low too.
    public var importMemoryBudget = 384 << 20
    /// The writer every piece of a `GroupCommitWriter`'s group records into, while the group runs on this (its
    /// writing) connection: `SQLiteDonationStore+GroupWriting.swift`.
    var groupWriter: DonationWriter?
    /// The accounts' ranking state in memory that queries use while it is current (`nil`: always SQLite).
    public let mirror: RankingMirror?
    /// The connection every donation of a server is committed on, with the donations of other requests
    /// (`GroupCommitWriter`); `nil` (a command, the writing connection itself): this connection commits its own.
    public let groupCommit: GroupCommitWriter?
    let database: Database
    /// This connection's `PRAGMA data_version` at its last `checkpoint()`: unchanged, nothing was committed since.
    private var versionAtLastCheckpoint: Int64?
    /// When a deletion's rewrite of the file may be left to a later `checkpoint()` (`RewritePacing`): a server's,
    /// which checkpoints every second; `nil` for a command or an app, which rewrite after each deletion.
    let rewritePacing: RewritePacing?

    /// When the write-ahead log is copied into the database file: the moment a committed write becomes durable
    /// against a power loss (with `synchronous=NORMAL`, a commit writes the log without `fdatasync`). A crash of the
    /// process never loses a committed write either way: the log is in the operating system's cache.
    public enum CheckpointPolicy: Sendable, Equatable {
        /// SQLite's default: when the last connection closes (two `fdatasync`s, and the log file is deleted), and
        /// whenever the log passes 1000 pages. A process's writes are on disk when it exits.
        case onClose
        /// Not on close: after a commit that leaves `pages` pages or more in the log (the log is then truncated to
        /// zero bytes), and at `checkpoint()`. A short process (one donation, one list) then mostly ends without
        /// `fdatasync` and without deleting and creating the log file, and the log that every process reads when it
        /// opens the store stays small; writes are durable at the next checkpoint instead of at exit.
        case everyPages(Int)
        /// As `everyPages`, but the log is written over from its start rather than cut, its file keeping its size
        /// (up to `logSizeLimit`): for a busy server's writing connection, whose next writes then go to blocks the
        /// file has, where a log cut to nothing is allocated again block by block (ext4's allocation of the log was
        /// a fifth of the writing thread's time, taking 4,000 donations a second).
        case everyPagesInPlace(Int)

        /// The pages of log past which a commit checkpoints, if it does.
        var pages: Int? {
            switch self {
            case .onClose: nil
            case .everyPages(let pages), .everyPagesInPlace(let pages): pages
            }
        }

        /// Whether the log is written over in place when a commit starts it over, rather than cut.
        var startsLogOverInPlace: Bool {
            if case .everyPagesInPlace = self { return true }
            return false
        }
    }

    /// Opens the store, creating the directory and database if missing (unless `createIfMissing` is `false`) and
    /// migrating an older schema.
    ///
    /// Opening does no other work: state built under another policy, and learned weights learned under another
    /// `LearnedPolicy`, are rebuilt by `maintain`, which a caller runs when it chooses (a command before its work, a
    /// server between requests).
    /// - Parameters:
    ///   - ranking: learned weights (the default) or a policy's fixed ones. A store is meant to be used with one
    ///     ranking at a time: a process with another one rebuilds its state at its next `maintain`.
    ///   - createIfMissing: whether a store that does not exist is created; `false` for a caller that only reads or
    ///     removes, which gets "no such store" instead of a new empty one.
    ///   - pageCacheKiB: the connection's page cache. A long-lived connection that serves many requests (a server)
    ///     keeps the pages its queries and writes touch with a larger one; a short process does not need it.
    ///   - mirror: accounts' ranking state kept in memory, shared by every connection of a server to this store,
    ///     and used while it is the store's current state (`RankingMirror`); `nil` (a command, which ranks once)
    ///     ranks from SQLite only.
    ///   - groupCommit: where a server's connections record donations, together, on one connection of its own
    ///     (`GroupCommitWriter`); `nil` records them on this connection. Deletions, feedback and upkeep always
    ///     write on this connection.
    ///   - waitingOutImports: whether a write waits on, past the busy timeout, for another process's import that
    ///     goes on (`Database.waitsOutImports`): a command does; a server, whose clients wait with it, does not.
    /// - Throws: `StoreError` for a path that is a file, a file that is not a suggest store, a store of a newer
    ///   schema, a read-only or full disk, a missing parent directory, or a missing store.
    public static func open(
        _ location: StoreLocation, ranking: StoreRanking = .default, types: UniformTypeTree = .standard,
        checkpoints: CheckpointPolicy = .onClose, createIfMissing: Bool = true, pageCacheKiB: Int = 2_000,
        largeImportCacheKiB: Int = 262_144, mirror: RankingMirror? = nil, groupCommit: GroupCommitWriter? = nil,
        pacingRewrites: RewritePacing? = nil, waitingOutImports: Bool = true
    ) throws(StoreError) -> SQLiteDonationStore {
        if createIfMissing { try location.createDirectory() } else { try location.checkExists() }
        try location.checkDatabasePath()
        let path = location.databasePath
        var info = stat()
        let logExisted = stat(path + "-wal", &info) == 0
        // A new database file is made here, for its owner only: SQLite makes it 0644 less the umask, and its log and
        // index take the database file's mode, so a store in a directory that others can read (one made before, or
        // shared) let them read the history.
        let madeHere = createIfMissing && !location.exists ? location.makePrivateDatabaseFile() : nil
        // Only the empty file this open made goes when the open fails: another process may have made a store of it.
        func removeTheFileMadeHere() {
            if let madeHere, stat(path, &info) == 0, info.st_ino == madeHere, info.st_size == 0 { unlink(path) }
        }
        do {
            let database = try Database(path: path)
            database.waitsOutImports = waitingOutImports
            if checkpoints.pages != nil { try database.setCheckpointOnClose(false) }
            let store = SQLiteDonationStore(
                location: location, ranking: ranking, types: types, checkpoints: checkpoints,
                pageCacheKiB: max(100, pageCacheKiB), largeImportCacheKiB: largeImportCacheKiB, mirror: mirror,
                groupCommit: groupCommit, pacingRewrites: pacingRewrites, database: database)
            do {
                try store.prepare()
                // The connection's file, noted now: a store deleted under it is refused by its reads too.
                try database.checkFileInPlace()
                location.alignLogModes()
                // A deletion that could not cut the log left the scrub owed: whoever opens the store next settles
                // it, if no other connection is using the log at this moment (else a later one does).
                if database.owesLogScrub { _ = try? store.truncateLogIfIdle() }
                // So does a deletion's rewrite of the file that did not happen (a full disk, a process killed
                // after the deletion's commit), without waiting for another process's write: that may be the
                // deletion that owes it, which rewrites the file itself (waiting here would hold the command as
                // long as that writer goes on: 31 s, measured). A server's store keeps to its pacing here as in its
                // checkpoints: a connection its pool opens under load would otherwise rewrite the file on a
                // request's thread, right after the rewrite that the pacing holds back.
                if pacingRewrites.map(database.mayRewriteNow) ?? true { store.settleOwedRewrite() }
                try mirror?.attach(path: path)
                if createIfMissing { store.reserve.replenish() }
            } catch {
                // A file that is not a usable store is left as it was: when this open created the log and its
                // index, SQLite's default close removes them again.
                if !logExisted { try? database.setCheckpointOnClose(true) }
                throw error
            }
            return store
        } catch let error as StoreError {
            removeTheFileMadeHere()
            throw error
        } catch let error as SQLiteError {
            removeTheFileMadeHere()
            throw StoreError.from(error, path: path)
        } catch {
            removeTheFileMadeHere()
            throw StoreError(.failed, "cannot open the store at \(path): \(error)")
        }
    }

    private init(
        location: StoreLocation, ranking: StoreRanking, types: UniformTypeTree, checkpoints: CheckpointPolicy,
        pageCacheKiB: Int, largeImportCacheKiB: Int, mirror: RankingMirror?, groupCommit: GroupCommitWriter?,
        pacingRewrites: RewritePacing?, database: Database
    ) {
        self.rewritePacing = pacingRewrites
        self.pageCacheKiB = pageCacheKiB
        self.largeImportCacheKiB = largeImportCacheKiB
        self.mirror = mirror
        self.groupCommit = groupCommit
        self.location = location
        self.ranking = ranking
        policy = ranking.base
        self.types = types
        self.checkpoints = checkpoints
        self.database = database
    }

    /// Makes everything committed so far durable, without waiting for other connections or holding up their writes
    /// for long: the log is copied into the database as far as no reader still needs it (the rest at a later
    /// checkpoint), and started over when nobody is using it. `suggest import` ends with one, and a server runs one
    /// every second in the background. (Deletions truncate the log themselves, trying for a second while readers
    /// keep it busy: deleted data may not stay in it. One that could not leaves the scrub owed,
    /// `Database.owesLogScrub`: then this checkpoint cuts the log, never writes it over in place.)
    ///
    /// How the log starts over depends on whether other connections committed since this connection's last
    /// checkpoint. If they did (a server taking donations), the copy is run a second time for what came in during
    /// the first, and only then are this process's writers held, if little is left to copy
    /// (`restartLogIfMostlyCopied`), and the log is written over from its start, keeping its size: cutting it to
    /// nothing and growing it again held every writer for about 150 ms each second (a flush of the database, then
    /// of the cut). If they did not, it is cut to nothing, which a quiet log costs nobody.
    ///
    /// A log that is already empty is left alone: truncating it changes nothing stored but still starts the log
    /// over, which every other connection sees as a change (`PRAGMA data_version`), and would make a ranking
    /// mirror out of date every second. With a mirror, the checkpoint then runs one step of its upkeep
    /// (`refreshMirror()`), so that a mirror rebuilt after a write is read after the truncation that write leads
    /// to, not before it; and a truncation marks the mirrors that were current before it to be read again.
    ///
    /// A database file deleted or moved since the connection opened it fails the checkpoint (what would it make
    /// durable?), so that a server's periodic checkpoint says so in its log.
    /// Flushes the write-ahead log (`Database.syncLog()`).
    public func flushCommitted() throws {
        try translating { try database.syncLog() }
    }

    public func checkpoint() throws {
        try translating {
            try database.checkFileInPlace()
            // A long-lived process (a server, an app) settles a rewrite that a deletion could not do or left for
            // later (`Database.mayRewriteNow(_:)`), as an opener does (`settleOwedRewrite`), rather than leave it to
            // its next deletion or restart.
            if rewritePacing.map(database.mayRewriteNow) ?? true { settleOwedRewrite() }
            // And makes the deletion reserve again once the disk has room for it, as an opener does: a server that
            // spent it on a full disk would otherwise meet the next full disk without it.
            if !database.isReadOnly { reserve.replenish() }
            try database.checkpointWithoutWaiting()
            let version = try database.statement("PRAGMA data_version").scalarInt()
            defer { versionAtLastCheckpoint = version }
            var info = stat()
            if stat(database.path + "-wal", &info) == 0, info.st_size > 0 {
                // A connection's first checkpoint (a command's only one) follows its own writes, which
                // `data_version` does not count: it cuts the log like one that found nothing new.
                let quiet = versionAtLastCheckpoint.map { $0 == version } ?? true
                if !quiet { try database.checkpointWithoutWaiting() }
                // Cut, not written over, while a deletion's scrub is owed: what a restart leaves may hold it.
                let startOver = quiet || database.owesLogScrub ? truncateLogIfIdle : restartLogIfMostlyCopied
                if let mirror {
                    _ = try mirror.rebuildingCurrent(across: startOver)
                } else {
                    _ = try startOver()
                }
            }
        }
        try refreshMirror()
    }

    /// One bounded step of the ranking mirror's upkeep: the account whose queries most often found its mirror
    /// missing or out of date is read again (`RankingMirror.refresh(policy:)`). A no-op without a mirror.
    /// - Returns: whether an account was read.
    /// - Throws: `StoreError` when the store cannot be read.
    @discardableResult
    public func refreshMirror() throws -> Bool {
        guard let mirror else { return false }
        return try translating { try mirror.refresh(policy: policy) }
    }

    /// Configures the connection, checks the schema, migrates, and brings derived state in line with the policy.
    private func prepare() throws {
        // A corrupt or foreign file fails here, on the first read, with SQLITE_NOTADB.
        let tables = try database.statement("SELECT name, sql FROM sqlite_master WHERE type = 'table'")
        try tables.reset()
        var names: Set<String> = []
        var migrationsTable: String?
        while try tables.step() {
            guard let name = tables.text(0) else { continue }
            names.insert(name)
            if name == "schema_migrations" { migrationsTable = tables.text(1) }
        }
        let foreign = StoreError(.foreignDatabase, "\(database.path) is a SQLite database but not a suggest store")
        // Other tools keep a `schema_migrations` table too (Rails, Ecto, golang-migrate): suggest's has `version` and
        // `applied_at`. Nothing is written before these checks, so another application's file is left exactly as it
        // was. The table's CREATE text comes with the names: `PRAGMA table_info` would be one more statement, and
        // cost every command a tenth of its time.
        if !names.isEmpty {
            guard let migrationsTable, Schema.mentions(migrationsTable, "version"),
                Schema.mentions(migrationsTable, "applied_at")
            else { throw foreign }
        } else if let encoding = try database.uncachedStatement("PRAGMA encoding").scalarText(), encoding != "UTF-8" {
            // An empty database another tool made in UTF-16, about to become a store: its blocks grow by SQL's `||`
            // (`BlockLog`), which in UTF-16 drops the last byte of an odd length. The stores suggest creates are UTF-8.
            throw StoreError(
                .foreignDatabase,
                "\(database.path) is an empty SQLite database in \(encoding); a suggest store is UTF-8")
        }
        var applied = 0
        if names.contains("schema_migrations") {
            applied = Int(try database.statement("SELECT MAX(version) FROM schema_migrations").scalarInt() ?? 0)
        }
        if applied > Schema.latestVersion && names.isDisjoint(with: Schema.lastingTables) { throw foreign }
        try checkNotNewer(schema: applied)
        // From the end of the opening on: an empty file another tool left with a `user_version` of its own still
        // becomes a store (its migrations set the version).
        defer { database.newestWritableSchema = Schema.latestVersion }
        // A schema this version knows has only tables it makes (and SQLite's own); anything else is not ours to
        // migrate into.
        let known = applied == Schema.latestVersion ? Schema.tables : Schema.tables(atVersion: applied)
        guard names.allSatisfy({ $0.hasPrefix("sqlite_") || known.contains($0) }) else { throw foreign }
        try database.execute(
            "PRAGMA secure_delete = ON; PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = OFF; "
                + "PRAGMA cache_size = -\(pageCacheKiB); PRAGMA journal_size_limit = \(logSizeLimit)")
        if let pages = checkpoints.pages {
            database.startLogOverAfterCommits(reaching: pages, inPlace: checkpoints.startsLogOverInPlace)
        }
        // A store of a schema this version reads as it is (`Schema.oldestReadableVersion`), opened by a process
        // that may not write it (a read-only volume, a user who may only read): read without migrating, as the
        // version before read it; the first command that may write migrates it. (A store of schema 8 stopped being
        // readable by such a user at the upgrade: migration 9 needs a write.)
        if !names.isEmpty && applied >= Schema.oldestReadableVersion && database.isReadOnly { return }
        if applied < Schema.latestVersion || names.isEmpty {
            try database.enableWriteAheadLogging()
            try database.write {
                try database.execute(
                    "CREATE TABLE IF NOT EXISTS schema_migrations(version INTEGER PRIMARY KEY, applied_at REAL NOT NULL)"
                )
                // Re-read inside the lock: another process may have migrated meanwhile.
                let current = Int(try database.statement("SELECT MAX(version) FROM schema_migrations").scalarInt() ?? 0)
                try checkNotNewer(schema: current)
                try database.registerStableKeyFunction()
                for migration in Schema.migrations where migration.version > current {
                    try database.execute(migration.sql)
                    try migration.after?(database)
                    try database.statement("INSERT INTO schema_migrations(version, applied_at) VALUES (?, ?)")
                        .run([.integer(Int64(migration.version)), .real(Timestamp.now().seconds)])
                    // What a process with the store open checks before each write (`newestWritableSchema`).
                    try database.execute("PRAGMA user_version = \(migration.version)")
                }
                // A new store holds no state yet: it is built under this policy from its first donation, and so
                // are its learned weights.
                if current == 0 {
                    try setSetting("ranking.policy", policyFingerprint)
                    if let weightsFingerprint { try setSetting(Self.weightsSetting, weightsFingerprint) }
                }
            }
        }
    }

    /// Refuses a store whose schema a newer suggest wrote: read before the migrations, and again inside their lock.
    private func checkNotNewer(schema applied: Int) throws {
        guard applied > Schema.latestVersion else { return }
        throw StoreError(
            .newerSchema,
            "the store at \(location.directory) was written by a newer suggest (schema \(applied); this one knows "
                + "\(Schema.latestVersion)); upgrade suggest to open it")
    }

    /// The fingerprint of the policy whose channels the stored state holds.
    var policyFingerprint: String { policy.stateFingerprint }

    /// The fingerprint of the learned policy the stored weights follow (`nil` under fixed weights).
    var weightsFingerprint: String? { ranking.learnedPolicy?.weightsFingerprint }

    /// The setting that holds `weightsFingerprint`.
    static let weightsSetting = "ranking.weights"

    // MARK: Settings

    func setting(_ name: String) throws -> String? { try database.setting(name) }

    func setSetting(_ name: String, _ value: String) throws { try database.setSetting(name, value) }

    /// The room kept for deletions on a full disk.
    var reserve: DeletionReserve { DeletionReserve(location) }

    /// Runs `body`, translating SQLite failures into `StoreError`s that name the store.
    func translating<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as SQLiteError {
            throw StoreError.from(error, path: database.path)
        }
    }
}

@available(*, unavailable)
extension SQLiteDonationStore: Sendable {}

/// The store's `settings` table, read and written from the connection: the store's own settings (retention, the
/// policy's fingerprint) and the donation log's next sequence number (`BlockLog`) share it.
extension Database {
    func setting(_ name: String) throws(SQLiteError) -> String? {
        try statement("SELECT value FROM settings WHERE name = ?").scalarText([.text(name)])
    }

    func setSetting(_ name: String, _ value: String) throws(SQLiteError) {
        try statement("INSERT OR REPLACE INTO settings(name, value) VALUES (?, ?)").run([.text(name), .text(value)])
    }
}
