import SuggestTestSupport
import Testing

@testable import SuggestCore

/// `SortedKeyList` kept up to date change by change: after every update its entries are, one for one, a full sort
/// of the current keys of the slots it holds, whatever the ties, the keys that go down or to -∞, and the slots
/// that join or leave it; and sorted access reads them in that order.
@Suite struct SortedKeyListTests {
    struct Entry: Equatable {
        var key: Double
        var slot: Int32
    }

    static func entries(_ list: SortedKeyList) -> [Entry] { list.entries.map { Entry(key: $0.key, slot: $0.slot) } }

    /// What the list must hold: every member's current key, best first, ties in slot order.
    static func sorted(_ keys: [Double?]) -> [Entry] {
        keys.indices.compactMap { slot in keys[slot].map { Entry(key: $0, slot: Int32(slot)) } }
            .sorted { $0.key > $1.key || ($0.key == $1.key && $0.slot < $1.slot) }
    }

    @Test(arguments: [UInt64(1), 2, 3, 4, 5])
    func updatesEqualSortingTheCurrentKeys(seed: UInt64) {
        var random = SeededRandom(seed: seed)
        // `nil`: the slot is not in the list (a conversation of another service, or not met yet).
        var keys: [Double?] = []
        var list = SortedKeyList()
        for round in 0..<40 {
            for _ in 0..<Int.random(in: 0..<120, using: &random) { keys.append(nil) }
            var changed: [Int32] = []
            var marked = Set<Int32>()
            // Many changes in some rounds and few in others, so that blocks split, shrink, empty and join; keys on
            // a coarse grid so that they tie, some going down or to -∞, some slots joining or leaving.
            let changes = round % 3 == 0 ? Int.random(in: 1...8, using: &random) : Int.random(in: 1...900, using: &random)
            for _ in 0..<changes where !keys.isEmpty {
                let slot = Int.random(in: 0..<keys.count, using: &random)
                switch Int.random(in: 0..<10, using: &random) {
                case 0: keys[slot] = nil
                case 1: keys[slot] = -.infinity
                default: keys[slot] = (keys[slot] ?? 0) + Double(Int.random(in: -3...6, using: &random))
                }
                if marked.insert(Int32(slot)).inserted { changed.append(Int32(slot)) }
            }
            let current = keys
            list.update(changed) { current[Int($0)] }
            let expected = Self.sorted(current)
            #expect(Self.entries(list) == expected, "round \(round)")
            #expect(list.count == expected.count)
            #expect(list.blocks.allSatisfy { !$0.isEmpty && $0.count <= 2 * SortedKeyList.blockSize })
            var cursor = list.cursor()
            var read: [Entry] = []
            while let entry = cursor.next() { read.append(Entry(key: entry.key, slot: Int32(entry.conversation.rawValue))) }
            #expect(read == expected, "round \(round), sorted access")
        }
    }

    /// A scope's list is told of every changed slot; one it does not hold must cost it nothing (a list of a
    /// service no conversation has kept a key for each of a million conversations: 32 MB over four channels).
    @Test func slotsTheListDoesNotHoldCostItNothing() {
        var list = SortedKeyList()
        list.update(Array(0..<100_000)) { _ in nil }
        #expect(list.keys.isEmpty && list.count == 0)
        list.update([3, 99_999]) { $0 == 3 ? 1 : nil }
        #expect(list.keys.count == 4 && list.count == 1)
    }

    @Test func aRebuildHoldsTheMembersAndTakesUpdatesAfterIt() {
        var keys: [Double?] = (0..<1_000).map { $0 % 7 == 0 ? nil : Double($0 % 13) }
        var list = SortedKeyList()
        let members = keys.indices.filter { keys[$0] != nil }.map { Int32($0) }
        list.rebuild(members: members) { keys[Int($0)]! }
        #expect(Self.entries(list) == Self.sorted(keys))
        keys[7] = 5
        keys[8] = nil
        keys[999] = 100
        let current = keys
        list.update([7, 8, 999]) { current[Int($0)] }
        #expect(Self.entries(list) == Self.sorted(current))
    }
}
