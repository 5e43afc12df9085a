/// The conversations a top-K walk has met, by reference: a set of 64-bit integers with open addressing.
///
/// A walk meets a few dozen references, so `Set<Int64>` would serve as well once running; but its first use in a
/// process instantiates the set's generic metadata and searches the run-time conformance tables for
/// `Int64: Hashable`, which cost `suggest list`, a process of about 2 ms, 2% of its time.
struct ReferenceSet {
    /// `Int64.min` marks an empty slot; the reference `Int64.min` itself is kept aside in `holdsMinimum`.
    private static let empty = Int64.min
    private var slots: [Int64]
    private var holdsMinimum = false
    private(set) var count = 0

    init() { slots = Array(repeating: ReferenceSet.empty, count: 32) }

    /// Adds `reference`; returns whether it was new.
    mutating func insert(_ reference: Int64) -> Bool {
        if reference == ReferenceSet.empty {
            defer { holdsMinimum = true }
            if holdsMinimum { return false }
            count += 1
            return true
        }
        let mask = slots.count - 1
        var position = ReferenceSet.slot(of: reference, mask: mask)
        while slots[position] != ReferenceSet.empty {
            if slots[position] == reference { return false }
            position = (position + 1) & mask
        }
        slots[position] = reference
        count += 1
        if count * 4 > slots.count * 3 { grow() }
        return true
    }

    func contains(_ reference: Int64) -> Bool {
        if reference == ReferenceSet.empty { return holdsMinimum }
        let mask = slots.count - 1
        var position = ReferenceSet.slot(of: reference, mask: mask)
        while slots[position] != ReferenceSet.empty {
            if slots[position] == reference { return true }
            position = (position + 1) & mask
        }
        return false
    }

    /// Fibonacci hashing, as `IdentifierKeyTable` does: references are often consecutive row ids.
    private static func slot(of reference: Int64, mask: Int) -> Int {
        Int(truncatingIfNeeded: (UInt64(bitPattern: reference) &* 0x9E37_79B9_7F4A_7C15) >> 32) & mask
    }

    private mutating func grow() {
        let old = slots
        slots = Array(repeating: ReferenceSet.empty, count: old.count * 2)
        count = holdsMinimum ? 1 : 0
        for reference in old where reference != ReferenceSet.empty { _ = insert(reference) }
    }
}
