import CSystem
import SuggestCore

extension StoreError {
    /// Whether the process may write files no larger than some limit (`RLIMIT_FSIZE`), and the database or its log
    /// is within a page (64 KiB at most) of it.
    private static func reachedFileSizeLimit(database path: String) -> Bool {
        let limit = system_byte_limit(Int32(RLIMIT_FSIZE.rawValue))
        guard limit >= 0 else { return false }
        return [path, path + "-wal"].contains { file in
            var info = stat()
            return stat(file, &info) == 0 && Int64(info.st_size) + 65_536 >= limit
        }
    }

    /// Translates a SQLite failure at `path` into words a person can act on.
    package static func from(_ error: SQLiteError, path: String) -> StoreError {
        switch error.primaryCode {
        case 26, 11:  // SQLITE_NOTADB, SQLITE_CORRUPT
            return StoreError(.notAStore, "\(path) is not a suggest store or is damaged (\(error.message))")
        case 8, 3, 23:  // SQLITE_READONLY, SQLITE_PERM, SQLITE_AUTH
            if let problem = fileProblem(database: path) {
                return StoreError(.readOnly, "the store at \(path) is read-only: \(problem)")
            }
            return StoreError(.readOnly, "the store at \(path) is read-only (\(error.message)); check its permissions")
        case 13:  // SQLITE_FULL
            return StoreError(.diskFull, "the disk holding \(path) is full; nothing was changed; free some space and retry")
        case 5, 6:  // SQLITE_BUSY, SQLITE_LOCKED
            // An import is waited for while it goes on; one that stood still longer than that is most likely
            // waiting for its input (a pipe whose writer paused), with the lock held all the while.
            if let seconds = ImportMarker(databasePath: path).secondsSinceWentOn, seconds >= 0 {
                let standing =
                    seconds < ImportMarker.standstill
                    ? "" : ", which has not gone on for \(Int(seconds.rounded())) s (is it waiting for its input?)"
                return StoreError(
                    .busy,
                    "the store at \(path) stayed locked by an import in another process\(standing); retry when it has "
                        + "ended")
            }
            return StoreError(.busy, "the store at \(path) stayed locked by another process; retry in a moment")
        case 14:  // SQLITE_CANTOPEN
            // Out of file descriptors is this moment's trouble, not the store's: a server at its limit of open files
            // reported a read-only store (and counted it so) for a GET.
            if error.systemErrorNumber == EMFILE || error.systemErrorNumber == ENFILE {
                return StoreError(
                    .unavailable,
                    "cannot open the store at \(path) now: too many files are open (\(ErrorNumber.describe(error.systemErrorNumber))); retry in a moment")
            }
            if let problem = fileProblem(database: path) {
                return StoreError(.readOnly, "cannot open the store at \(path): \(problem)")
            }
            return StoreError(
                .readOnly, "cannot open the store at \(path) (\(error.message)); check that the directory is writable")
        case 10:  // SQLITE_IOERR
            // A full disk met while sizing the -shm file (SQLITE_IOERR_SHMSIZE) or writing comes as an I/O error;
            // the errno behind it says what it is.
            if error.systemErrorNumber == ENOSPC || error.systemErrorNumber == EDQUOT || error.message.contains("full") {
                return StoreError(.diskFull, "the disk holding \(path) is full; nothing was changed; free some space and retry")
            }
            // A file-size limit (`ulimit -f`, a unit's LimitFSIZE) is room that has run out as well, and said so: as an
            // I/O error it read as a failing disk. SQLite's record of the errno is read after other calls have set it
            // again (0 here), so a write's failure is taken for the limit's when a file of the store is within a
            // page of it.
            let failedWrite = error.code == 778  // SQLITE_IOERR_WRITE
            if error.systemErrorNumber == EFBIG || (failedWrite && reachedFileSizeLimit(database: path)) {
                return StoreError.fileSizeLimit(
                    "the store at \(path) reached the largest file this process may write (\(fileSizeLimitWords): "
                        + "ulimit -f, LimitFSIZE); nothing was changed; raise the limit and retry")
            }
            return StoreError(.failed, "I/O error on the store at \(path): \(error.message)")
        case 12:  // SQLITE_NOTFOUND: what `Database.statement` throws for a file found deleted or moved
            return StoreError(.noSuchStore, error.message)
        case 15:  // SQLITE_PROTOCOL: a lock of the log's index in a state its users disagree on (not a moment's wait)
            return StoreError(
                .failed,
                "the store at \(path) could not be locked (SQLite's locking protocol failed); retry, and if it goes "
                    + "on, stop every process that uses the store and start them again")
        default:
            return StoreError(.failed, "the store at \(path) failed: \(error)")
        }
    }

    /// Which of the store's files SQLite could not open or write, and why, in words that name it: the database,
    /// its log and the log's index, then the directory they are made in. `nil` when each looks usable to this
    /// process. SQLite says only "unable to open database file" or "readonly", and the advice to check the
    /// directory sent people to a directory that was fine when one file was not.
    static func fileProblem(database: String) -> String? {
        let directory = StoreLocation.parent(of: database)
        func reason() -> String { ErrorNumber.describeLast() }
        for file in [database, database + "-wal", database + "-shm"] {
            // The database may be a link to the file (a store moved to another disk); its log and index may not.
            var info = stat()
            guard (file == database ? stat(file, &info) : lstat(file, &info)) == 0 else { continue }
            if system_is_regular_file(info.st_mode) == 0 {
                let what =
                    system_is_directory(info.st_mode) != 0
                    ? "a directory" : system_is_symbolic_link(info.st_mode) != 0 ? "a symbolic link" : "not a regular file"
                return "\(file) is \(what), where the store keeps a file of its own; move it away"
            }
            if access(file, R_OK | W_OK) != 0 {
                if system_errno() == EROFS { return "\(file) is on a read-only file system" }
                return "\(file) is not readable and writable by this user (\(reason())); check its permissions and owner"
            }
        }
        // Every file there is usable: one that is missing (the log, its index) could not be made.
        if access(directory, W_OK | X_OK) != 0 {
            return "its directory \(directory) is not writable by this user (\(reason())), and a file the store needs "
                + "is missing; check the directory's permissions"
        }
        return nil
    }
}
