import SuggestCore
import SuggestTestSupport
import Testing

@testable import SuggestSQLiteStore

/// The buckets of identifiers answer as a multiset of (key, block) pairs does, through writes and reads back, in
/// each of their ways of changing: adding one by one (looked up as they are added), adding in one list after
/// `loadAll`, and removing.
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
                try index.write()
            }
            let index = IdentifierIndex(database: database)
            for (k, blocks) in reference { #expect(try index.blocks(for: k).sorted() == blocks.sorted()) }
            #expect(try index.blocks(for: 12_345).isEmpty || reference[12_345] != nil)
        }
    }

    @Test(arguments: [5_000, 40_000]) func entriesAreGroupedByBucketInOrder(count: Int) {
        var random = SeededRandom(seed: 32)
        let entries = (0..<count).map { _ in
            // Half of them in 8 buckets, so that buckets hold many.
            let key =
                Bool.random(using: &random)
                ? Int64.random(in: .min ... .max, using: &random)
                : Int64(
                    bitPattern: UInt64.random(in: 0...7, using: &random) << 48
                        | UInt64.random(in: 0...999, using: &random))
            return IdentifierIndex.Entry(key: key, block: Int64.random(in: 1...9, using: &random))
        }
        let grouped = IdentifierIndex.byBucket(entries)
        #expect(grouped.map(\.bucket) == grouped.map(\.bucket).sorted())
        #expect(Set(grouped.map(\.bucket)).count == grouped.count)
        #expect(
            grouped.allSatisfy { group in
                group.entries.allSatisfy { IdentifierIndex.bucket(of: $0.key) == group.bucket }
            })
        #expect(grouped.reduce(0) { $0 + $1.entries.count } == entries.count)
    }
}
