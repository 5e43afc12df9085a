import CSQLite
import CSystem
import SuggestCore

/// The write-ahead log's checkpoints, flushes and restarts, and the rewrite of the file after a deletion.
extension Database {
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
        let setting = LogRestartSetting(
            pages: max(1, pages), inPlace: inPlace, gate: writeGate, busyTimeout: busyTimeout)
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

    /// Why what a deletion still owes (`owesLogScrub`, `owesFileRewrite`) is known to this process alone: the marker
    /// that tells every other process could not be made. `nil` when nothing is owed, or the marker is there.
    package var unnotedCleanup: String? { writeGate.unnotedDebt }

    /// Why a marker of a debt this process settled is still beside the database, so that every process redoes the
    /// work: it could not be removed. `nil` once one is removed, or none was left.
    package var stuckCleanupMarker: String? { writeGate.stuckMarker }

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

    /// How many times this connection flushed its log itself (`syncLog()`, and its hook after commits): what
    /// tests look at, since a flush leaves no other trace.
    package var logFlushes: Int { ownLogFlushes + (logRestartSetting?.flushes ?? 0) }

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

/// The limit, the mode and the process's gate of a connection's hook after commits.
final class LogRestartSetting {
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
