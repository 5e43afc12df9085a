import CSystem
import SuggestCore

extension StoreError {
    /// Translates a SQLite failure at `path` into words a person can act on.
    static func from(_ error: SQLiteError, path: String) -> StoreError {
        switch error.primaryCode {
        case 26, 11:  // SQLITE_NOTADB, SQLITE_CORRUPT
            return StoreError(.notAStore, "\(path) is not a suggest store or is damaged (\(error.message))")
        case 8, 3, 23:  // SQLITE_READONLY, SQLITE_PERM, SQLITE_AUTH
            return StoreError(.readOnly, "the store at \(path) is read-only (\(error.message)); check its permissions")
        case 13:  // SQLITE_FULL
            return StoreError(.diskFull, "the disk holding \(path) is full; nothing was changed; free some space and retry")
        case 5, 6:  // SQLITE_BUSY, SQLITE_LOCKED
            return StoreError(.busy, "the store at \(path) stayed locked by another process; retry in a moment")
        case 14:  // SQLITE_CANTOPEN
            return StoreError(
                .readOnly, "cannot open the store at \(path) (\(error.message)); check that the directory is writable")
        case 10:  // SQLITE_IOERR
            // A full disk met while sizing the -shm file (SQLITE_IOERR_SHMSIZE) or writing comes as an I/O error;
            // the errno behind it says what it is.
            if error.systemErrorNumber == ENOSPC || error.systemErrorNumber == EDQUOT || error.message.contains("full") {
                return StoreError(.diskFull, "the disk holding \(path) is full; nothing was changed; free some space and retry")
            }
            return StoreError(.failed, "I/O error on the store at \(path): \(error.message)")
        case 12:  // SQLITE_NOTFOUND: what `Database.statement` throws for a file found deleted or moved
            return StoreError(.noSuchStore, error.message)
        default:
            return StoreError(.failed, "the store at \(path) failed: \(error)")
        }
    }
}
