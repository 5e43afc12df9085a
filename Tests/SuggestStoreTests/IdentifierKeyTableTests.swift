import SuggestTestSupport
import Testing

@testable import SuggestStore

/// `IdentifierKeyTable` answers as a `Dictionary` does, through growth, replaced rows and keys that fall on the same
/// slot.
@Suite struct IdentifierKeyTableTests {
    @Test func answersAsADictionaryDoes() {
        var random = SeededRandom(seed: 11)
        // Started small so that it grows several times; keys from a narrow range repeat and crowd their slots.
        var table = IdentifierKeyTable(capacity: 10)
        var reference: [Int64: Int64] = [:]
        for step in 1...20_000 {
            let key = step % 3 == 0 ? Int64.random(in: -50...50, using: &random) : Int64.random(in: .min ... .max, using: &random)
            let row = Int64.random(in: 1...1_000_000, using: &random)
            table.set(row, for: key)
            reference[key] = row
            if step % 1000 == 0 {
                #expect(table.count == reference.count)
                for probe in reference.keys.prefix(200) { #expect(table.row(for: probe) == reference[probe]) }
            }
        }
        for (key, row) in reference { #expect(table.row(for: key) == row) }
        #expect((0..<1000).allSatisfy { _ in
            let key = Int64.random(in: .min ... .max, using: &random)
            return reference[key] != nil || table.row(for: key) == nil
        })
    }

    /// Twelve keys in sixteen slots (the smallest table, full to three quarters) share slots and probe on.
    @Test func keysOnOneSlotAreKeptApart() {
        var table = IdentifierKeyTable(capacity: 4)
        let keys: [Int64] = (0..<12).map { Int64($0) &* 0x1000_0000_0000 }
        for (index, key) in keys.enumerated() { table.set(Int64(index + 1), for: key) }
        for (index, key) in keys.enumerated() { #expect(table.row(for: key) == Int64(index + 1)) }
        #expect(table.row(for: 12345) == nil)
        table.set(-1, for: keys[3])
        #expect(table.row(for: keys[3]) == -1 && table.count == keys.count)
    }
}
