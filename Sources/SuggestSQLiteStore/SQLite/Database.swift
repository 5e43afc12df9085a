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
    private let busyTimeout: Int32
    /// Whether this connection waits for locks now (`withoutWaiting(_:)` says not).
    private var waitsForLocks = true

    /// The lock this process's writers of this database take before SQLite's (`write(_:)`).
    private lazy var writeGate: WriteGate = WriteGate.forDatabase(at: path)
    /// What the log's hook after commits reads (`startLogOverAfterCommits`), kept as long as the connection.
    private var logRestartSetting: LogRestartSetting?

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

    /// Throws when the database file this connection writes to is no longer the one its path names (deleted,
    /// renamed or replaced since it was opened), or its log is not (`checkLogInPlace`): what it commits would be
    /// acknowledged, then lost with the file.
    /// A `stat` of the path; SQLite itself only logs a warning. The file is then gone for the whole process: every
    /// connection that has it open and has checked it once refuses to read or write (`isGone`); a connection
    /// opened since, on whatever the path names now, is another matter (a server refuses those itself).
    package func checkFileInPlace() throws(StoreError) {
        try checkDatabaseFileInPlace()
        if let fileState { checkLogInPlace(fileState) }
        if isGone { throw Self.goneError(path) }
    }

    /// The database file's part of `checkFileInPlace()`.
    private func checkDatabaseFileInPlace() throws(StoreError) {
        if isGone { throw Self.goneError(path) }
        var before = stat()
        let named = fileState == nil && stat(path, &before) == 0
        switch suggest_sqlite3_file_has_moved(handle) {
        case 1:
            // SQLite counts any failed `stat` of the path as a move. Only a path that names nothing, or another
            // file, is one: an I/O error of a moment (EIO, ENOMEM, an NFS server's ESTALE) fails this check alone;
            // taken for a move, it would mark the file gone, and a server would refuse every request until restarted.
            // The name SQLite itself checks: absolute, a linked database file's target.
            let checked =
                sqlite3_db_filename(handle, "main").flatMap { $0.pointee != 0 ? String(cString: $0) : nil } ?? path
            var now = stat()
            if stat(checked, &now) != 0 {
                let number = system_errno()
                if !ErrorNumber.meansAbsent(number) {
                    throw StoreError(
                        .failed, "cannot check the store's database \(path): \(ErrorNumber.describe(number))")
                }
            } else if let openedFile,
                openedFile == DatabaseFile(device: UInt64(now.st_dev), inode: UInt64(now.st_ino))
            {
                return
            }
            // Found gone before it was ever recorded: this connection at least knows.
            if fileState == nil { fileState = FileState() }
            fileState?.gone.store(true, ordering: .releasing)
            throw Self.goneError(path)
        case 0 where named:
            // Not moved, and the path named one file before and after the check: this connection's, which joins
            // the process's record of open files.
            var after = stat()
            guard stat(path, &after) == 0, after.st_dev == before.st_dev, after.st_ino == before.st_ino else { return }
            let key = DatabaseFile(device: UInt64(after.st_dev), inode: UInt64(after.st_ino))
            fileState = Self.openFiles.withLock { files in
                let state = files[key]?.state ?? FileState()
                files[key] = (state, (files[key]?.connections ?? 0) + 1)
                return state
            }
            openedFile = key
        default:
            break
        }
    }


    /// Marks the file gone when its log (`-wal`) or the log's index (`-shm`) is no longer the file this process
    /// had at that path: deleted or replaced under it. SQLite keeps both open for as long as one of the process's
    /// connections is, so another process would then write a log of its own beside this one's, each unaware of the
    /// other's frames, and what either acknowledged could be lost (a command's write after an `rm` of the two files
    /// under a server left the store "malformed" and the server's donations unreadable). Each is noted by device
    /// and inode the first time it is seen, after a read of this connection has opened it.
    private func checkLogInPlace(_ state: FileState) {
        // The paths SQLite itself opens: absolute, and beside a linked database file's target, whatever the
        // caller's path and working directory.
        guard let database = sqlite3_db_filename(handle, "main"), database.pointee != 0,
            let log = sqlite3_filename_wal(database)
        else { return }
        let paths = ["-wal": String(cString: log), "-shm": String(cString: database) + "-shm"]
        for (suffix, companion) in paths {
            var now = stat()
            let found = stat(companion, &now) == 0
            // A `stat` that failed for another reason than the file's absence says nothing about it.
            if !found, !ErrorNumber.meansAbsent(system_errno()) { continue }
            let file = found ? DatabaseFile(device: UInt64(now.st_dev), inode: UInt64(now.st_ino)) : nil
            let seen = state.companions.withLock { known -> Bool in
                guard let noted = known[suffix] else {
                    known[suffix] = file
                    return true
                }
                return noted == file
            }
            if !seen { state.gone.store(true, ordering: .releasing) }
        }
    }

    /// What the process's connections to one file know of it: whether it was found deleted or moved (or its log),
    /// and the log's files as they were first seen.
    private final class FileState: Sendable {
        let gone = Atomic<Bool>(false)
        let companions = Mutex<[String: DatabaseFile]>([:])
    }

    /// The files this process's connections have open (once `checkFileInPlace` has seen their paths name them),
    /// with how many connections have each: an entry lasts while one of them is open, which keeps the file's inode
    /// from being given to another file (a store created later with the same number is not taken for a gone one).
    private static let openFiles = Mutex<[DatabaseFile: (state: FileState, connections: Int)]>([:])
    /// This connection's file, and what is known of it.
    package private(set) var openedFile: DatabaseFile?
    private var fileState: FileState?

    /// Whether this connection's file was found deleted or moved under this process (by any of its connections).
    package var isGone: Bool { fileState?.gone.load(ordering: .acquiring) ?? false }

    /// Every statement and every `execute`, in a transaction or not, refuses a file found gone (`isGone`).
    private func refuseIfGone() throws(SQLiteError) {
        guard isGone else { return }
        throw SQLiteError(code: SQLITE_NOTFOUND, message: Self.goneError(path).message, systemErrorNumber: 0)
    }

    package static func goneError(_ path: String) -> StoreError {
        StoreError(
            .noSuchStore,
            "the store's database \(path), or its log beside it, was deleted or moved while this process had it open; "
                + "nothing more is read from it or recorded in it (restart with the store in place)")
    }

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
    private func endRead() {
        guard sqlite3_get_autocommit(handle) == 0 else { return }
        if (try? execute("COMMIT")) == nil { rollBack() }
    }

    /// The number of rows the last INSERT, UPDATE or DELETE changed.
    package var changes: Int { Int(sqlite3_changes(handle)) }

    package var lastInsertRowID: Int64 { sqlite3_last_insert_rowid(handle) }

    /// Whether closing this connection checkpoints the write-ahead log (SQLite's default). When it does, the last
    /// connection to close copies the log into the database with two `fdatasync`s and deletes it; when it does not,
    /// the log stays as it is (in the operating system's cache, so a crash of the process loses nothing) and is
    /// copied at the next automatic or explicit checkpoint.
    package func setCheckpointOnClose(_ enabled: Bool) throws(SQLiteError) {
        let applied = suggest_sqlite3_db_config_flag(handle, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, enabled ? 0 : 1)
        guard applied == (enabled ? 0 : 1) else {
            throw SQLiteError(
                code: SQLITE_ERROR, message: "SQLite refused SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE", systemErrorNumber: 0)
        }
    }

    /// After each commit that leaves `pages` pages or more in the write-ahead log, copies the log into the database
    /// and starts it over, if no other connection is busy with it at that moment (else a later commit does): cut to
    /// zero bytes, or, `inPlace`, written over from its start (`checkpointAndRestart()`). This replaces SQLite's
    /// automatic checkpoint (`wal_autocheckpoint`), which only copies the log: the next write reuses the log from
    /// its start only if the same connection knows it was copied, and a process that opens the store later cannot
    /// know it (the log's index in `-shm` is rebuilt from the log on the first open). Without a connection that
    /// lives on, the log would grow by every command's write, and every command would read it all at open.
    ///
    /// In place, the log is cut all the same while a deletion's scrub of it is owed (`owesLogScrub`): the frames a
    /// restart leaves in the file may hold what was deleted.
    package func startLogOverAfterCommits(reaching pages: Int, inPlace: Bool) {
        let setting = LogRestartSetting(pages: max(1, pages), inPlace: inPlace, gate: writeGate, busyTimeout: busyTimeout)
        logRestartSetting = setting
        // A C function: what it needs travels in its context pointer, kept alive by this connection.
        let hook: @convention(c) (UnsafeMutableRawPointer?, OpaquePointer?, UnsafePointer<CChar>?, Int32) -> Int32 = {
            context, handle, name, frames in
            guard let context else { return SQLITE_OK }
            let setting = Unmanaged<LogRestartSetting>.fromOpaque(context).takeUnretainedValue()
            guard setting.pages <= Int(frames) else { return SQLITE_OK }
            let cutting = !setting.inPlace || setting.gate.owesLogScrub
            // Without waiting: a reader that holds an old snapshot would hold this commit's process up.
            sqlite3_busy_timeout(handle, 0)
            let code = sqlite3_wal_checkpoint_v2(
                handle, name, cutting ? SQLITE_CHECKPOINT_TRUNCATE : SQLITE_CHECKPOINT_RESTART, nil, nil)
            sqlite3_busy_timeout(handle, setting.busyTimeout)
            if cutting && code == SQLITE_OK { setting.gate.settleLogScrub() }
            // A reader kept the log from being copied, and so from being flushed (`checkpointWithoutWaiting()`): a
            // command flushes its commit itself. (A server flushes once a second, in its checkpoint, as it promises:
            // a flush in every group's commit while an export reads would hold its writer up.)
            if !setting.inPlace && code & 0xFF == SQLITE_BUSY {
                var systemErrorNumber: Int32 = 0
                if suggest_sqlite3_sync_log(handle, name, &systemErrorNumber) == SQLITE_OK { setting.flushes += 1 }
            }
            return SQLITE_OK
        }
        sqlite3_wal_hook(handle, hook, Unmanaged.passUnretained(setting).toOpaque())
    }

    /// Whether deleted data may still be in the log, or in the database file's old pages, until the log is next cut:
    /// owed from before a deletion commits and from the start of each rewrite of the file, and kept when a cut
    /// fails (a reader or another checkpoint kept the log busy). Shared by every process's connections to the
    /// database (a marker file beside it, `WriteGate`), cleared by the next cut.
    package var owesLogScrub: Bool {
        get { writeGate.owesLogScrub }
        set { if newValue { writeGate.oweLogScrub() } else { writeGate.settleLogScrub() } }
    }

    /// Whether a deletion's rewrite of the database file is owed (`rewriteAfterDeletion`): shared by every
    /// process's connections to the database through a marker file beside it, as `owesLogScrub` is.
    package var owesFileRewrite: Bool { writeGate.owesFileRewrite }

    /// Whether a process paced so may rewrite the file now (`RewritePacing`).
    package func mayRewriteNow(_ pacing: RewritePacing) -> Bool { writeGate.mayRewriteNow(pacing) }

    /// Notes, before a deletion commits, that the file must be rewritten after it, and the log cut after that
    /// (`owesLogScrub`): a process killed between the commit and either leaves the debt to the next one that opens
    /// the store.
    ///
    /// The cut is owed from here on, so that removing the rewrite's marker once the file has been rewritten leaves
    /// it still owed: the deleted rows stay in the file's old pages until a checkpoint copies the rewritten ones
    /// over them, and a process killed between the rewrite and the cut, or a cut that a reader held off, left no
    /// debt at all, and the deleted bytes in the file through any number of reading commands.
    package func oweFileRewrite() {
        writeGate.oweLogScrub()
        writeGate.oweFileRewrite()
    }

    /// Rewrites the whole database file (`VACUUM`) once the deletions this process committed before the call are in
    /// it, so that no copy of their rows stays in the file's pages. SQLite's `secure_delete` zeroes a row where it
    /// is deleted, but not the copies a page keeps in its free space after SQLite moved its rows to rebalance the
    /// tree (`rebuildPage` writes the moved rows afresh and leaves the old bytes of the gap); those copies hold rows
    /// that a later deletion removes everywhere else. A rewrite builds every page anew.
    ///
    /// Deletions of this process that commit before a rewrite begins are covered by it and skip their own (a
    /// ticket taken after each commit, compared with the tickets a rewrite had seen when it began).
    /// - Parameters:
    ///   - waiting: whether the rewrite waits for another process's write (SQLite's busy timeout), as a deletion's
    ///     does; an opener's or a checkpoint's settling of a debt does not, and leaves it for later.
    ///   - paced: when a rewrite that just ended leaves this one owed, for a later checkpoint
    ///     (`mayRewriteNow(_:)`): a server's, so that it rewrites at most a fifth of the time however fast a client
    ///     deletes or unblocks.
    /// - Returns: `false` when the rewrite failed (a full disk, another process's write held past the busy timeout,
    ///   too little free space to try): the debt stays, for the next opener or checkpoint.
    package func rewriteAfterDeletion(waiting: Bool = true, paced: RewritePacing? = nil) -> Bool {
        let ticket = writeGate.requestRewrite()
        do {
            return try writeGate.withLock {
                guard !writeGate.isRewritten(through: ticket) else { return true }
                guard paced.map(writeGate.mayRewriteNow) ?? true, hasRoomToRewrite() else {
                    writeGate.oweFileRewrite()
                    return false
                }
                let covered = writeGate.rewritesRequested
                // The rewrite's pages are in the log and the old ones in the file until the log is cut: owed again
                // here, since a checkpoint may have cut the log, and settled the scrub, since the deletion. (A
                // rewrite that does not happen owes only itself: a disk without room for it stays so, and owing the
                // cut again each time had every checkpoint cut the log, and every command, for nothing.)
                writeGate.oweLogScrub()
                let started = ContinuousClock.now
                defer { writeGate.noteRewriteAttempt(startedAt: started) }
                if waiting { try execute("VACUUM") } else { try withoutWaiting { try execute("VACUUM") } }
                // And again: another process's cut may have settled it while the rewrite waited for its lock.
                writeGate.oweLogScrub()
                writeGate.noteRewritten(through: covered)
                return true
            }
        } catch {
            // Owed again: another process's rewrite may have removed the marker after this deletion made it.
            writeGate.oweFileRewrite()
            return false
        }
    }

    /// Whether the store's disk has room for a rewrite: the log receives every page the database still uses once
    /// (not its free pages: a store emptied by a wipe rewrites in a few pages, and counting the file's size refused
    /// that rewrite on a disk with room for it, leaving the debt for ever). On a full disk a rewrite fails only
    /// after writing a temporary copy of the whole store, and every command that opens the store while the debt
    /// stands would try it again.
    private func hasRoomToRewrite() -> Bool {
        var database = stat()
        var disk = statvfs()
        guard stat(path, &database) == 0, statvfs(path, &disk) == 0 else { return true }
        var needed = Int64(database.st_size)
        if let pages = try? statement("PRAGMA page_count").scalarInt(),
            let free = try? statement("PRAGMA freelist_count").scalarInt(),
            let pageSize = try? statement("PRAGMA page_size").scalarInt()
        {
            needed = min(needed, (pages - free) * pageSize)
        }
        return UInt64(disk.f_bavail) * UInt64(disk.f_frsize) > UInt64(max(0, needed))
    }

    /// Copies the write-ahead log into the database as far as no reader still needs it, without waiting for anyone
    /// and without holding up writers (SQLite's passive checkpoint): what was committed is durable once it returns
    /// (unless another connection's checkpoint was under way: then that one flushes).
    /// What a reader's old snapshot kept from being copied is flushed in the log instead (`syncLog()`): SQLite
    /// flushes the log only to copy it, so an export that reads for minutes would leave every commit meanwhile, each
    /// one acknowledged, in the page cache alone. The log is not truncated; a writer starts it over
    /// from its beginning once it is all copied, and `journal_size_limit` trims it then. For a periodic checkpoint
    /// that must never hold up requests.
    package func checkpointWithoutWaiting() throws(SQLiteError) {
        var logged: Int32 = 0
        var copied: Int32 = 0
        let code = sqlite3_wal_checkpoint_v2(handle, nil, SQLITE_CHECKPOINT_PASSIVE, &logged, &copied)
        guard code == SQLITE_OK || code & 0xFF == SQLITE_BUSY || code & 0xFF == SQLITE_LOCKED else {
            throw error(code, sql: "PRAGMA wal_checkpoint(PASSIVE)")
        }
        guard code == SQLITE_OK && copied < logged else { return }
        // Once for each state of the log: a reader that holds it for minutes is not a flush a second.
        let header = WALIndexHeader(connection: self)?.read()
        guard header == nil || header != logFlushedAt else { return }
        try syncLog()
        logFlushedAt = header
    }

    /// The log's index header when `checkpointWithoutWaiting()` last flushed the log.
    private var logFlushedAt: StoreVersion?

    /// Flushes the write-ahead log to the disk (`fdatasync` on Linux), through SQLite's own file; nothing when this
    /// connection has no log open.
    package func syncLog() throws(SQLiteError) {
        var systemErrorNumber: Int32 = 0
        let code = suggest_sqlite3_sync_log(handle, "main", &systemErrorNumber)
        if code == SQLITE_NOTFOUND { return }
        guard code == SQLITE_OK else {
            throw SQLiteError(
                code: code, message: "cannot flush the write-ahead log to the disk", sql: nil,
                systemErrorNumber: systemErrorNumber)
        }
        ownLogFlushes += 1
    }

    private var ownLogFlushes = 0

    /// How many times this connection flushed its log itself (`syncLog()`, and its hook after commits): what
    /// tests look at, since a flush leaves no other trace.
    package var logFlushes: Int { ownLogFlushes + (logRestartSetting?.flushes ?? 0) }

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

    /// Copies the WAL into the database and truncates it to zero bytes, so that no old page stays on disk in it
    /// (which settles a scrub owed, `owesLogScrub`).
    package func checkpointAndTruncate() throws(SQLiteError) {
        let code = sqlite3_wal_checkpoint_v2(handle, nil, SQLITE_CHECKPOINT_TRUNCATE, nil, nil)
        guard code == SQLITE_OK else { throw error(code, sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
        owesLogScrub = false
    }

    /// Copies the WAL into the database and makes the next write start it over from its first frame, writing over
    /// the file it has instead of truncating it: the log keeps its size (up to `journal_size_limit`), and the writes
    /// that follow reuse its blocks rather than allocate them again.
    package func checkpointAndRestart() throws(SQLiteError) {
        let code = sqlite3_wal_checkpoint_v2(handle, nil, SQLITE_CHECKPOINT_RESTART, nil, nil)
        guard code == SQLITE_OK else { throw error(code, sql: "PRAGMA wal_checkpoint(RESTART)") }
    }
}

@available(*, unavailable)
extension Database: Sendable {}

/// The limit, the mode and the process's gate of a connection's hook after commits.
private final class LogRestartSetting {
    let pages: Int
    let inPlace: Bool
    let gate: WriteGate
    let busyTimeout: Int32
    /// The log flushes the hook made (`Database.logFlushes`).
    var flushes = 0

    init(pages: Int, inPlace: Bool, gate: WriteGate, busyTimeout: Int32) {
        self.pages = pages
        self.inPlace = inPlace
        self.gate = gate
        self.busyTimeout = busyTimeout
    }
}
