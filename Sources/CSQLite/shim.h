#include <sqlite3.h>

/// sqlite3_db_config for the options that take an int and report the setting in effect (SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE
/// and its kind): Swift cannot call a C function with a variable argument list. Returns the setting now in effect, or
/// -1 when SQLite refused the option.
static inline int suggest_sqlite3_db_config_flag(sqlite3 *db, int option, int value) {
    int applied = -1;
    return sqlite3_db_config(db, option, value, &applied) == SQLITE_OK ? applied : -1;
}
