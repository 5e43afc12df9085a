import CSQLite
import SuggestCore

/// The durable donation log of one store directory, and the ranking state derived from it.
///
/// Several processes may open the same store at once (an app and its share extension): SQLite's WAL lets readers
/// run beside one writer, and every write is one `BEGIN IMMEDIATE` transaction, so a killed process leaves either
/// all of its write or none. Each donation updates its conversation's ranking state in O(1) inside the same
/// transaction, so ranking never rescans the history. Not `Sendable`: open one per thread or process.
public final class DonationStore {
    public let location: StoreLocation
    public let policy: FrecencyPolicy
    public let types: UniformTypeTree
    let database: Database

    /// Opens the store, creating the directory and database if missing and migrating an older schema.
    /// - Throws: `StoreError` for a path that is a file, a file that is not a suggest store, a store of a newer
    ///   schema, a read-only or full disk.
    public static func open(
        _ location: StoreLocation, policy: FrecencyPolicy = .default, types: UniformTypeTree = .standard
    ) throws(StoreError) -> DonationStore {
        try location.createDirectory()
        try location.checkDatabasePath()
        let path = location.databasePath
        do {
            let database = try Database(path: path)
            let store = DonationStore(location: location, policy: policy, types: types, database: database)
            try store.prepare()
            return store
        } catch let error as StoreError {
            throw error
        } catch let error as SQLiteError {
            throw StoreError.from(error, path: path)
        } catch {
            throw StoreError(.failed, "cannot open the store at \(path): \(error)")
        }
    }

    private init(location: StoreLocation, policy: FrecencyPolicy, types: UniformTypeTree, database: Database) {
        self.location = location
        self.policy = policy
        self.types = types
        self.database = database
    }

    /// Configures the connection, checks the schema, migrates, and brings derived state in line with the policy.
    private func prepare() throws {
        // A corrupt or foreign file fails here, on the first read, with SQLITE_NOTADB.
        let tables = try database.statement("SELECT name FROM sqlite_master WHERE type = 'table'")
        try tables.reset()
        var names: Set<String> = []
        while try tables.step() { if let name = tables.text(0) { names.insert(name) } }
        let foreign = StoreError(
            .foreignDatabase,
            "\(database.path) is a SQLite database but not a suggest store; move it away or choose another --store")
        // Other tools keep a `schema_migrations` table too (Rails, Ecto, golang-migrate): suggest's has `applied_at`.
        // Nothing is written before these checks, so another application's file is left exactly as it was.
        if !names.isEmpty {
            guard names.contains("schema_migrations") else { throw foreign }
            let columns = try database.uncachedStatement("PRAGMA table_info(schema_migrations)")
            var columnNames: Set<String> = []
            while try columns.step() { if let name = columns.text(1) { columnNames.insert(name) } }
            guard columnNames.isSuperset(of: ["version", "applied_at"]) else { throw foreign }
        }
        var applied = 0
        if names.contains("schema_migrations") {
            applied = Int(try database.statement("SELECT MAX(version) FROM schema_migrations").scalarInt() ?? 0)
        }
        if applied > Schema.latestVersion {
            throw StoreError(
                .newerSchema,
                "the store at \(location.directory) was written by a newer suggest (schema \(applied); this one knows "
                    + "\(Schema.latestVersion)); upgrade suggest to use it")
        }
        // A schema this version knows has only tables it makes (and SQLite's own); anything else is not ours to
        // migrate into.
        guard names.allSatisfy({ $0.hasPrefix("sqlite_") || Schema.tables.contains($0) }) else { throw foreign }
        try database.execute("PRAGMA secure_delete = ON; PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = OFF")
        if applied < Schema.latestVersion || names.isEmpty {
            try database.enableWriteAheadLogging()
            try database.write {
                try database.execute(
                    "CREATE TABLE IF NOT EXISTS schema_migrations(version INTEGER PRIMARY KEY, applied_at REAL NOT NULL)")
                // Re-read inside the lock: another process may have migrated meanwhile.
                let current = Int(try database.statement("SELECT MAX(version) FROM schema_migrations").scalarInt() ?? 0)
                for migration in Schema.migrations where migration.version > current {
                    try database.execute(migration.sql)
                    try database.statement("INSERT INTO schema_migrations(version, applied_at) VALUES (?, ?)")
                        .run([.integer(Int64(migration.version)), .real(Timestamp.now().seconds)])
                }
            }
        }
        try reconcilePolicy()
    }

    /// The fingerprint of the policy whose channels the stored state holds.
    ///
    /// Built from `Double.description` and literal names: interpolating the `Aggregation` enum itself would print it
    /// through run-time reflection, which cost every command a third of a millisecond at start.
    var policyFingerprint: String {
        var text = ""
        for channel in policy.channels {
            for number in [
                channel.halfLife, channel.outgoing, channel.incoming, channel.unspecified, channel.engagedBonus,
                channel.group,
            ] {
                text += number.description + ":"
            }
            switch channel.aggregation {
            case .sum: text += "sum;"
            case .latest: text += "latest;"
            }
        }
        return text + "content:" + policy.contentHalfLife.description
    }

    /// Recomputes every conversation's state when the stored one was built under other channel parameters (a new
    /// release retuned the default), so that stored order always matches the policy in use.
    private func reconcilePolicy() throws {
        guard try setting("ranking.policy") != policyFingerprint else { return }
        try database.write {
            guard try setting("ranking.policy") != policyFingerprint else { return }
            let all = try database.statement("SELECT id FROM conversations")
            try all.reset()
            var ids: [Int64] = []
            while try all.step() { ids.append(all.int(0)) }
            for id in ids { try recompute(conversationID: id) }
            try setSetting("ranking.policy", policyFingerprint)
        }
    }

    // MARK: Settings

    func setting(_ name: String) throws -> String? {
        let statement = try database.statement("SELECT value FROM settings WHERE name = ?")
        try statement.reset([.text(name)])
        defer { _ = try? statement.reset() }
        return try statement.step() ? statement.text(0) : nil
    }

    func setSetting(_ name: String, _ value: String) throws {
        try database.statement("INSERT OR REPLACE INTO settings(name, value) VALUES (?, ?)").run([.text(name), .text(value)])
    }

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
extension DonationStore: Sendable {}
