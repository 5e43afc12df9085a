import SuggestCore
import SuggestTestSupport
import Testing

@testable import SuggestSQLiteStore

/// The buckets of identifiers answer as a multiset of (key, block) pairs does, through writes and reads back, in
/// each of their ways of changing: adding one by one (looked up as they are added), adding in one list after
/// `loadAll`, and removing; with entries in recent rows, merged into buckets, and both.
@Suite struct IdentifierIndexTests {
    @Test func answersAsAMultisetDoes() throws {
        var random = SeededRandom(seed: 31)
        let temporary = try TemporaryStore()
        let database = temporary.store.database
        var reference: [Int64: [Int64]] = [:]
        // Keys from a few buckets (many per bucket, and repeated) and from anywhere, negative ones included.
        func key() -> Int64 {
            Bool.random(using: &random)
                ? Int64(
                    bitPattern: UInt64.random(in: 0...3, using: &random) << 62
                        | UInt64.random(in: 0...20, using: &random))
                : Int64.random(in: .min ... .max, using: &random)
        }
        for round in 0..<9 {
            try database.write {
                let index = IdentifierIndex(database: database)
                switch round % 3 {
                case 0:
                    for _ in 0..<500 {
                        let k = key()
                        let block = Int64.random(in: 1...IdentifierIndex.largestBlock, using: &random)
                        index.add(k, block: block)
                        reference[k, default: []].append(block)
                        // What the transaction added is found before it is written, with what was stored.
                        #expect(try index.blocks(for: k).sorted() == reference[k]!.sorted())
                    }
                case 1:
                    var loaded: [Int64: [Int64]] = [:]
                    try index.loadAll(expectedAdditions: 10) { loaded[$0.key, default: []].append($0.block) }
                    #expect(
                        loaded.mapValues { $0.sorted() }
                            == reference.filter { !$0.value.isEmpty }.mapValues { $0.sorted() })
                    var added: [Int64] = []
                    for _ in 0..<500 {
                        let k = key()
                        let block = Int64.random(in: 1...IdentifierIndex.largestBlock, using: &random)
                        index.add(k, block: block)
                        reference[k, default: []].append(block)
                        added.append(k)
                    }
                    // Without a table of the keys added, the list is read: keys added in this round, some stored too.
                    for k in added.prefix(50) { #expect(try index.blocks(for: k).sorted() == reference[k]!.sorted()) }
                default:
                    for _ in 0..<300 {
                        guard let some = reference.randomElement(using: &random), let removed = some.value.first else {
                            continue
                        }
                        try index.remove(some.key, block: removed)
                        reference[some.key]!.remove(at: 0)
                        #expect(try index.blocks(for: some.key).sorted() == reference[some.key]!.sorted())
                    }
                }
                // Stores of every size: ranges merged at 32 entries, at 320, and between.
                try index.write(storeSize: [0, 1 << 20, 1 << 30][round / 3])
            }
            let index = IdentifierIndex(database: database)
            for (k, blocks) in reference { #expect(try index.blocks(for: k).sorted() == blocks.sorted()) }
            #expect(try index.blocks(for: 12_345).isEmpty || reference[12_345] != nil)
        }
    }

    /// A range's entries stay in its recent row until it gathers `mergeSize` of them; they then move into its
    /// buckets, and the recent row is gone. A deletion finds an entry in either.
    @Test func aRangeIsMergedIntoItsBucketsWhenItGathersEnough() throws {
        let temporary = try TemporaryStore()
        let database = temporary.store.database
        let mergeSize = IdentifierIndex.mergeSize(storeSize: 0)
        // Keys of range 5, in its 16 buckets, and one key of another range.
        let keys = (0..<mergeSize).map { Int64(5 << 52 | ($0 % 16) << 48 | $0) }
        let elsewhere = Int64(bitPattern: 0xFFF0_0000_0000_0001)
        func rows() throws -> [Int64] {
            let select = try database.uncachedStatement("SELECT bucket FROM donation_identifiers ORDER BY bucket")
            var rows: [Int64] = []
            while try select.step() { rows.append(select.int(0)) }
            return rows
        }
        try database.write {
            let index = IdentifierIndex(database: database)
            for key in keys.dropLast() { index.add(key, block: 7) }
            index.add(elsewhere, block: 8)
            try index.write(storeSize: 0)
        }
        let recentRow = IdentifierIndex.firstRecentRow + 5
        #expect(try rows() == [recentRow, IdentifierIndex.firstRecentRow + 0xFFF])
        try database.write {
            let index = IdentifierIndex(database: database)
            index.add(keys.last!, block: 9)
            try index.write(storeSize: 0)
        }
        #expect(try rows() == (0..<16).map { 5 << 4 + $0 } + [IdentifierIndex.firstRecentRow + 0xFFF])
        #expect(try IdentifierIndex.storedCount(in: database) == mergeSize + 1)
        let index = IdentifierIndex(database: database)
        #expect(try index.blocks(for: keys[0]) == [7])
        #expect(try index.blocks(for: keys.last!) == [9])
        #expect(try index.blocks(for: elsewhere) == [8])
        try database.write {
            let index = IdentifierIndex(database: database)
            try index.remove(keys[0], block: 7)
            try index.remove(elsewhere, block: 8)
            try index.write(storeSize: 0)
        }
        #expect(try index.blocks(for: keys[0]).isEmpty && index.blocks(for: elsewhere).isEmpty)
        #expect(try IdentifierIndex.storedCount(in: database) == mergeSize - 1)
    }

    /// The block log merges a range by the store's size, from its next sequence number: 100 entries are merged in a
    /// new store, not in one of 16M donations.
    @Test func theBlockLogMergesByTheStoresSize() throws {
        for (recorded, merged) in [(0, true), (16_000_000, false)] {
            let temporary = try TemporaryStore()
            let database = temporary.store.database
            try database.write {
                try database.setSetting(BlockLog.sequenceSetting, String(recorded + 1))
                let log = BlockLog(database: database)
                for index in 0..<100 { log.identifiers.add(Int64(9 << 52 | index), block: 3) }
                try log.writeIdentifiers()
            }
            let recent = try database.statement("SELECT COUNT(*) FROM donation_identifiers WHERE bucket = ?")
                .scalarInt([.integer(IdentifierIndex.firstRecentRow + 9)])
            #expect(recent == (merged ? 0 : 1), "\(recorded) donations")
            #expect(try IdentifierIndex.storedCount(in: database) == 100)
        }
    }

    @Test func theMergeSizeFollowsTheStoresSquareRoot() {
        #expect(IdentifierIndex.mergeSize(storeSize: 0) == 32)
        #expect(IdentifierIndex.mergeSize(storeSize: 1_000_000) == 62)
        #expect(IdentifierIndex.mergeSize(storeSize: 10_000_000) == 197)
        // A row stays within one 4 KB page.
        #expect(IdentifierIndex.mergeSize(storeSize: 1 << 40) * IdentifierIndex.entrySize(inRow: 1 << 16) < 4_000)
    }

    /// Entries grouped by range (by counting past 4,096 of them, by sorting below) and by bucket, in order, each
    /// group holding its own entries and all of them.
    @Test(arguments: [(52, 3_000), (52, 40_000), (48, 5_000)]) func entriesAreGroupedInOrder(shift: Int, count: Int) {
        var random = SeededRandom(seed: 32)
        let entries = (0..<count).map { _ in
            // Half of them in 8 groups, so that groups hold many.
            let key =
                Bool.random(using: &random)
                ? Int64.random(in: .min ... .max, using: &random)
                : Int64(
                    bitPattern: UInt64.random(in: 0...7, using: &random) << UInt64(shift)
                        | UInt64.random(in: 0...999, using: &random))
            return IdentifierIndex.Entry(key: key, block: Int64.random(in: 1...9, using: &random))
        }
        typealias Group = (number: Int64, entries: ArraySlice<IdentifierIndex.Entry>)
        let grouped: [Group]
        let groupOf: (Int64) -> Int64
        if shift == 52 {
            grouped = IdentifierIndex.byRange(entries).map { Group($0.range, $0.entries) }
            groupOf = IdentifierIndex.range(of:)
        } else {
            grouped = IdentifierIndex.byBucket(entries).map { Group($0.bucket, $0.entries) }
            groupOf = IdentifierIndex.bucket(of:)
        }
        #expect(grouped.map(\.number) == grouped.map(\.number).sorted())
        #expect(Set(grouped.map(\.number)).count == grouped.count)
        #expect(grouped.allSatisfy { group in group.entries.allSatisfy { groupOf($0.key) == group.number } })
        #expect(grouped.reduce(0) { $0 + $1.entries.count } == entries.count)
    }
}
