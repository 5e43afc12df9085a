@testable import SuggestCore
import Testing

@Suite struct DistinctStringsTests {
    @Test func keepsTheFirstOfEachByItsBytesInOrder() {
        var strings = DistinctStrings(["b", "a", "b"])
        #expect(strings.elements == ["b", "a"])
        let addedNew = strings.insert("c")
        let addedAgain = strings.insert("a")
        #expect(addedNew && !addedAgain)
        #expect(strings.elements == ["b", "a", "c"] && strings.count == 3)
        #expect(strings.contains("c") && !strings.contains("d"))
    }

    /// Two spellings of one name, canonically equivalent, are two strings: SQL and Redis compare bytes.
    @Test func equivalentSpellingsAreDistinct() {
        var strings = DistinctStrings()
        let first = strings.insert("Caf\u{E9}")
        let second = strings.insert("Cafe\u{301}")
        #expect(first && second)
        #expect(strings.count == 2)
        #expect(strings.contains("Cafe\u{301}") && strings.contains("Caf\u{E9}"))
    }
}
