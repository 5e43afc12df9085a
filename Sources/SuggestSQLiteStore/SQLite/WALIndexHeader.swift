import CSystem
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
/// The mapping stays valid as long as one connection of this process keeps the database open: SQLite truncates
/// and re-initialises the file only when the first connection of all opens it, and deletes it only when the last
/// one closes.
final class WALIndexHeader: @unchecked Sendable {
    /// The two copies of the header, 48 bytes each, at the start of the file.
    private static let copyBytes = 48
    private static let mappedBytes = 4_096

    private let base: UnsafeRawPointer

    /// Maps the index of the database at `databasePath`, which a connection of this process must have open, in
    /// write-ahead-log mode, and have read from once; `nil` when it cannot (another locking mode, a file that is not
    /// there or too short).
    init?(databasePath: String) {
        let descriptor = system_open(databasePath + "-shm", O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0, info.st_size >= 2 * Self.copyBytes else { return nil }
        // `MAP_FAILED` is a cast in C, which Swift does not import: it is all bits set.
        guard let mapped = mmap(nil, Self.mappedBytes, PROT_READ, MAP_SHARED, descriptor, 0),
            Int(bitPattern: mapped) != -1
        else { return nil }
        base = UnsafeRawPointer(mapped)
    }

    deinit { munmap(UnsafeMutableRawPointer(mutating: base), Self.mappedBytes) }

    /// The header now, or `nil` while a writer is rewriting it (the copies differ) or before it was ever written.
    func read() -> StoreVersion? {
        let first = Self.load(base)
        atomicMemoryFence(ordering: .acquiring)
        let second = Self.load(base + Self.copyBytes)
        // Byte 12 is `isInit`, set in every header a connection wrote.
        guard first == second, (first[1] >> 32) & 0xFF != 0 else { return nil }
        return first
    }

    /// One copy of the header as six words (the last two lanes zero).
    private static func load(_ copy: UnsafeRawPointer) -> StoreVersion {
        var words = StoreVersion()
        for index in 0..<6 { words[index] = copy.loadUnaligned(fromByteOffset: index * 8, as: UInt64.self) }
        return words
    }
}
