import CSQLite

/// A prepared statement, prepared once and reused (`sqlite3_prepare_v3` with `SQLITE_PREPARE_PERSISTENT`).
///
/// Not `Sendable`: it belongs to its `Database` connection and is used from one thread at a time.
package final class Statement {
    let handle: OpaquePointer
    let sql: String
    unowned let database: Database

    init(database: Database, sql: String) throws(SQLiteError) {
        var handle: OpaquePointer?
        let code = sqlite3_prepare_v3(database.handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &handle, nil)
        guard code == SQLITE_OK, let handle else { throw database.error(code, sql: sql) }
        self.handle = handle
        self.sql = sql
        self.database = database
    }

    deinit { sqlite3_finalize(handle) }

    /// A value that can be bound to a parameter.
    package enum Value: Sendable, Equatable {
        case null
        case integer(Int64)
        case real(Double)
        case text(String)
        case blob([UInt8])
    }

    /// Clears the previous run and binds the parameters in order (`?1`, `?2`, …).
    @discardableResult
    package func reset(_ values: [Value] = []) throws(SQLiteError) -> Statement {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
        for (index, value) in values.enumerated() { try bind(value, at: Int32(index + 1)) }
        return self
    }

    package func bind(_ value: Value, at index: Int32) throws(SQLiteError) {
        let code: Int32
        switch value {
        case .null: code = sqlite3_bind_null(handle, index)
        case .integer(let number): code = sqlite3_bind_int64(handle, index, number)
        case .real(let number): code = sqlite3_bind_double(handle, index, number)
        case .text(let text):
            // SQLITE_TRANSIENT does not import into Swift: -1 as a destructor means "copy the bytes now".
            code = sqlite3_bind_text(
                handle, index, text, Int32(text.utf8.count), unsafeBitCast(-1, to: sqlite3_destructor_type.self))
        case .blob(let bytes):
            code = bytes.withUnsafeBytes { buffer in
                // An empty array's buffer may have no address, which SQLite would bind as NULL.
                guard let address = buffer.baseAddress, !buffer.isEmpty else {
                    return sqlite3_bind_zeroblob(handle, index, 0)
                }
                return sqlite3_bind_blob(
                    handle, index, address, Int32(buffer.count), unsafeBitCast(-1, to: sqlite3_destructor_type.self))
            }
        }
        guard code == SQLITE_OK else { throw database.error(code, sql: sql) }
    }

    /// Runs one step: `true` when a row is ready to read, `false` when the statement is done.
    package func step() throws(SQLiteError) -> Bool {
        let code = sqlite3_step(handle)
        switch code {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default:
            let error = database.error(code, sql: sql)
            sqlite3_reset(handle)
            throw error
        }
    }

    /// Runs the statement to completion, ignoring any rows.
    package func run(_ values: [Value] = []) throws(SQLiteError) {
        try reset(values)
        while try step() {}
    }

    package func int(_ column: Int32) -> Int64 { sqlite3_column_int64(handle, column) }
    package func double(_ column: Int32) -> Double { sqlite3_column_double(handle, column) }
    package func isNull(_ column: Int32) -> Bool { sqlite3_column_type(handle, column) == SQLITE_NULL }

    package func text(_ column: Int32) -> String? {
        guard let bytes = sqlite3_column_text(handle, column) else { return nil }
        let count = Int(sqlite3_column_bytes(handle, column))
        return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    }

    /// A blob column's bytes, in SQLite's memory: valid until the next step or reset of this statement.
    package func blob(_ column: Int32) -> UnsafeRawBufferPointer {
        let bytes = sqlite3_column_blob(handle, column)
        let count = Int(sqlite3_column_bytes(handle, column))
        return UnsafeRawBufferPointer(start: bytes, count: bytes == nil ? 0 : count)
    }

    /// The first column of the first row, as an integer; `nil` when there is no row.
    package func scalarInt(_ values: [Value] = []) throws(SQLiteError) -> Int64? {
        try reset(values)
        defer { sqlite3_reset(handle) }
        return try step() ? int(0) : nil
    }

    /// The first column of the first row, as text; `nil` when there is no row or it is NULL.
    package func scalarText(_ values: [Value] = []) throws(SQLiteError) -> String? {
        try reset(values)
        defer { sqlite3_reset(handle) }
        return try step() ? text(0) : nil
    }
}

@available(*, unavailable)
extension Statement: Sendable {}
