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
    /// The buckets read or changed by this transaction, whole, by bucket number.
    private var buckets: [Int64: Bucket] = [:]
    /// After `collectAdditions` (a large import, which keeps its own table of keys, or the migration to blocks), the
    /// entries added, in one list: merged into their buckets by `write()`, each bucket once, instead of looked up and
    /// appended to one by one.
    private var additions: [Entry]?

    private struct Bucket {
        var entries: [Entry]
        var isModified = false
    }

    init(database: Database) { self.database = database }

    static func bucket(of key: Int64) -> Int64 { Int64(UInt64(bitPattern: key) >> 48) }

    /// The blocks listed for `key`, one per entry.
    func blocks(for key: Int64) throws(SQLiteError) -> [Int64] {
        let bucket = Self.bucket(of: key)
        try load(bucket)
        // While additions are collected, only a key that two identifiers share is looked up here (once in
        // billions): a scan of the additions is fine.
        // A loop that allocates only for a match: most look-ups (every new donation of an import into a large
        // store) find nothing.
        var blocks: [Int64] = []
        for entry in buckets[bucket]!.entries where entry.key == key { blocks.append(entry.block) }
        for entry in additions ?? [] where entry.key == key { blocks.append(entry.block) }
        return blocks
    }

    func add(_ key: Int64, block: Int64) throws(SQLiteError) {
        if additions != nil { return additions!.append(Entry(key: key, block: block)) }
        let bucket = Self.bucket(of: key)
        try load(bucket)
        buckets[bucket]!.entries.append(Entry(key: key, block: block))
        buckets[bucket]!.isModified = true
    }

    /// Removes one entry of `key` in `block`, if there is one.
    func remove(_ key: Int64, block: Int64) throws(SQLiteError) {
        precondition(additions == nil, "an index that collects additions does not remove")
        let bucket = Self.bucket(of: key)
        try load(bucket)
        guard let index = buckets[bucket]!.entries.firstIndex(of: Entry(key: key, block: block)) else { return }
        buckets[bucket]!.entries.remove(at: index)
        buckets[bucket]!.isModified = true
    }

    /// Calls `body` with every stored entry, for a large import that holds every key in memory; from then on,
    /// additions are kept in one list until `write()` (`collectAdditions`).
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

    /// From now on, keeps additions in one list until `write()`, which merges them into their buckets, each bucket
    /// read and written once: for many additions at once. Not for a transaction that removes entries.
    func collectAdditions(expected: Int) {
        additions = []
        additions!.reserveCapacity(expected)
    }

    /// How many additions wait for `write()` in the list (`collectAdditions`).
    var collectedAdditions: Int { additions?.count ?? 0 }

    /// Writes the changed buckets back, and forgets them. Call once before committing, or whenever the additions
    /// collected take too much memory.
    func write() throws(SQLiteError) {
        if let additions {
            self.additions = []
            for (number, added) in Self.byBucket(additions) {
                // Merged, written and let go one at a time: a large import does not hold every bucket.
                var entries: [Entry]
                if let loaded = buckets.removeValue(forKey: number) {
                    entries = loaded.entries
                } else {
                    entries = try storedEntries(number)
                }
                entries += added
                try write(entries, to: number)
            }
        }
        for (number, bucket) in buckets where bucket.isModified { try write(bucket.entries, to: number) }
        buckets.removeAll()
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

    private func load(_ bucket: Int64) throws(SQLiteError) {
        guard buckets[bucket] == nil else { return }
        buckets[bucket] = Bucket(entries: try storedEntries(bucket))
    }

    private func storedEntries(_ bucket: Int64) throws(SQLiteError) -> [Entry] {
        let select = try database.statement("SELECT entries FROM donation_identifiers WHERE bucket = ?")
        try select.reset([.integer(bucket)])
        defer { _ = try? select.reset() }
        return try select.step() ? Self.decode(select.blob(0), bucket: bucket) : []
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

    private static func entry(at index: Int, in bytes: UnsafeRawBufferPointer, bucket: Int64) -> Entry {
        var key = UInt64(bucket) << 48
        var block: UInt64 = 0
        let start = index * entrySize
        for byte in 0..<6 { key |= UInt64(bytes[start + byte]) << (8 * byte) }
        for byte in 0..<5 { block |= UInt64(bytes[start + 6 + byte]) << (8 * byte) }
        return Entry(key: Int64(bitPattern: key), block: Int64(block))
    }

    /// Entries grouped by bucket, in bucket order, by a counting sort: millions of them in two passes.
    static func byBucket(_ entries: [Entry]) -> [(bucket: Int64, entries: ArraySlice<Entry>)] {
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
