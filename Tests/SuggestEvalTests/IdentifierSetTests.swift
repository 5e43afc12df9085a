import SuggestTestSupport
import Testing

@testable import SuggestEval

@Suite struct IdentifierSetTests {
    /// Against `Set<String>` over many growths, with repeats and identifiers that differ in one character.
    @Test func answersAsASetDoes() {
        var random = SeededRandom(seed: 11)
        var fast = IdentifierSet()
        var reference = Set<String>()
        for _ in 0..<50_000 {
            let identifier = "ID-\(Int.random(in: 0..<20_000, using: &random))"
            #expect(fast.insert(identifier) == reference.insert(identifier).inserted)
        }
        #expect(fast.count == reference.count)
        #expect(fast.insert("") && !fast.insert(""))
    }
}
