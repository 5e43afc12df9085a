/// One list of conversations in non-increasing key order for sorted access, kept in memory and exact after every
/// `update`.
///
/// The entries are held in sorted blocks of a few dozen, in order, with each block's first entry kept apart for
/// the binary search that finds where an entry belongs. A changed key is its old entry removed and its new one
/// inserted, each a search and a move of at most one block: O(log n + B) per change. So a replay, which queries
/// after nearly every donation, pays for what changed and nothing more: sorted access never skips stale entries,
/// and no query rebuilds the whole list.
struct SortedKeyList {
    struct Entry {
        var key: Double
        var slot: Int32

        /// Best first; equal keys in slot order, so the order is deterministic.
        @inline(__always)
        static func precedes(_ a: Entry, _ b: Entry) -> Bool { a.key > b.key || (a.key == b.key && a.slot < b.slot) }
    }

    /// Sorted runs of entries, in order; none is empty.
    private(set) var blocks: [[Entry]] = []
    /// The first entry of each block.
    private var firsts: [Entry] = []
    /// The key each slot has in the list, by slot; NaN for a slot the list does not hold (no key is NaN).
    private(set) var keys: [Double] = []
    /// How many entries the list holds.
    private(set) var count = 0

    /// Blocks are split in two once they pass twice this, and a block that falls under a quarter of it is joined to
    /// the next one when the two fit in one. A replay moves an entry at every donation, and each move shifts half a
    /// block twice: blocks of 64 to 128 entries (1–2 KB) cost a replay 6% less time than blocks of 256 to 512, and
    /// blocks of 32 no less than 64 (Benchmarks/README.md, "Replay when every donation is a send").
    static let blockSize = 64

    /// Every entry, in order.
    var entries: [Entry] { blocks.flatMap { $0 } }

    /// Brings the slots whose key or membership changed up to date.
    /// - Parameters:
    ///   - changed: the slots whose key may have changed, or that may have joined or left the list, each once.
    ///   - key: a slot's current key, `nil` when the list does not hold it.
    /// - Complexity: O(log n + B) per slot whose key changed, for blocks of B entries.
    mutating func update(_ changed: [Int32], key: (Int32) -> Double?) {
        for slot in changed {
            let index = Int(slot)
            let new = key(slot)
            let old = index < keys.count ? keys[index] : .nan
            // A slot the list neither held nor takes costs nothing (a scope's list is told of every changed slot).
            if new == nil && old.isNaN { continue }
            if let new, new == old { continue }
            if index >= keys.count { keys.append(contentsOf: repeatElement(.nan, count: index + 1 - keys.count)) }
            if !old.isNaN { remove(Entry(key: old, slot: slot)) }
            if let new {
                precondition(!new.isNaN, "a sorted list's key is never NaN")
                insert(Entry(key: new, slot: slot))
            }
            keys[index] = new ?? .nan
        }
    }

    /// Replaces the list with the current keys of `members`.
    /// - Complexity: O(n log n).
    mutating func rebuild(members: [Int32], key: (Int32) -> Double) {
        var sorted = members.map { Entry(key: key($0), slot: $0) }
        sorted.sort(by: Entry.precedes)
        blocks = stride(from: 0, to: sorted.count, by: Self.blockSize).map {
            Array(sorted[$0..<min($0 + Self.blockSize, sorted.count)])
        }
        firsts = blocks.map { $0[0] }
        keys = Array(repeating: .nan, count: (members.max().map { Int($0) } ?? -1) + 1)
        for entry in sorted { keys[Int(entry.slot)] = entry.key }
        count = sorted.count
    }

    func cursor() -> InMemoryRankingIndex.Cursor { InMemoryRankingIndex.Cursor(blocks: blocks) }

    private mutating func insert(_ entry: Entry) {
        count += 1
        guard !blocks.isEmpty else {
            blocks = [[entry]]
            firsts = [entry]
            return
        }
        let block = blockIndex(of: entry)
        let position = Self.position(of: entry, in: blocks[block])
        blocks[block].insert(entry, at: position)
        if position == 0 { firsts[block] = entry }
        if blocks[block].count > 2 * Self.blockSize {
            let tail = Array(blocks[block][Self.blockSize...])
            blocks[block].removeSubrange(Self.blockSize...)
            blocks.insert(tail, at: block + 1)
            firsts.insert(tail[0], at: block + 1)
        }
    }

    private mutating func remove(_ entry: Entry) {
        let block = blockIndex(of: entry)
        let position = Self.position(of: entry, in: blocks[block])
        precondition(
            position < blocks[block].count && blocks[block][position].slot == entry.slot,
            "a sorted list lost an entry it holds")
        count -= 1
        blocks[block].remove(at: position)
        if blocks[block].isEmpty {
            blocks.remove(at: block)
            firsts.remove(at: block)
            return
        }
        if position == 0 { firsts[block] = blocks[block][0] }
        let next = block + 1
        if blocks[block].count < Self.blockSize / 4 && next < blocks.count
            && blocks[block].count + blocks[next].count <= 2 * Self.blockSize
        {
            blocks[block].append(contentsOf: blocks[next])
            blocks.remove(at: next)
            firsts.remove(at: next)
        }
    }

    /// The block an entry belongs in: the last whose first entry does not come after it, or the first block.
    private func blockIndex(of entry: Entry) -> Int {
        var low = 0
        var high = firsts.count
        while low < high {
            let middle = (low + high) / 2
            if Entry.precedes(entry, firsts[middle]) { high = middle } else { low = middle + 1 }
        }
        return max(0, low - 1)
    }

    /// Where an entry is, or would be inserted, in a sorted block: the first entry that does not precede it.
    private static func position(of entry: Entry, in block: [Entry]) -> Int {
        var low = 0
        var high = block.count
        while low < high {
            let middle = (low + high) / 2
            if Entry.precedes(block[middle], entry) { low = middle + 1 } else { high = middle }
        }
        return low
    }
}

extension InMemoryRankingIndex {
    /// Sorted access into one of the index's lists, best first: the list as it was when the cursor was made.
    public struct Cursor: SortedAccessCursor {
        private let blocks: [[SortedKeyList.Entry]]
        private var block = 0
        private var run: [SortedKeyList.Entry]
        private var position = 0

        init(blocks: [[SortedKeyList.Entry]]) {
            self.blocks = blocks
            run = blocks.first ?? []
        }

        public mutating func next() -> SortedEntry? {
            if position == run.count {
                block += 1
                guard block < blocks.count else { return nil }
                run = blocks[block]
                position = 0
            }
            let entry = run[position]
            position += 1
            return SortedEntry(key: entry.key, conversation: ConversationHandle(rawValue: Int64(entry.slot)))
        }
    }
}

/// The slots changed since the lists were last settled: one mark per slot, shared by every channel's list.
struct PendingSlots {
    private(set) var slots: [Int32] = []
    private var isPending: [Bool] = []

    /// Marks a slot whose keys changed.
    /// - Complexity: O(1) amortized.
    @inline(__always)
    mutating func mark(_ slot: Int32) {
        let index = Int(slot)
        if index >= isPending.count { isPending.append(contentsOf: repeatElement(false, count: index + 1 - isPending.count)) }
        if !isPending[index] {
            isPending[index] = true
            slots.append(slot)
        }
    }

    var isEmpty: Bool { slots.isEmpty }

    /// Forgets the marks once every list has folded them in.
    mutating func clear() {
        for slot in slots { isPending[Int(slot)] = false }
        slots.removeAll(keepingCapacity: true)
    }
}
