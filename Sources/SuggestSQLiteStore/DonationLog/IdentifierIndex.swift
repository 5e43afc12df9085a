import SuggestCore

/// Which block holds each donation identifier, for one write transaction: duplicates are found and deletion by
/// identifier finds its donation through it.
///
/// Stored in `donation_identifiers` as 65,536 buckets by the top 16 bits of the identifier's 64-bit key
/// (`StableHash.key(account, identifier)`), each one row whose blob lists (key, block id) pairs sorted, 11 bytes
/// each: the key's other 48 bits and the block id's low 40 (a trillion blocks), little-endian. An index with an entry
/// per donation cost a 10M import 12 s to build at its end; the same keys in buckets are 65,536 rows of about
/// 1.7 KB at 10M, written once, and `donate` reads and rewrites one of them.
///
/// Keys are not unique (two identifiers can share one, once in billions): a key only names the blocks to look in,
/// and the caller compares the identifier's bytes there. The list is a multiset for the same reason: two
/// identifiers with one key in one block are two entries.
final class IdentifierIndex {
    struct Entry: Equatable {
        var key: Int64
        var block: Int64
    }

    private let database: Database
    /// The entries added since the last `write()`, merged there into their buckets, each bucket read and written
    /// once. Look-ups read the stored bucket and these, so that a transaction holds what it adds, not the buckets
    /// it meets: a window of 64,000 donations meets 40,000 of the 65,536 buckets, each of about 150 entries at 10M.
    private var additions: [Entry] = []
    /// The block of each key in `additions` (`IdentifierIndex.severalBlocks` when more than one entry has the key),
    /// for a transaction that looks up every key it adds; `nil` after `collectAdditions`, whose caller keeps its
    /// own table of keys and looks up here only a key that two identifiers share (once in billions).
    private var addedBlocks: [Int64: Int64]? = [:]
    private static let severalBlocks: Int64 = -1
    /// The buckets a deletion changed, whole, by bucket number. An index either adds entries or removes them.
    private var changedBuckets: [Int64: [Entry]] = [:]

    init(database: Database) { self.database = database }

    static func bucket(of key: Int64) -> Int64 { Int64(UInt64(bitPattern: key) >> 48) }

    /// The blocks listed for `key`, one per entry.
    func blocks(for key: Int64) throws(SQLiteError) -> [Int64] {
        // A loop that allocates only for a match: most look-ups (every new donation) find nothing.
        var blocks: [Int64] = []
        let bucket = Self.bucket(of: key)
        if let changed = changedBuckets[bucket] {
            for entry in changed where entry.key == key { blocks.append(entry.block) }
        } else {
            try withStoredBucket(bucket) { stored in
                for index in 0..<stored.count / Self.entrySize
                where Self.key(at: index, in: stored, bucket: bucket) == key {
                    blocks.append(Self.entry(at: index, in: stored, bucket: bucket).block)
                }
            }
        }
        let added = addedBlocks.map { $0[key] }
        if let added, added != Self.severalBlocks {
            if let block = added { blocks.append(block) }
        } else {
            // No table of the keys added, or several entries of this key in it: the list is read.
            for entry in additions where entry.key == key { blocks.append(entry.block) }
        }
        return blocks
    }

    func add(_ key: Int64, block: Int64) {
        precondition(changedBuckets.isEmpty, "an index that removes entries does not add any")
        additions.append(Entry(key: key, block: block))
        if addedBlocks != nil {
            addedBlocks![key] = addedBlocks![key] == nil ? block : Self.severalBlocks
        }
    }

    /// Removes one entry of `key` in `block`, if there is one.
    func remove(_ key: Int64, block: Int64) throws(SQLiteError) {
        precondition(additions.isEmpty, "an index that adds entries does not remove any")
        let bucket = Self.bucket(of: key)
        if changedBuckets[bucket] == nil { changedBuckets[bucket] = try storedEntries(bucket) }
        guard let index = changedBuckets[bucket]!.firstIndex(of: Entry(key: key, block: block)) else { return }
        changedBuckets[bucket]!.remove(at: index)
    }

    /// Calls `body` with every stored entry, for a large import that holds every key in memory; from then on,
    /// additions are only collected until `write()` (`collectAdditions`).
    /// - Parameter expectedAdditions: how many entries the import may add, made room for at once.
    /// - Throws: `StoreError.notAStore` for a row that is not a bucket.
    func loadAll(expectedAdditions: Int, _ body: (Entry) -> Void) throws {
        let select = try database.uncachedStatement("SELECT bucket, entries FROM donation_identifiers")
        while try select.step() {
            let bucket = select.int(0)
            guard (0..<(1 << 16)).contains(bucket) else {
                throw StoreError(.notAStore, "a stored bucket of identifiers is damaged; the store needs repair")
            }
            let entries = select.blob(1)
            for index in 0..<entries.count / Self.entrySize { body(Self.entry(at: index, in: entries, bucket: bucket)) }
        }
        collectAdditions(expected: expectedAdditions)
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

    /// Writes the changed buckets back, and forgets what was added or removed. Call once before committing, or
    /// whenever the additions collected take too much memory.
    func write() throws(SQLiteError) {
        let added = additions
        additions = []
        if addedBlocks != nil { addedBlocks = [:] }
        for (number, entries) in Self.byBucket(added) {
            // Merged, written and let go one bucket at a time.
            try write(try storedEntries(number) + entries, to: number)
        }
        for (number, entries) in changedBuckets { try write(entries, to: number) }
        changedBuckets.removeAll()
    }

    private func write(_ entries: [Entry], to bucket: Int64) throws(SQLiteError) {
        if entries.isEmpty {
            try database.statement("DELETE FROM donation_identifiers WHERE bucket = ?").run([.integer(bucket)])
        } else {
            let sorted = entries.sorted { $0.key < $1.key || ($0.key == $1.key && $0.block < $1.block) }
            try database.statement("INSERT OR REPLACE INTO donation_identifiers(bucket, entries) VALUES (?, ?)")
                .run([.integer(bucket), .blob(Self.encode(sorted))])
        }
    }

    private func storedEntries(_ bucket: Int64) throws(SQLiteError) -> [Entry] {
        var entries: [Entry] = []
        try withStoredBucket(bucket) { entries = Self.decode($0, bucket: bucket) }
        return entries
    }

    /// Calls `body` with the bytes of a stored bucket (empty when it has no row), valid for the call only.
    private func withStoredBucket(_ bucket: Int64, _ body: (UnsafeRawBufferPointer) -> Void) throws(SQLiteError) {
        let select = try database.statement("SELECT entries FROM donation_identifiers WHERE bucket = ?")
        try select.reset([.integer(bucket)])
        defer { _ = try? select.reset() }
        body(try select.step() ? select.blob(0) : UnsafeRawBufferPointer(start: nil, count: 0))
    }

    static let entrySize = 11
    /// The largest block id an entry holds (40 bits).
    static let largestBlock: Int64 = 1 << 40 - 1

    /// The blob of a bucket's entries (all of one bucket).
    private static func encode(_ entries: [Entry]) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(entries.count * entrySize)
        for entry in entries {
            withUnsafeBytes(of: UInt64(bitPattern: entry.key).littleEndian) { bytes.append(contentsOf: $0.prefix(6)) }
            withUnsafeBytes(of: UInt64(bitPattern: entry.block).littleEndian) { bytes.append(contentsOf: $0.prefix(5)) }
        }
        return bytes
    }

    /// The entries of a bucket's blob; a trailing partial entry (a damaged row) is ignored.
    private static func decode(_ bytes: UnsafeRawBufferPointer, bucket: Int64) -> [Entry] {
        (0..<bytes.count / entrySize).map { entry(at: $0, in: bytes, bucket: bucket) }
    }

    /// The key of the entry at `index`, without its block.
    private static func key(at index: Int, in bytes: UnsafeRawBufferPointer, bucket: Int64) -> Int64 {
        var key = UInt64(bucket) << 48
        let start = index * entrySize
        for byte in 0..<6 { key |= UInt64(bytes[start + byte]) << (8 * byte) }
        return Int64(bitPattern: key)
    }

    private static func entry(at index: Int, in bytes: UnsafeRawBufferPointer, bucket: Int64) -> Entry {
        var block: UInt64 = 0
        let start = index * entrySize
        for byte in 0..<5 { block |= UInt64(bytes[start + 6 + byte]) << (8 * byte) }
        return Entry(key: key(at: index, in: bytes, bucket: bucket), block: Int64(block))
    }

    /// Entries grouped by bucket, in bucket order: many by a counting sort (millions of them in two passes), a few
    /// by sorting them, since the counting sort's table of 65,536 counts cost a transaction of one donation more
    /// than the rest of its work.
    static func byBucket(_ entries: [Entry]) -> [(bucket: Int64, entries: ArraySlice<Entry>)] {
        guard entries.count >= 1 << 14 else {
            let sorted = entries.sorted { bucket(of: $0.key) < bucket(of: $1.key) }
            var result: [(bucket: Int64, entries: ArraySlice<Entry>)] = []
            var start = 0
            while start < sorted.count {
                let number = bucket(of: sorted[start].key)
                var end = start + 1
                while end < sorted.count && bucket(of: sorted[end].key) == number { end += 1 }
                result.append((number, sorted[start..<end]))
                start = end
            }
            return result
        }
        var starts = [Int](repeating: 0, count: (1 << 16) + 1)
        for entry in entries { starts[Int(bucket(of: entry.key)) + 1] += 1 }
        for index in 1..<starts.count { starts[index] += starts[index - 1] }
        var next = starts
        var grouped = [Entry](repeating: Entry(key: 0, block: 0), count: entries.count)
        for entry in entries {
            let bucket = Int(bucket(of: entry.key))
            grouped[next[bucket]] = entry
            next[bucket] += 1
        }
        var result: [(bucket: Int64, entries: ArraySlice<Entry>)] = []
        for bucket in 0..<(1 << 16) where starts[bucket] < starts[bucket + 1] {
            result.append((Int64(bucket), grouped[starts[bucket]..<starts[bucket + 1]]))
        }
        return result
    }
}
