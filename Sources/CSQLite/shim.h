#include <errno.h>
#include <sqlite3.h>

/// sqlite3_db_config for the options that take an int and report the setting in effect (SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE
/// and its kind): Swift cannot call a C function with a variable argument list. Returns the setting now in effect, or
/// -1 when SQLite refused the option.
static inline int suggest_sqlite3_db_config_flag(sqlite3 *db, int option, int value) {
    int applied = -1;
    return sqlite3_db_config(db, option, value, &applied) == SQLITE_OK ? applied : -1;
}

/// Turns off SQLite's memory statistics before the library initializes: with them on, every allocation of every
/// connection takes one global mutex, which serializes a server's worker threads. Returns SQLITE_OK, or
/// SQLITE_MISUSE when SQLite was initialized already (the setting then stays as it was).
static inline int suggest_sqlite3_disable_memory_statistics(void) {
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}

/// The first region (32 KiB) of the connection's write-ahead-log index (the `-shm` file) as SQLite itself maps it,
/// through the connection's own VFS file, so under its own file descriptor and locks; NULL when the database is not
/// in WAL mode or the connection has not opened its index yet. The mapping lives as long as the connection. Mapping
/// the file again through a descriptor of one's own would be wrong: closing that descriptor drops every POSIX lock
/// the process holds on the file, SQLite's included, after which another process believes no one has the index
/// open and re-initialises it under this one.
static inline const volatile void *suggest_sqlite3_wal_index(sqlite3 *db) {
    sqlite3_file *file = 0;
    if (sqlite3_file_control(db, "main", SQLITE_FCNTL_FILE_POINTER, &file) != SQLITE_OK || file == 0) return 0;
    if (file->pMethods == 0 || file->pMethods->iVersion < 2 || file->pMethods->xShmMap == 0) return 0;
    volatile void *region = 0;
    if (file->pMethods->xShmMap(file, 0, 32768, 0, &region) != SQLITE_OK) return 0;
    return (const volatile void *)region;
}

/// Whether the connection's database file was deleted, renamed or replaced since it was opened (SQLite compares the
/// file it holds open with what its path names now): 1 if so, 0 if not, -1 when SQLite cannot tell. A process that
/// goes on writing to a deleted store writes to a file nobody will open again.
static inline int suggest_sqlite3_file_has_moved(sqlite3 *db) {
    int moved = 0;
    return sqlite3_file_control(db, "main", SQLITE_FCNTL_HAS_MOVED, &moved) == SQLITE_OK ? (moved != 0) : -1;
}

/// Flushes the connection's write-ahead log to the disk through SQLite's own file (under its descriptor: one of our
/// own, closed, would drop the process's POSIX locks on the file). SQLite flushes the log only when a checkpoint
/// has something to copy, so while another connection reads an old snapshot, which no checkpoint may copy past,
/// every later commit stays in the page cache, lost with the machine's power. Returns SQLITE_OK once flushed,
/// SQLITE_NOTFOUND when the connection has no log open (it has nothing to flush), or the failure, with the
/// system's errno in `*system_errno` (SQLite's own error state does not see a call made straight to its file).
static inline int suggest_sqlite3_sync_log(sqlite3 *db, const char *schema, int *system_errno) {
    sqlite3_file *file = 0;
    *system_errno = 0;
    if (sqlite3_file_control(db, schema, SQLITE_FCNTL_JOURNAL_POINTER, &file) != SQLITE_OK || file == 0 ||
        file->pMethods == 0 || file->pMethods->xSync == 0) {
        return SQLITE_NOTFOUND;
    }
    int code = file->pMethods->xSync(file, SQLITE_SYNC_NORMAL);
    if (code != SQLITE_OK) *system_errno = errno;
    return code;
}
