import SuggestTestSupport
import Testing

@testable import SuggestCore

@Suite struct ReferenceSetTests {
    /// Random references, repeated, clustered and extreme (`Int64.min` is the empty-slot marker), against `Set`.
    @Test func agreesWithSetThroughGrowth() {
        var random = SeededRandom(seed: 11)
        var set = ReferenceSet()
        var reference: Set<Int64> = []
        let extremes: [Int64] = [.min, .max, 0, -1, 1]
        for round in 0..<5_000 {
            let value: Int64
            switch Int.random(in: 0..<4, using: &random) {
            case 0: value = extremes.randomElement(using: &random)!
            case 1: value = Int64.random(in: 1...200, using: &random)  // consecutive row ids
            default: value = Int64.random(in: .min ... .max, using: &random)
            }
            #expect(set.insert(value) == reference.insert(value).inserted, "round \(round): \(value)")
            #expect(set.count == reference.count)
        }
        for value in extremes + (0..<300).map({ Int64($0) }) {
            #expect(set.contains(value) == reference.contains(value), "\(value)")
        }
        #expect(!ReferenceSet().contains(.min) && !ReferenceSet().contains(0))
    }
}
