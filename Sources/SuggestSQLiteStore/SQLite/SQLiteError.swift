import CSQLite

/// A failure reported by SQLite: the extended result code, SQLite's message and the statement that failed.
public struct SQLiteError: Error, Sendable, Equatable, CustomStringConvertible {
    public var code: Int32
    public var message: String
    public var sql: String?
    /// The operating system's `errno` behind an I/O failure (`ENOSPC`, `EROFS`, …), 0 when there is none: SQLite
    /// reports a full disk met while sizing the shared-memory file as a plain "disk I/O error".
    public var systemErrorNumber: Int32

    public init(code: Int32, message: String, sql: String? = nil, systemErrorNumber: Int32 = 0) {
        self.code = code
        self.message = message
        self.sql = sql
        self.systemErrorNumber = systemErrorNumber
    }

    /// The primary result code (`SQLITE_BUSY`, `SQLITE_FULL`, …) without the extended bits.
    public var primaryCode: Int32 { code & 0xFF }

    public var description: String {
        var text = "SQLite error \(code): \(message)"
        if let sql { text += " - while executing `\(sql)`" }
        return text
    }
}
