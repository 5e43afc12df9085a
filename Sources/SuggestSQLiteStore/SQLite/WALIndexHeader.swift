import CSQLite
import Synchronization

/// The header of a database's write-ahead log index (the `-shm` file), read from memory: the cheap way to know
/// whether anything was committed since a moment, without a read transaction.
///
/// Every commit, and every restart of the log, rewrites this header (its change counter, frame count and salts;
/// https://www.sqlite.org/walformat.html, "The WAL-Index Header"), and a new transaction sees the commit only once
/// the header says so. SQLite itself decides whether its page cache is still good by comparing this header with
/// the one it read last, which is what `PRAGMA data_version` reports; but that pragma runs a read transaction
/// (three `fcntl` locks and two `fstat`s). Here the same bytes are read straight from a shared read-only mapping
/// of the file, as SQLite reads them: the two copies a writer stores (the second, then the first) are read in the
/// other order, and a header is taken only when both agree, so a reader never takes half of a rewrite for a
/// header that was committed.
///
/// The header is read through the mapping SQLite made for `connection` itself (`suggest_sqlite3_wal_index`), valid
/// as long as that connection is open: the caller keeps both together. Not through a mapping of its own: closing a
/// descriptor of the file would drop the process's POSIX locks on it, SQLite's among them.
final class WALIndexHeader {
    /// The two copies of the header, 48 bytes each, at the start of the file.
    private static let copyBytes = 48

    private let base: UnsafeRawPointer

    /// The index of `connection`'s database, which must be in write-ahead-log mode and have been read from once;
    /// `nil` when it cannot (another journal mode, a VFS without shared memory, no index yet).
    init?(connection: Database) {
        guard let mapped = suggest_sqlite3_wal_index(connection.handle) else { return nil }
        base = UnsafeRawPointer(mapped)
    }

    /// The header now, or `nil` while a writer is rewriting it (the copies differ) or before it was ever written.
    func read() -> StoreVersion? {
        let first = Self.load(base)
        atomicMemoryFence(ordering: .acquiring)
        let second = Self.load(base + Self.copyBytes)
        // Byte 12 is `isInit`, set in every header a connection wrote.
        guard first == second, (first[1] >> 32) & 0xFF != 0 else { return nil }
        return first
    }

    /// The frames in the log, every process's commits counted, from its start over if it was started over: the
    /// header's `mxFrame` (bytes 16 to 19). `nil` while a writer is rewriting the header.
    var frames: Int? { read().map { Int(UInt32(truncatingIfNeeded: $0[2])) } }

    /// The frames of the log not yet copied into the database: `frames` less the checkpoints' `nBackfill`, which
    /// follows the two copies of the header (byte 96, https://www.sqlite.org/walformat.html, "The WAL-Index
    /// Header"). `nil` while a writer is rewriting the header.
    var framesNotCopied: Int? {
        guard let frames else { return nil }
        atomicMemoryFence(ordering: .acquiring)
        let copied = Int(base.loadUnaligned(fromByteOffset: 2 * Self.copyBytes, as: UInt32.self))
        return max(0, frames - copied)
    }

    /// One copy of the header as six words (the last two lanes zero).
    private static func load(_ copy: UnsafeRawPointer) -> StoreVersion {
        var words = StoreVersion()
        for index in 0..<6 { words[index] = copy.loadUnaligned(fromByteOffset: index * 8, as: UInt64.self) }
        return words
    }
}
