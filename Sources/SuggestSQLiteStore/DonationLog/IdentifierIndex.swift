import SuggestCore

/// Which block holds each donation identifier, for one write transaction: duplicates are found and deletion by
/// identifier finds its donation through it.
///
/// Stored in `donation_identifiers` as rows that list (key, block) pairs, by the identifier's 64-bit key
/// (`StableHash.key(account, identifier)`), in two levels:
/// - **Buckets**, rows 0 to 65,535: the entries whose key's top 16 bits are the row's number, 11 bytes each (the
///   key's other 48 bits and the block id's low 40, a trillion blocks, little-endian). An index with an entry per
///   donation cost a 10M import 12 s to build at its end; the same keys in buckets are 65,536 rows of about 1.7 KB
///   at 10M, written once.
/// - **Recent rows**, 4,096 past the buckets (`firstRecentRow`): the entries added since their range of 16 buckets
///   (the keys whose top 12 bits are the range's number) was last merged into those buckets, 12 bytes each (the
///   key's low 56 bits). A write adds to these, and merges a range into its buckets when its recent row reaches
///   `mergeSize` entries.
///
/// Keys are hashes, so a write's entries land all over the buckets: a server's write of 60,000 donations met 40,000
/// of the 65,536 buckets, and rewrote almost every page of them (11 MB at 1M donations, 110 MB at 10M) to add
/// 660 KB. Through the recent rows it rewrites those rows (about 3 MB at 1M donations, 10 MB at 10M, 16 MB at most)
/// and the ranges that fill up.
///
/// Keys are not unique (two identifiers can share one, once in billions): a key only names the blocks to look in,
/// and the caller compares the identifier's bytes there. The lists are multisets for the same reason: two
/// identifiers with one key in one block are two entries.
final class IdentifierIndex {
    struct Entry: Equatable {
        var key: Int64
        var block: Int64
    }

    private let database: Database
    /// The entries added since the last `write()`, merged there into their recent rows, each row read and written
    /// once. Look-ups read the stored rows and these, so that a transaction holds what it adds, not the rows it
    /// meets.
    private var additions: [Entry] = []
    /// The block of each key in `additions` (`IdentifierIndex.severalBlocks` when more than one entry has the key),
    /// for a transaction that looks up every key it adds; `nil` after `collectAdditions`, whose caller keeps its
    /// own table of keys and looks up here only a key that two identifiers share (once in billions).
    private var addedBlocks: [Int64: Int64]? = [:]
    private static let severalBlocks: Int64 = -1
    /// The rows a deletion changed, whole, by row number. An index either adds entries or removes them.
    private var changedRows: [Int64: [Entry]] = [:]

    init(database: Database) { self.database = database }

    /// The bucket that lists `key` once merged: its top 16 bits.
    static func bucket(of key: Int64) -> Int64 { Int64(UInt64(bitPattern: key) >> 48) }

    /// The range of 16 buckets that holds `key`: its top 12 bits.
    static func range(of key: Int64) -> Int64 { Int64(UInt64(bitPattern: key) >> 52) }

    /// The row of the first range's recent entries; range r's is `firstRecentRow + r`.
    static let firstRecentRow: Int64 = 1 << 16
    /// One past the last row.
    static let rowLimit: Int64 = firstRecentRow + 1 << 12

    /// The row of the recent entries of `key`'s range.
    static func recentRow(of key: Int64) -> Int64 { firstRecentRow + range(of: key) }

    /// How many recent entries a range gathers before they are merged into its 16 buckets: the square root of the
    /// store's size over 16 (62 at 1M donations, 197 at 10M), from 32 to 320 (a row within one 4 KB page).
    ///
    /// A merge rewrites the range's buckets, 16 × S / 65,536 entries for a store of S donations, and a large write
    /// rewrites every recent row, 4,096 × k / 2 entries on average for a limit of k. A write of W donations costs
    /// about 4,096 × k / 2 + (W / k) × 16 × S / 65,536 entries rewritten, least at k = √(W × S / 8.4M): the limit
    /// follows the store's square root, and 1/16 of it is the best for writes of about 33,000 donations.
    static func mergeSize(storeSize: Int) -> Int {
        min(320, max(32, Int(Double(max(storeSize, 0)).squareRoot() / 16)))
    }

    /// The blocks listed for `key`, one per entry.
    func blocks(for key: Int64) throws(SQLiteError) -> [Int64] {
        // A loop that allocates only for a match: most look-ups (every new donation) find nothing.
        var blocks: [Int64] = []
        // The recent row first: outside a transaction, another process's merge between the two reads can then
        // only list a block twice, never hide it.
        try appendBlocks(of: key, in: Self.recentRow(of: key), to: &blocks)
        try appendBlocks(of: key, in: Self.bucket(of: key), to: &blocks)
        let added = addedBlocks.map { $0[key] }
        if let added, added != Self.severalBlocks {
            if let block = added { blocks.append(block) }
        } else {
            // No table of the keys added, or several entries of this key in it: the list is read.
            for entry in additions where entry.key == key { blocks.append(entry.block) }
        }
        return blocks
    }

    private func appendBlocks(of key: Int64, in row: Int64, to blocks: inout [Int64]) throws(SQLiteError) {
        if let changed = changedRows[row] {
            for entry in changed where entry.key == key { blocks.append(entry.block) }
        } else {
            try withStoredRow(row) { stored in
                for index in 0..<stored.count / Self.entrySize(inRow: row)
                where Self.key(at: index, in: stored, row: row) == key {
                    blocks.append(Self.entry(at: index, in: stored, row: row).block)
                }
            }
        }
    }

    func add(_ key: Int64, block: Int64) {
        precondition(changedRows.isEmpty, "an index that removes entries does not add any")
        additions.append(Entry(key: key, block: block))
        if addedBlocks != nil {
            addedBlocks![key] = addedBlocks![key] == nil ? block : Self.severalBlocks
        }
    }

    /// Removes one entry of `key` in `block`, if there is one: from its bucket, else from its range's recent row.
    func remove(_ key: Int64, block: Int64) throws(SQLiteError) {
        precondition(additions.isEmpty, "an index that adds entries does not remove any")
        for row in [Self.bucket(of: key), Self.recentRow(of: key)] {
            if changedRows[row] == nil { changedRows[row] = try storedEntries(row) }
            if let index = changedRows[row]!.firstIndex(of: Entry(key: key, block: block)) {
                changedRows[row]!.remove(at: index)
                return
            }
        }
    }

    /// Calls `body` with every stored entry, for a large import that holds every key in memory; from then on,
    /// additions are only collected until `write()` (`collectAdditions`).
    /// - Parameter expectedAdditions: how many entries the import may add, made room for at once.
    /// - Throws: `StoreError.notAStore` for a row that is neither a bucket nor a recent row.
    func loadAll(expectedAdditions: Int, _ body: (Entry) -> Void) throws {
        let select = try database.uncachedStatement("SELECT bucket, entries FROM donation_identifiers")
        while try select.step() {
            let row = select.int(0)
            guard (0..<Self.rowLimit).contains(row) else {
                throw StoreError(.notAStore, "a stored bucket of identifiers is damaged; the store needs repair")
            }
            let entries = select.blob(1)
            for index in 0..<entries.count / Self.entrySize(inRow: row) {
                body(Self.entry(at: index, in: entries, row: row))
            }
        }
        collectAdditions(expected: expectedAdditions)
    }

    /// How many entries are stored, from the rows' lengths alone.
    static func storedCount(in database: Database) throws(SQLiteError) -> Int {
        let sum = try database.statement(
            """
            SELECT COALESCE(SUM(length(entries) / CASE WHEN bucket < \(firstRecentRow)
                THEN \(entrySize(inRow: 0)) ELSE \(entrySize(inRow: firstRecentRow)) END), 0)
            FROM donation_identifiers
            """
        ).scalarInt()
        return Int(sum ?? 0)
    }

    /// From now on, keeps additions in the list only, without a table of their keys: for a caller that adds
    /// millions and keeps its own table (a large import, the migration to blocks).
    func collectAdditions(expected: Int) {
        addedBlocks = nil
        additions.reserveCapacity(expected)
    }

    /// How many additions wait for `write()`.
    var collectedAdditions: Int { additions.count }

    /// About how much memory the additions take until `write()`: each in the list, and in the table of keys when
    /// there is one (a `[Int64: Int64]` holds its 16 bytes at up to three quarters full).
    var heldBytes: Int {
        additions.count * (MemoryLayout<Entry>.stride + (addedBlocks == nil ? 0 : 24))
    }

    /// Writes what was added into the recent rows, merging each range that reaches `mergeSize` into its buckets, and
    /// the rows a deletion changed; forgets what was added or removed. Call once before committing, or whenever the
    /// additions collected take too much memory.
    /// - Parameter storeSize: about how many donations the store holds, for `mergeSize` (any number when the index
    ///   only removed entries).
    func write(storeSize: Int) throws(SQLiteError) {
        let added = additions
        additions = []
        if addedBlocks != nil { addedBlocks = [:] }
        let mergeSize = Self.mergeSize(storeSize: storeSize)
        for (range, entries) in Self.byRange(added) {
            // Merged, written and let go one range at a time.
            let row = Self.firstRecentRow + range
            let recent = try storedEntries(row) + entries
            guard recent.count >= mergeSize else {
                try write(recent, to: row)
                continue
            }
            for (bucket, entries) in Self.byBucket(recent) {
                try write(try storedEntries(bucket) + entries, to: bucket)
            }
            try write([], to: row)
        }
        for (row, entries) in changedRows { try write(entries, to: row) }
        changedRows.removeAll()
    }

    private func write(_ entries: [Entry], to row: Int64) throws(SQLiteError) {
        if entries.isEmpty {
            try database.statement("DELETE FROM donation_identifiers WHERE bucket = ?").run([.integer(row)])
        } else {
            let sorted = entries.sorted { $0.key < $1.key || ($0.key == $1.key && $0.block < $1.block) }
            try database.statement("INSERT OR REPLACE INTO donation_identifiers(bucket, entries) VALUES (?, ?)")
                .run([.integer(row), .blob(Self.encode(sorted, row: row))])
        }
    }

    private func storedEntries(_ row: Int64) throws(SQLiteError) -> [Entry] {
        var entries: [Entry] = []
        try withStoredRow(row) { entries = Self.decode($0, row: row) }
        return entries
    }

    /// Calls `body` with the bytes of a stored row (empty when there is none), valid for the call only.
    private func withStoredRow(_ row: Int64, _ body: (UnsafeRawBufferPointer) -> Void) throws(SQLiteError) {
        let select = try database.statement("SELECT entries FROM donation_identifiers WHERE bucket = ?")
        try select.reset([.integer(row)])
        defer { _ = try? select.reset() }
        body(try select.step() ? select.blob(0) : UnsafeRawBufferPointer(start: nil, count: 0))
    }

    /// The largest block id an entry holds (40 bits).
    static let largestBlock: Int64 = 1 << 40 - 1

    /// The bytes of a key an entry of `row` holds: the bits its row's number does not give, rounded up to bytes.
    private static func keyBytes(inRow row: Int64) -> Int { row < firstRecentRow ? 6 : 7 }

    static func entrySize(inRow row: Int64) -> Int { keyBytes(inRow: row) + 5 }

    /// The blob of a row's entries (all of the row's bucket or range).
    private static func encode(_ entries: [Entry], row: Int64) -> [UInt8] {
        let keyBytes = keyBytes(inRow: row)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(entries.count * entrySize(inRow: row))
        for entry in entries {
            withUnsafeBytes(of: UInt64(bitPattern: entry.key).littleEndian) {
                bytes.append(contentsOf: $0.prefix(keyBytes))
            }
            withUnsafeBytes(of: UInt64(bitPattern: entry.block).littleEndian) { bytes.append(contentsOf: $0.prefix(5)) }
        }
        return bytes
    }

    /// The entries of a row's blob; a trailing partial entry (a damaged row) is ignored.
    private static func decode(_ bytes: UnsafeRawBufferPointer, row: Int64) -> [Entry] {
        (0..<bytes.count / entrySize(inRow: row)).map { entry(at: $0, in: bytes, row: row) }
    }

    /// The key of the entry at `index`, without its block: the row's number gives its top bits, the entry the rest.
    private static func key(at index: Int, in bytes: UnsafeRawBufferPointer, row: Int64) -> Int64 {
        let (top, lowBits) =
            row < firstRecentRow ? (UInt64(row) << 48, 48) : (UInt64(row - firstRecentRow) << 52, 52)
        var low: UInt64 = 0
        let start = index * entrySize(inRow: row)
        for byte in 0..<keyBytes(inRow: row) { low |= UInt64(bytes[start + byte]) << (8 * byte) }
        return Int64(bitPattern: top | low & (1 << lowBits - 1))
    }

    private static func entry(at index: Int, in bytes: UnsafeRawBufferPointer, row: Int64) -> Entry {
        var block: UInt64 = 0
        let start = index * entrySize(inRow: row) + keyBytes(inRow: row)
        for byte in 0..<5 { block |= UInt64(bytes[start + byte]) << (8 * byte) }
        return Entry(key: key(at: index, in: bytes, row: row), block: Int64(block))
    }

    /// Entries grouped by range, in range order: many by a counting sort (millions of them in two passes), a few by
    /// sorting them (a transaction of one donation need not fill a table of 4,096 counts).
    static func byRange(_ entries: [Entry]) -> [(range: Int64, entries: ArraySlice<Entry>)] {
        guard entries.count >= 1 << 12 else {
            return grouped(entries, by: range(of:)).map { (range: $0.group, entries: $0.entries) }
        }
        var starts = [Int](repeating: 0, count: (1 << 12) + 1)
        for entry in entries { starts[Int(range(of: entry.key)) + 1] += 1 }
        for index in 1..<starts.count { starts[index] += starts[index - 1] }
        var next = starts
        var grouped = [Entry](repeating: Entry(key: 0, block: 0), count: entries.count)
        for entry in entries {
            let range = Int(range(of: entry.key))
            grouped[next[range]] = entry
            next[range] += 1
        }
        var result: [(range: Int64, entries: ArraySlice<Entry>)] = []
        for range in 0..<(1 << 12) where starts[range] < starts[range + 1] {
            result.append((Int64(range), grouped[starts[range]..<starts[range + 1]]))
        }
        return result
    }

    /// Entries grouped by bucket, in bucket order.
    static func byBucket(_ entries: [Entry]) -> [(bucket: Int64, entries: ArraySlice<Entry>)] {
        grouped(entries, by: bucket(of:)).map { (bucket: $0.group, entries: $0.entries) }
    }

    /// Entries grouped by `group` (a function of the key's top bits), in order of the group, by sorting them.
    private static func grouped(
        _ entries: [Entry], by group: (Int64) -> Int64
    ) -> [(group: Int64, entries: ArraySlice<Entry>)] {
        let sorted = entries.sorted { group($0.key) < group($1.key) }
        var result: [(group: Int64, entries: ArraySlice<Entry>)] = []
        var start = 0
        while start < sorted.count {
            let number = group(sorted[start].key)
            var end = start + 1
            while end < sorted.count && group(sorted[end].key) == number { end += 1 }
            result.append((number, sorted[start..<end]))
            start = end
        }
        return result
    }
}
