import CSQLite
import CSystem
import SuggestCore
import Synchronization

/// Whether the files a connection writes are still the ones its path names: a store deleted, moved or replaced under
/// a process must not take writes that would be acknowledged, then lost with the file.
extension Database {
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
    final class FileState: Sendable {
        let gone = Atomic<Bool>(false)
        let companions = Mutex<[String: DatabaseFile]>([:])
    }

    /// The files this process's connections have open (once `checkFileInPlace` has seen their paths name them),
    /// with how many connections have each: an entry lasts while one of them is open, which keeps the file's inode
    /// from being given to another file (a store created later with the same number is not taken for a gone one).
    static let openFiles = Mutex<[DatabaseFile: (state: FileState, connections: Int)]>([:])

    /// Whether this connection's file was found deleted or moved under this process (by any of its connections).
    package var isGone: Bool { fileState?.gone.load(ordering: .acquiring) ?? false }

    /// Every statement and every `execute`, in a transaction or not, refuses a file found gone (`isGone`).
    func refuseIfGone() throws(SQLiteError) {
        guard isGone else { return }
        throw SQLiteError(code: SQLITE_NOTFOUND, message: Self.goneError(path).message, systemErrorNumber: 0)
    }

    package static func goneError(_ path: String) -> StoreError {
        StoreError(
            .noSuchStore,
            "the store's database \(path), or its log beside it, was deleted or moved while this process had it open; "
                + "nothing more is read from it or recorded in it (restart with the store in place)")
    }
}
