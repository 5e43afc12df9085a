import SuggestCore
import Testing

@testable import SuggestRedisStore

/// The learned weights' value in Redis: this version's round trip, and the value 0.3.2 wrote (version 1, no stale
/// shares), which is read with each expert's one share as both, so that an account not yet folded again ranks as
/// it did, as the embedded store's migration 11 starts it.
@Suite struct WeightsCodingTests {
    static let weights = LearnedWeights(
        personTotals: SIMD4(1.5, -2, LogSpace.zero, 4e6), groupTotals: SIMD4(LogSpace.zero, 0.25, 3, -7),
        personShares: SIMD4(0.1, 0.2, 0.3, 0.05), groupShares: SIMD4(0.05, 0.1, 0.15, 0.05),
        personStaleShares: SIMD4(0.01, 0.4, 0.35, 0), groupStaleShares: SIMD4(0, 0.2, 0.04, 0), targets: 77)

    @Test func theWeightsComeBackToTheBit() throws {
        #expect(try RecordCoding.decodeWeights(RecordCoding.encode(Self.weights)) == Self.weights)
    }

    @Test func theValueOfTheVersionBeforeReadsEachShareAsBoth() throws {
        var writer = ByteWriter()
        writer.byte(1)
        let old = Self.weights
        for vector in [old.personTotals, old.groupTotals, old.personShares, old.groupShares] {
            for index in 0..<4 { writer.double(vector[index]) }
        }
        writer.integer(old.targets)
        let read = try RecordCoding.decodeWeights(writer.bytes)
        #expect(read.personTotals == old.personTotals && read.groupTotals == old.groupTotals)
        #expect(read.personShares == old.personShares && read.groupShares == old.groupShares)
        #expect(read.personStaleShares == old.personShares && read.groupStaleShares == old.groupShares)
        #expect(read.targets == old.targets)
        // A value cut short, or of a version this one does not know, is damaged, not guessed at.
        #expect(throws: StoreError.self) { try RecordCoding.decodeWeights(Array(writer.bytes.dropLast())) }
        var unknown = writer.bytes
        unknown[0] = 3
        #expect(throws: StoreError.self) { try RecordCoding.decodeWeights(unknown) }
    }
}
