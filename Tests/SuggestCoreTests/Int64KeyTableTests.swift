import SuggestTestSupport
import Testing

@testable import SuggestCore

/// `Int64KeyTable` answers as a `Dictionary` does (and, used as a set, as a `Set`), through growth, replaced values
/// and keys that fall on the same slot.
@Suite struct Int64KeyTableTests {
    @Test func answersAsADictionaryDoes() {
        var random = SeededRandom(seed: 11)
        // Started small so that it grows several times; keys from a narrow range repeat and crowd their slots.
        var table = Int64KeyTable(capacity: 10)
        var reference: [Int64: Int64] = [:]
        for step in 1...20_000 {
            let key = step % 3 == 0 ? Int64.random(in: -50...50, using: &random) : Int64.random(in: .min ... .max, using: &random)
            let row = Int64.random(in: 1...1_000_000, using: &random)
            table.set(row, for: key)
            reference[key] = row
            if step % 1000 == 0 {
                #expect(table.count == reference.count)
                for probe in reference.keys.prefix(200) { #expect(table.value(for: probe) == reference[probe]) }
            }
        }
        for (key, row) in reference { #expect(table.value(for: key) == row) }
        #expect((0..<1000).allSatisfy { _ in
            let key = Int64.random(in: .min ... .max, using: &random)
            return reference[key] != nil || table.value(for: key) == nil
        })
    }

    /// Twelve keys in sixteen slots (the smallest table, full to three quarters) share slots and probe on.
    @Test func keysOnOneSlotAreKeptApart() {
        var table = Int64KeyTable(capacity: 4)
        let keys: [Int64] = (0..<12).map { Int64($0) &* 0x1000_0000_0000 }
        for (index, key) in keys.enumerated() { table.set(Int64(index + 1), for: key) }
        for (index, key) in keys.enumerated() { #expect(table.value(for: key) == Int64(index + 1)) }
        #expect(table.value(for: 12345) == nil)
        table.set(-1, for: keys[3])
        #expect(table.value(for: keys[3]) == -1 && table.count == keys.count)
    }

    /// As the top-K walk uses it, a set of references: random, repeated, consecutive row ids and extremes
    /// (`Int64.min` and 0 are keys like any other), against `Set`.
    @Test func answersAsASetDoes() {
        var random = SeededRandom(seed: 11)
        var table = Int64KeyTable(capacity: 24)
        var reference: Set<Int64> = []
        let extremes: [Int64] = [.min, .max, 0, -1, 1]
        for round in 0..<5_000 {
            let value: Int64
            switch Int.random(in: 0..<4, using: &random) {
            case 0: value = extremes.randomElement(using: &random)!
            case 1: value = Int64.random(in: 1...200, using: &random)
            default: value = Int64.random(in: .min ... .max, using: &random)
            }
            #expect(table.set(1, for: value) == reference.insert(value).inserted, "round \(round): \(value)")
            #expect(table.count == reference.count)
        }
        for value in extremes + (0..<300).map({ Int64($0) }) {
            #expect((table.value(for: value) != nil) == reference.contains(value), "\(value)")
        }
        #expect(Int64KeyTable(capacity: 0).value(for: .min) == nil && Int64KeyTable(capacity: 0).value(for: 0) == nil)
    }
}
