/// One list of conversations in non-increasing key order for sorted access, kept in memory.
///
/// Keeping a fully sorted order on every donation would cost O(log n) with pointer-chasing per update and per
/// list; instead an update only marks the slot (O(1), one mark shared by every list: `PendingSlots`), and the next
/// query folds the marked slots in: a few are inserted into a small sorted `delta`, many trigger a rebuild of
/// `base`. Entries whose key is no longer the
/// slot's current key are stale and skipped by the cursor, so an update never has to find its old entry.
struct SortedKeyList {
    struct Entry {
        var key: Double
        var slot: Int32

        /// Best first; equal keys in slot order, so the order is deterministic.
        @inline(__always)
        static func precedes(_ a: Entry, _ b: Entry) -> Bool { a.key > b.key || (a.key == b.key && a.slot < b.slot) }
    }

    private(set) var base: [Entry] = []
    private(set) var delta: [Entry] = []

    /// Folds the marked slots in, so that sorted access sees current keys.
    /// - Parameters:
    ///   - pending: the slots of this list whose key changed since the last settle, each once.
    ///   - size: how many slots the list holds now.
    ///   - members: every slot the list holds, asked only when the list is rebuilt.
    ///   - key: the current key of a slot.
    /// - Complexity: O(p log p + d) for p marked slots and a delta of d; a rebuild, O(n + p log p) (`merge`),
    ///   happens once the delta outgrows n/16, so its cost spreads over at least n/16 updates.
    mutating func settle(pending: [Int32], size: Int, members: () -> [Int32], key: (Int32) -> Double) {
        guard !pending.isEmpty else { return }
        if delta.count + pending.count > max(512, size / 16) {
            merge(pending: pending, size: size, members: members(), key: key)
            return
        }
        var fresh = pending.map { Entry(key: key($0), slot: $0) }
        fresh.sort(by: Entry.precedes)
        if fresh.count <= 8 {
            for entry in fresh {
                var low = 0
                var high = delta.count
                while low < high {
                    let middle = (low + high) / 2
                    if Entry.precedes(delta[middle], entry) { low = middle + 1 } else { high = middle }
                }
                delta.insert(entry, at: low)
            }
        } else {
            var merged: [Entry] = []
            merged.reserveCapacity(delta.count + fresh.count)
            var i = 0
            var j = 0
            while i < delta.count || j < fresh.count {
                if j == fresh.count || (i < delta.count && Entry.precedes(delta[i], fresh[j])) {
                    merged.append(delta[i])
                    i += 1
                } else {
                    merged.append(fresh[j])
                    j += 1
                }
            }
            delta = merged
        }
    }

    /// Replaces the list with the current keys of `members`, as `rebuild` does, without sorting all of them: the
    /// entries of `base` and `delta` whose slot is unmarked and whose key is still the slot's are in order already,
    /// so only the marked slots (and members that no entry holds yet, such as a slot a look-up created) are
    /// sorted, then merged in. The result is the same array `rebuild` makes: one entry per member, in the total
    /// order of `Entry.precedes`.
    /// - Parameters:
    ///   - pending: the slots whose key changed since the last settle, each once.
    ///   - size: how many slots there are (every member is below it).
    ///   - members: every slot the list holds now.
    ///   - key: the current key of a slot.
    /// - Complexity: O(n + d + p log p) for n slots, a delta of d and p marked slots.
    mutating func merge(pending: [Int32], size: Int, members: [Int32], key: (Int32) -> Double) {
        // Per slot: not in the list, in it and not placed yet, or placed (a marked slot is placed from `fresh`).
        let absent: UInt8 = 0
        let waiting: UInt8 = 1
        let placed: UInt8 = 2
        var place = [UInt8](repeating: absent, count: size)
        for slot in members { place[Int(slot)] = waiting }
        var fresh: [Entry] = []
        fresh.reserveCapacity(pending.count)
        for slot in pending where place[Int(slot)] == waiting {
            place[Int(slot)] = placed
            fresh.append(Entry(key: key(slot), slot: slot))
        }
        var live: [Entry] = []
        live.reserveCapacity(members.count)
        var i = 0
        var j = 0
        while i < base.count || j < delta.count {
            let entry: Entry
            if j == delta.count || (i < base.count && Entry.precedes(base[i], delta[j])) {
                entry = base[i]
                i += 1
            } else {
                entry = delta[j]
                j += 1
            }
            // A stale entry (an older key of its slot, or a slot that left the list) is dropped; of two entries
            // with the slot's current key, the first.
            guard place[Int(entry.slot)] == waiting, key(entry.slot) == entry.key else { continue }
            place[Int(entry.slot)] = placed
            live.append(entry)
        }
        for slot in members where place[Int(slot)] == waiting { fresh.append(Entry(key: key(slot), slot: slot)) }
        fresh.sort(by: Entry.precedes)
        var merged: [Entry] = []
        merged.reserveCapacity(live.count + fresh.count)
        i = 0
        j = 0
        while i < live.count || j < fresh.count {
            if j == fresh.count || (i < live.count && Entry.precedes(live[i], fresh[j])) {
                merged.append(live[i])
                i += 1
            } else {
                merged.append(fresh[j])
                j += 1
            }
        }
        base = merged
        delta.removeAll()
    }

    /// Replaces the list with the current keys of `members`.
    /// - Complexity: O(n log n).
    mutating func rebuild(members: [Int32], key: (Int32) -> Double) {
        base = members.map { Entry(key: key($0), slot: $0) }
        base.sort(by: Entry.precedes)
        delta.removeAll()
    }

    func cursor(currentKey: @escaping (Int32) -> Double?) -> InMemoryRankingIndex.Cursor {
        InMemoryRankingIndex.Cursor(base: base, delta: delta, currentKey: currentKey)
    }
}

extension InMemoryRankingIndex {
    /// Sorted access into one of the index's lists: walks its `base` and `delta` together, best first, skipping
    /// stale entries: those whose key is no longer their slot's key, or whose slot has left the list's scope
    /// (`currentKey` returns `nil`).
    public struct Cursor: SortedAccessCursor {
        let base: [SortedKeyList.Entry]
        let delta: [SortedKeyList.Entry]
        let currentKey: (Int32) -> Double?
        var i = 0
        var j = 0

        public mutating func next() -> SortedEntry? {
            while i < base.count || j < delta.count {
                let entry: SortedKeyList.Entry
                if j == delta.count || (i < base.count && SortedKeyList.Entry.precedes(base[i], delta[j])) {
                    entry = base[i]
                    i += 1
                } else {
                    entry = delta[j]
                    j += 1
                }
                if currentKey(entry.slot) == entry.key {
                    return SortedEntry(key: entry.key, conversation: ConversationHandle(rawValue: Int64(entry.slot)))
                }
            }
            return nil
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
