import SuggestTestSupport
import Testing

@testable import SuggestCore

/// `SortedKeyList`'s rebuild by merging: the list it leaves is, entry for entry, the one a full sort of the current
/// keys leaves, whatever the stale entries, ties and members that no entry holds yet.
@Suite struct SortedKeyListTests {
    struct Entry: Equatable {
        var key: Double
        var slot: Int32
    }

    static func entries(_ list: SortedKeyList) -> [Entry] { list.base.map { Entry(key: $0.key, slot: $0.slot) } }

    @Test(arguments: [UInt64(1), 2, 3, 4, 5])
    func mergingEqualsSortingTheCurrentKeys(seed: UInt64) {
        var random = SeededRandom(seed: seed)
        var keys: [Double] = []
        var merged = SortedKeyList()
        for round in 0..<60 {
            // New slots, some never marked (as a look-up creates them); keys on a coarse grid so that they tie; some
            // go down (a `latest` channel), some become -∞ (a conversation of no scope).
            let added = Int.random(in: 0..<40, using: &random)
            for _ in 0..<added { keys.append(Double(Int.random(in: -20...20, using: &random))) }
            var pending: [Int32] = []
            var marked = Set<Int32>()
            for _ in 0..<Int.random(in: 1...600, using: &random) {
                let slot = Int32(Int.random(in: 0..<keys.count, using: &random))
                keys[Int(slot)] =
                    Int.random(in: 0..<10, using: &random) == 0
                    ? -.infinity : keys[Int(slot)] + Double(Int.random(in: -2...6, using: &random))
                if marked.insert(slot).inserted { pending.append(slot) }
            }
            let size = keys.count
            // Every fourth round a scope that holds a part of the slots, as a service's list does.
            let members = (0..<Int32(size)).filter { round % 4 != 3 || $0 % 3 != 0 }
            let current = keys
            let inScope = pending.filter { members.contains($0) }
            merged.settle(pending: inScope, size: size, members: { members }, key: { current[Int($0)] })
            var sorted = SortedKeyList()
            sorted.rebuild(members: members, key: { current[Int($0)] })
            // A settle that folded into the delta leaves the base as it was; a rebuild must equal the full sort.
            if merged.delta.isEmpty {
                #expect(Self.entries(merged) == Self.entries(sorted), "round \(round)")
            } else {
                var forced = merged
                forced.merge(pending: [], size: size, members: members, key: { current[Int($0)] })
                #expect(Self.entries(forced) == Self.entries(sorted), "round \(round), forced")
            }
        }
    }
}
