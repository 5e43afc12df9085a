/// A table from 64-bit keys to non-zero 64-bit values, by open addressing over the keys' own bits.
///
/// Two users, each for a reason of speed:
/// - a large import holds the identifier key of every donation in the store with its block (`DonationWriter`), to
///   find duplicates without reading the buckets of identifiers one by one. The keys are
///   `StableHash` values already, so a look-up is one multiply and one probe into memory, where a `Dictionary`
///   hashed each key again with SipHash. At 10M donations the table is far larger than the caches and every probe
///   a cache miss: sized once for the whole import, it is never rehashed.
/// - the top-K walk holds the conversations it has met (`TopKRanker`), a few dozen. A `Set<Int64>` would serve as
///   well once running, but its first use in a process instantiates the set's generic metadata and searches the
///   run-time conformance tables for `Int64: Hashable`: a twentieth of `suggest list`, a process of about 2 ms.
///   Keys and values share one `[Int64]` for the same reason (an array of a struct of two would be one more
///   generic instantiation).
package struct Int64KeyTable {
    /// Slot `i` holds its key at `2i` and its value at `2i + 1`; value 0 marks an empty slot.
    private var slots: [Int64]
    private var shift: Int
    package private(set) var count = 0

    /// Room for `capacity` keys at a load of at most three quarters.
    package init(capacity: Int) {
        var size = 16
        while size * 3 < max(capacity, 1) * 4 { size *= 2 }
        slots = Array(repeating: 0, count: 2 * size)
        shift = 64 - size.trailingZeroBitCount
    }

    /// The value recorded for `key`, if any.
    package func value(for key: Int64) -> Int64? {
        let mask = slots.count / 2 - 1
        var position = slot(of: key)
        while slots[2 * position + 1] != 0 {
            if slots[2 * position] == key { return slots[2 * position + 1] }
            position = (position + 1) & mask
        }
        return nil
    }

    /// Records `value` for `key`, replacing the value recorded before.
    /// - Returns: whether `key` was new.
    /// - Precondition: `value` is not 0.
    @discardableResult
    package mutating func set(_ value: Int64, for key: Int64) -> Bool {
        precondition(value != 0, "value 0 marks an empty slot")
        let mask = slots.count / 2 - 1
        var position = slot(of: key)
        while slots[2 * position + 1] != 0 {
            if slots[2 * position] == key {
                slots[2 * position + 1] = value
                return false
            }
            position = (position + 1) & mask
        }
        slots[2 * position] = key
        slots[2 * position + 1] = value
        count += 1
        if count * 4 > slots.count / 2 * 3 { grow() }
        return true
    }

    /// Fibonacci hashing: the high bits of the key times 2⁶⁴/φ pick the slot, so that every bit of the key counts
    /// (consecutive row ids spread as well as hash values).
    private func slot(of key: Int64) -> Int {
        Int(truncatingIfNeeded: (UInt64(bitPattern: key) &* 0x9E37_79B9_7F4A_7C15) >> UInt64(shift))
    }

    private mutating func grow() {
        let old = slots
        slots = Array(repeating: 0, count: old.count * 2)
        shift -= 1
        count = 0
        for position in stride(from: 0, to: old.count, by: 2) where old[position + 1] != 0 {
            set(old[position + 1], for: old[position])
        }
    }
}
