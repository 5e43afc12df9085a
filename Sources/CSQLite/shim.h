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
