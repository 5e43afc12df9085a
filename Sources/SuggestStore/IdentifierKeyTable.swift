/// The identifier key of every donation in the store, with its row: how a large import finds duplicates without
/// `donations_by_identifier_key`, which it builds once at its end.
///
/// Open addressing over the keys' own bits: they are `StableHash` values already, so a look-up is one multiply and
/// one probe into memory, where a `Dictionary` hashed each key again with SipHash. At 10M donations the table is
/// far larger than the caches, and every probe a cache miss: sized once, for the whole import, it is never rehashed.
struct IdentifierKeyTable {
    /// `row` 0 marks an empty slot: SQLite's row ids start at 1 (and `DonationWriter.sharedKey` is -1).
    private struct Slot {
        var key: Int64
        var row: Int64
    }

    private var slots: [Slot]
    private var shift: Int
    private(set) var count = 0

    /// Room for `capacity` keys at a load of at most three quarters.
    init(capacity: Int) {
        var size = 16
        while size * 3 < max(capacity, 1) * 4 { size *= 2 }
        slots = Array(repeating: Slot(key: 0, row: 0), count: size)
        shift = 64 - size.trailingZeroBitCount
    }

    /// The row recorded for `key`, if any.
    func row(for key: Int64) -> Int64? {
        let mask = slots.count - 1
        var position = slot(of: key)
        while slots[position].row != 0 {
            if slots[position].key == key { return slots[position].row }
            position = (position + 1) & mask
        }
        return nil
    }

    /// Records `row` for `key`, replacing the row recorded before.
    /// - Precondition: `row` is not 0.
    mutating func set(_ row: Int64, for key: Int64) {
        precondition(row != 0, "row 0 marks an empty slot")
        let mask = slots.count - 1
        var position = slot(of: key)
        while slots[position].row != 0 {
            if slots[position].key == key {
                slots[position].row = row
                return
            }
            position = (position + 1) & mask
        }
        slots[position] = Slot(key: key, row: row)
        count += 1
        if count * 4 > slots.count * 3 { grow() }
    }

    /// Fibonacci hashing: the high bits of the key times 2⁶⁴/φ pick the slot, so that every bit of the key counts.
    private func slot(of key: Int64) -> Int {
        Int(truncatingIfNeeded: (UInt64(bitPattern: key) &* 0x9E37_79B9_7F4A_7C15) >> UInt64(shift))
    }

    private mutating func grow() {
        let old = slots
        slots = Array(repeating: Slot(key: 0, row: 0), count: old.count * 2)
        shift -= 1
        count = 0
        for slot in old where slot.row != 0 { set(slot.row, for: slot.key) }
    }
}
