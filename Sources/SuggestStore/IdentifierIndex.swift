import SuggestCore

/// Which block holds each donation identifier, for one write transaction: duplicates are found and deletion by
/// identifier finds its donation through it.
///
/// Stored in `donation_identifiers` as 65,536 buckets by the top 16 bits of the identifier's 64-bit key
/// (`StableHash.key(account, identifier)`), each one row whose blob lists (key, block id) pairs, 16 bytes each,
/// little-endian, sorted. An index with an entry per donation cost a 10M import 12 s to build at its end; the same
/// keys in buckets are written as 65,536 rows of a few kilobytes, and `donate` reads and rewrites one of them.
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
    /// After `loadAll` (a large import, which keeps its own table of keys), the entries added, in one list: merged
    /// into their buckets by `write()`, each bucket once, instead of looked up and appended to one by one.
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
        // After `loadAll` only a key that two identifiers share is looked up here (once in billions): a scan of
        // the additions is fine.
        return (buckets[bucket]!.entries + (additions ?? [])).compactMap { $0.key == key ? $0.block : nil }
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
        let bucket = Self.bucket(of: key)
        try load(bucket)
        guard let index = buckets[bucket]!.entries.firstIndex(of: Entry(key: key, block: block)) else { return }
        buckets[bucket]!.entries.remove(at: index)
        buckets[bucket]!.isModified = true
    }

    /// Calls `body` with every stored entry, for a large import that holds every key in memory; from then on,
    /// additions are kept in one list until `write()`. Not for a transaction that removes entries.
    /// - Parameter expectedAdditions: how many entries the import may add, made room for at once.
    func loadAll(expectedAdditions: Int, _ body: (Entry) -> Void) throws(SQLiteError) {
        let select = try database.uncachedStatement("SELECT entries FROM donation_identifiers")
        while try select.step() {
            let entries = select.blob(0)
            for index in 0..<entries.count / 16 { body(Self.entry(at: index, in: entries)) }
        }
        additions = []
        additions!.reserveCapacity(expectedAdditions)
    }

    /// Writes the changed buckets back. Call once before committing.
    func write() throws(SQLiteError) {
        let replace = try database.statement("INSERT OR REPLACE INTO donation_identifiers(bucket, entries) VALUES (?, ?)")
        let delete = try database.statement("DELETE FROM donation_identifiers WHERE bucket = ?")
        if let additions {
            self.additions = []
            for (number, added) in Self.byBucket(additions) {
                try load(number)
                buckets[number]!.entries += added
                buckets[number]!.isModified = true
            }
        }
        for (number, bucket) in buckets where bucket.isModified {
            if bucket.entries.isEmpty {
                try delete.run([.integer(number)])
            } else {
                let sorted = bucket.entries.sorted { ($0.key, $0.block) < ($1.key, $1.block) }
                try replace.run([.integer(number), .blob(Self.encode(sorted))])
            }
        }
        buckets.removeAll()
    }

    private func load(_ bucket: Int64) throws(SQLiteError) {
        guard buckets[bucket] == nil else { return }
        let select = try database.statement("SELECT entries FROM donation_identifiers WHERE bucket = ?")
        try select.reset([.integer(bucket)])
        defer { _ = try? select.reset() }
        buckets[bucket] = Bucket(entries: try select.step() ? Self.decode(select.blob(0)) : [])
    }

    static func encode(_ entries: [Entry]) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(entries.count * 16)
        for entry in entries {
            withUnsafeBytes(of: entry.key.littleEndian) { bytes.append(contentsOf: $0) }
            withUnsafeBytes(of: entry.block.littleEndian) { bytes.append(contentsOf: $0) }
        }
        return bytes
    }

    /// The entries of a bucket's blob; a trailing partial entry (a damaged row) is ignored.
    static func decode(_ bytes: UnsafeRawBufferPointer) -> [Entry] {
        (0..<bytes.count / 16).map { entry(at: $0, in: bytes) }
    }

    private static func entry(at index: Int, in bytes: UnsafeRawBufferPointer) -> Entry {
        Entry(
            key: Int64(littleEndian: bytes.loadUnaligned(fromByteOffset: 16 * index, as: Int64.self)),
            block: Int64(littleEndian: bytes.loadUnaligned(fromByteOffset: 16 * index + 8, as: Int64.self)))
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
