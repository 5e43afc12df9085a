import CSQLite

/// A failure reported by SQLite: the extended result code, SQLite's message and the statement that failed.
package struct SQLiteError: Error, Sendable, Equatable, CustomStringConvertible {
    package var code: Int32
    package var message: String
    package var sql: String?
    /// The operating system's `errno` behind an I/O failure (`ENOSPC`, `EROFS`, …), 0 when there is none: SQLite
    /// reports a full disk met while sizing the shared-memory file as a plain "disk I/O error".
    package var systemErrorNumber: Int32

    package init(code: Int32, message: String, sql: String? = nil, systemErrorNumber: Int32 = 0) {
        self.code = code
        self.message = message
        self.sql = sql
        self.systemErrorNumber = systemErrorNumber
    }

    /// The primary result code (`SQLITE_BUSY`, `SQLITE_FULL`, …) without the extended bits.
    package var primaryCode: Int32 { code & 0xFF }

    package var description: String {
        var text = "SQLite error \(code): \(message)"
        if let sql { text += " - while executing `\(sql)`" }
        return text
    }
}
