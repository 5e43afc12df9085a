import SuggestCore

/// The donation identifiers an account has seen, for finding duplicates during a replay.
///
/// A `Set<String>` did the same at a fifth of the replaying thread's time: SipHash over every 36-character
/// identifier, and again over all of them at each resize. Here the hash is `StableHash` (FNV-1a; no adversary: the
/// file is the user's own), each identifier's hash is kept, so growing re-hashes nothing, and strings are compared only
/// when their 64-bit hashes are equal, so a collision costs a comparison, never a wrong answer.
struct IdentifierSet {
    private var identifiers: [String] = []
    private var hashes: [UInt64] = []
    /// Open addressing with linear probing: 0 is empty, otherwise 1 + an index into `identifiers`.
    private var slots: [UInt32] = Array(repeating: 0, count: 16)

    var count: Int { identifiers.count }

    /// Adds `identifier`; returns `false` if it was already there.
    mutating func insert(_ identifier: String) -> Bool {
        let hash = Self.hash(identifier)
        let mask = slots.count - 1
        var position = Int(truncatingIfNeeded: hash) & mask
        while slots[position] != 0 {
            let index = Int(slots[position] - 1)
            if hashes[index] == hash, identifiers[index] == identifier { return false }
            position = (position + 1) & mask
        }
        slots[position] = UInt32(identifiers.count + 1)
        identifiers.append(identifier)
        hashes.append(hash)
        // At most half full: probes stay short.
        if identifiers.count * 2 > slots.count { grow() }
        return true
    }

    private mutating func grow() {
        slots = Array(repeating: 0, count: slots.count * 2)
        let mask = slots.count - 1
        for (index, hash) in hashes.enumerated() {
            var position = Int(truncatingIfNeeded: hash) & mask
            while slots[position] != 0 { position = (position + 1) & mask }
            slots[position] = UInt32(index + 1)
        }
    }

    static func hash(_ identifier: String) -> UInt64 {
        var hash = StableHash()
        hash.combine(identifier)
        // Spread the high bits into the low ones, which pick the slot.
        return hash.value ^ (hash.value >> 29)
    }
}
