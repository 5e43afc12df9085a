import Synchronization
import CSQLite
import CSystem
import SuggestCore

/// A database file, by device and inode: what tells the file a connection has open from another at the same path.
public struct DatabaseFile: Sendable, Hashable {
    let device: UInt64
    let inode: UInt64
}

/// One connection to a SQLite database, configured for several processes sharing one store.
///
/// WAL journal (readers never block the writer), `synchronous=NORMAL` (durable at each checkpoint, never
/// corrupt), a busy timeout so ordinary contention waits instead of failing, and `secure_delete` so that deleted
/// rows are overwritten rather than left in free pages. Writes go through `write(_:)`, which begins with
/// `BEGIN IMMEDIATE`: a writer takes the lock up front, so two writers queue instead of deadlocking on upgrade.
/// Not `Sendable`: one connection per thread, like GRDB's `Database`.
package final class Database {
    let handle: OpaquePointer
    package let path: String
    private var statements: [String: Statement] = [:]

    /// How long a connection waits for another process's write lock before it reports "busy" (or waits again, while
    /// that process is an import that goes on: `beginWriting()`).
    package static let busyTimeoutMilliseconds: Int32 = 30_000
    /// This connection's busy timeout: `busyTimeoutMilliseconds` but in tests.
    let busyTimeout: Int32
    /// Whether this connection waits for locks now (`withoutWaiting(_:)` says not).
    private var waitsForLocks = true

    /// The lock this process's writers of this database take before SQLite's (`write(_:)`).
    lazy var writeGate: WriteGate = WriteGate.forDatabase(at: path)
    /// What the log's hook after commits reads (`startLogOverAfterCommits`), kept as long as the connection.
    var logRestartSetting: LogRestartSetting?
    /// The log's index header when `checkpointWithoutWaiting()` last flushed the log.
    var logFlushedAt: StoreVersion?
    /// How many times this connection flushed its log itself (`syncLog()`).
    var ownLogFlushes = 0
    /// This connection's file, and what is known of it (`checkFileInPlace()`).
    package internal(set) var openedFile: DatabaseFile?
    var fileState: FileState?

    /// Configures the library once, before its first connection: `Database.init` reads it.
    private static let libraryConfigured: Bool = {
        _ = suggest_sqlite3_disable_memory_statistics()
        return true
    }()

    /// Opens (and creates, unless `readOnly`) the database at `path`.
    /// - Parameter busyTimeout: how long to wait for another process's lock, in milliseconds.
    package init(
        path: String, readOnly: Bool = false, busyTimeout: Int32 = Database.busyTimeoutMilliseconds
    ) throws(SQLiteError) {
        _ = Database.libraryConfigured
        var handle: OpaquePointer?
        let flags = (readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE) | SQLITE_OPEN_NOMUTEX
        let code = sqlite3_open_v2(path, &handle, flags, nil)
        guard code == SQLITE_OK, let handle else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot open"
            let systemError = handle.map { sqlite3_system_errno($0) } ?? 0
            sqlite3_close_v2(handle)
            throw SQLiteError(code: code, message: message, systemErrorNumber: systemError)
        }
        self.handle = handle
        self.path = path
        self.busyTimeout = busyTimeout
        sqlite3_extended_result_codes(handle, 1)
        sqlite3_busy_timeout(handle, busyTimeout)
    }

    deinit {
        // Out of the record before the file is closed: once closed, its inode may go to a file created next.
        if let openedFile {
            Self.openFiles.withLock { files in
                guard let entry = files[openedFile] else { return }
                files[openedFile] = entry.connections > 1 ? (entry.state, entry.connections - 1) : nil
            }
        }
        statements.removeAll()
        sqlite3_close_v2(handle)
    }

    /// The error of the call that returned `code`, with the connection's details of it (the extended code, when the
    /// connection has one, tells apart the kinds of `SQLITE_IOERR` and `SQLITE_BUSY`).
    func error(_ code: Int32, sql: String?) -> SQLiteError {
        let extended = sqlite3_extended_errcode(handle)
        return SQLiteError(
            code: extended & 0xFF == code & 0xFF ? extended : code, message: String(cString: sqlite3_errmsg(handle)),
            sql: sql, systemErrorNumber: sqlite3_system_errno(handle))
    }

    /// Runs one or more statements that return no rows.
    package func execute(_ sql: String) throws(SQLiteError) {
        try refuseIfGone()
        var message: UnsafeMutablePointer<CChar>?
        let code = sqlite3_exec(handle, sql, nil, nil, &message)
        guard code == SQLITE_OK else {
            let text = message.map { String(cString: $0) } ?? String(cString: sqlite3_errmsg(handle))
            sqlite3_free(message)
            throw SQLiteError(
                code: sqlite3_extended_errcode(handle), message: text, sql: sql,
                systemErrorNumber: sqlite3_system_errno(handle))
        }
    }

    /// Switches the database to write-ahead logging (a no-op when it already uses it), waiting for other
    /// processes' locks as long as the busy timeout allows.
    ///
    /// SQLite changes the journal mode under an exclusive lock that it tries once, without calling the busy
    /// handler: when several processes create the same store at once, all but one would fail at once with
    /// SQLITE_BUSY ("database is locked"). So this retries, every few milliseconds, up to the busy timeout.
    package func enableWriteAheadLogging() throws(SQLiteError) {
        let pauseMilliseconds: Int32 = 5
        var waited: Int32 = 0
        while true {
            do {
                return try execute("PRAGMA journal_mode = WAL")
            } catch where error.primaryCode == SQLITE_BUSY && waited < busyTimeout {
                usleep(UInt32(pauseMilliseconds) * 1000)
                waited += pauseMilliseconds
            }
        }
    }

    /// How many statements the connection holds prepared: each keeps its memory until the connection closes.
    var preparedStatementCount: Int { statements.count }

    /// The cached prepared statement for `sql`, prepared on first use.
    /// - Parameter instance: which of several statements of the same text, for cursors that step side by side.
    package func statement(_ sql: String, instance: Int = 0) throws(SQLiteError) -> Statement {
        try refuseIfGone()
        let key = instance == 0 ? sql : sql + "\u{0}" + String(instance)
        if let cached = statements[key] { return cached }
        let statement = try Statement(database: self, sql: sql)
        statements[key] = statement
        return statement
    }

    /// Makes `suggest_key(TEXT, ...)` callable from SQL on this connection: `StableHash.key` of its arguments. The
    /// migration that added the key columns fills them with it for rows written before.
    func registerStableKeyFunction() throws(SQLiteError) {
        let code = sqlite3_create_function_v2(
            handle, "suggest_key", -1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, nil,
            { context, count, arguments in
                var hash = StableHash()
                for index in 0..<Int(count) {
                    let argument = arguments?[index]
                    let length = Int(sqlite3_value_bytes(argument))
                    let text = sqlite3_value_text(argument)
                    hash.combine(utf8: UnsafeBufferPointer(start: text, count: text == nil ? 0 : length))
                }
                sqlite3_result_int64(context, Int64(bitPattern: hash.value))
            }, nil, nil, nil)
        guard code == SQLITE_OK else { throw error(code, sql: "suggest_key") }
    }

    /// A statement of its own, not shared through the cache: for cursors that step while others run.
    package func uncachedStatement(_ sql: String) throws(SQLiteError) -> Statement {
        try Statement(database: self, sql: sql)
    }

    /// Runs `body` in a write transaction that begins with `BEGIN IMMEDIATE`; commits if it returns, rolls back if
    /// it throws. Either all of its changes are in the database or none are, even if the process is killed.
    package func write<T>(_ body: () throws -> T) throws -> T {
        // Connections of one process queue on a lock of their own before they ask SQLite for its write lock:
        // SQLite's busy handler waits by sleeping (1 ms, then 2, 5, … up to 100), so two threads of a server
        // contending for a write would wait a sleep each, far longer than the other's write.
        try writeGate.withLock { try transaction(body) }
    }

    /// Runs `body` holding the lock this process's writers take (`write(_:)`), outside any transaction: for work
    /// that takes SQLite's write lock without a transaction, such as truncating the log. This process's writers
    /// then queue behind it on the lock, woken the moment it ends, instead of failing to get SQLite's lock and
    /// sleeping in its busy handler (1, 2, 5, 10 … ms: tens of milliseconds for a truncation of a few).
    package func excludingWriters<T>(_ body: () throws -> T) throws -> T {
        try writeGate.withLock(body)
    }

    private func transaction<T>(_ body: () throws -> T) throws -> T {
        // SQLite begins a write transaction on a connection it opened read-only and refuses only the first write;
        // a body that reads first (a store of an older schema, read without migrating, lacks what the writer
        // reads) failed on that read with SQL text instead of saying the store is read-only.
        if isReadOnly { throw SQLiteError(code: SQLITE_READONLY, message: "attempt to write a readonly database") }
        try beginWriting()
        do {
            try checkSchemaIsWritable()
            let result = try body()
            try checkFileInPlace()
            try execute("COMMIT")
            return result
        } catch {
            rollBack()
            throw error
        }
    }

    /// Ends the transaction under way without its changes, also on a file found gone (`execute` refuses those):
    /// left open, it would keep the write lock of a store other processes still use.
    private func rollBack() {
        if sqlite3_get_autocommit(handle) == 0 { sqlite3_exec(handle, "ROLLBACK", nil, nil, nil) }
    }

    /// `BEGIN IMMEDIATE`, waiting the busy timeout for another process's write lock, and again for as long as that
    /// process is an import that goes on (`ImportMarker.goesOn`): an import is one transaction, and one of
    /// millions of donations holds the lock for longer than the timeout, so an app's donations beside it failed
    /// ("stayed locked by another process"). An import that stops going on (its input waits) is waited for no
    /// longer: the busy error then says what held the lock.
    private func beginWriting() throws(SQLiteError) {
        while true {
            do {
                return try execute("BEGIN IMMEDIATE")
            } catch where error.primaryCode == SQLITE_BUSY && waitsForLocks && waitsOutImports
                && writeGate.imports.goesOn
            {
                continue
            }
        }
    }

    /// The newest schema this process writes (`PRAGMA user_version`, which each migration sets), checked at the
    /// start of every write transaction and by readiness; `nil` until the store is open (its own migrations set the
    /// version). A newer suggest may migrate the store while this process has it open (a server, an app left running
    /// through an upgrade): writing on by the older rules would damage it without a word (migration 12's
    /// identifiers, read by an older process from their buckets alone, would be recorded again).
    package var newestWritableSchema: Int?

    /// Throws `StoreError.newerSchema` when the store's schema is newer than `newestWritableSchema`.
    package func checkSchemaIsWritable() throws {
        guard let newest = newestWritableSchema,
            let found = try statement("PRAGMA user_version").scalarInt(), found > newest
        else { return }
        throw StoreError(
            .newerSchema,
            "the store \(path) was migrated to schema \(found) by a newer suggest (this one writes schema \(newest)); "
                + "nothing was written: run the newer suggest, and restart any process of this one that has the store open")
    }

    /// Whether a write waits on for an import of another process that goes on (`beginWriting()`); a server's
    /// connections do not: a request would wait with its client for the whole import, and be recorded after the
    /// client gave up on it (a retry of a donation without an identifier then recorded it twice).
    package var waitsOutImports = true

    /// Notes that this connection's import begins its transaction, for the writers of other processes that wait
    /// for it (`ImportMarker`).
    package func noteImportBegins() { writeGate.imports.begin() }

    /// Notes that this connection's import goes on: about every second of its transaction.
    package func noteImportGoesOn() { writeGate.imports.noteGoesOn() }

    /// Notes that this connection's import has ended.
    package func noteImportEnded() { writeGate.imports.end() }

    /// Whether this connection can only read: SQLite opens a file it may not write read-only, without an error.
    package var isReadOnly: Bool { sqlite3_db_readonly(handle, "main") == 1 }

    /// Why this connection could not write now.
    package enum WritingProblem: Sendable, Equatable {
        /// A file the process may not write, or a write that SQLite refuses as read-only.
        case readOnly(String)
        /// A write that cannot begin for another reason (an I/O error on the `-shm`, a damaged file).
        case failed(String)
    }

    /// Why this connection could not write now, or `nil`. A file of the store the process may not write (`chmod`,
    /// `chattr +i`, a read-only mount) is named; and a write transaction must begin, without waiting: a `-shm` the
    /// process could not write when a connection mapped it is read-only to every connection of the process, while
    /// `isReadOnly` says false, and stays so until they have all closed. Another writer holding the lock (a writer
    /// of this process, by the write gate, taken only if free; another process's, by SQLite's lock) is taken for
    /// writable: the probe never waits, and never makes this process's writer meet its lock.
    package var writingProblem: WritingProblem? {
        var files: [String] = []
        if let database = sqlite3_db_filename(handle, "main"), database.pointee != 0 {
            let path = String(cString: database)
            files = [path, path + "-shm"]
            if let log = sqlite3_filename_wal(database) { files.append(String(cString: log)) }
        }
        // As `open` will judge it: the effective user's permissions.
        for file in files where access(file, F_OK) == 0 && faccessat(AT_FDCWD, file, W_OK, AT_EACCESS) != 0 {
            return .readOnly("\(file) may not be written by this process (\(ErrorNumber.describeLast()))")
        }
        guard sqlite3_get_autocommit(handle) != 0 else { return nil }
        return writeGate.ifFree {
            let code = withoutWaiting { sqlite3_exec(handle, "BEGIN IMMEDIATE", nil, nil, nil) }
            if code == SQLITE_OK {
                rollBack()
                return nil
            }
            let reason = String(cString: sqlite3_errmsg(handle))
            switch code & 0xFF {
            case SQLITE_BUSY, SQLITE_LOCKED: return nil
            case SQLITE_READONLY:
                return .readOnly(
                    "a write cannot begin (\(reason)): a -shm file this process could not write when it opened the "
                        + "store keeps every connection of it read-only; fix the files' owner and mode, then restart it"
                )
            default: return .failed("a write cannot begin: \(reason)")
            }
        } ?? nil
    }

    /// Runs `body` in a read transaction: one consistent snapshot even while other processes write.
    package func read<T>(_ body: () throws -> T) throws -> T {
        try execute("BEGIN DEFERRED")
        do {
            let result = try body()
            try execute("COMMIT")
            return result
        } catch {
            endRead()
            throw error
        }
    }

    /// Ends a read transaction whatever happened in it: a connection left inside one refuses its next `BEGIN`
    /// ("cannot start a transaction within a transaction") and keeps its snapshot, holding the log's checkpoint
    /// back.
    package func endRead() {
        guard sqlite3_get_autocommit(handle) == 0 else { return }
        if (try? execute("COMMIT")) == nil { rollBack() }
    }

    /// The number of rows the last INSERT, UPDATE or DELETE changed.
    package var changes: Int { Int(sqlite3_changes(handle)) }

    package var lastInsertRowID: Int64 { sqlite3_last_insert_rowid(handle) }

    /// Runs `body` waiting at most `milliseconds` (at least 1) for a lock another connection holds, instead of the
    /// connection's own busy timeout.
    package func withBusyTimeout<T>(milliseconds: Int32, _ body: () throws -> T) rethrows -> T {
        sqlite3_busy_timeout(handle, max(1, milliseconds))
        defer { sqlite3_busy_timeout(handle, busyTimeout) }
        return try body()
    }

    /// Runs `body` with no busy timeout: a lock another connection holds fails it at once instead of waiting.
    package func withoutWaiting<T>(_ body: () throws -> T) rethrows -> T {
        sqlite3_busy_timeout(handle, 0)
        waitsForLocks = false
        defer {
            sqlite3_busy_timeout(handle, busyTimeout)
            waitsForLocks = true
        }
        return try body()
    }
}

@available(*, unavailable)
extension Database: Sendable {}
