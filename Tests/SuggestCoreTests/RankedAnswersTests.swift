import SuggestCore
import Testing

/// The answers a mirror keeps: given again only for the same context (compared byte for byte) and a cutoff that
/// admits everything they list, within their count and byte limits.
@Suite struct RankedAnswersTests {
    static let at = Timestamp(seconds: 2_000_000_000)
    /// An answer whose experts never change between fresh and stale.
    static let always = -Double.infinity..<Double.infinity

    static func list(_ lastDates: [Double]) -> SuggestionList {
        SuggestionList(
            account: "a", at: at,
            suggestions: lastDates.enumerated().map { offset, date in
                Suggestion(
                    rank: offset + 1, conversationIdentifier: "c\(offset)", speakableGroupName: nil, recipients: [],
                    image: nil, conversationImage: nil, serviceName: nil, isGroup: false,
                    lastDate: Timestamp(seconds: date), score: 1, explanation: nil)
            })
    }

    @Test func anAnswerHoldsWhileItsCutoffAdmitsAllItLists() {
        let answers = RankedAnswers()
        let key = RankedAnswers.Key(RankingContext(at: Self.at), explain: false)
        let cutoff = Timestamp(seconds: 1_000)
        let kept = answers.keep(Self.list([5_000, 3_000, 4_000]), for: key, cutoff: cutoff, moments: Self.always)
        #expect(kept.rendering != nil)
        #expect(answers.answer(for: key, cutoff: cutoff, at: Self.at) == kept)
        #expect(answers.answer(for: key, cutoff: Timestamp(seconds: 3_000), at: Self.at) == kept)
        // Later, the oldest listed conversation has gone idle; earlier, others may not have been yet.
        #expect(answers.answer(for: key, cutoff: Timestamp(seconds: 3_001), at: Self.at) == nil)
        #expect(answers.answer(for: key, cutoff: Timestamp(seconds: 999), at: Self.at) == nil)
        // An answer made without a cutoff is not one for a query with a cutoff.
        #expect(answers.answer(for: key, cutoff: nil, at: Self.at) == nil)
    }

    /// An answer holds only at the moments its weights were the same: once an expert goes stale (or a moment before
    /// one was fresh), the ranking is made again.
    @Test func anAnswerHoldsOnlyWhileItsExpertsAreAsTheyWere() {
        let answers = RankedAnswers()
        let key = RankedAnswers.Key(RankingContext(at: Self.at), explain: false)
        let span = (Self.at.seconds - 100)..<(Self.at.seconds + 600)
        let kept = answers.keep(Self.list([5_000]), for: key, cutoff: nil, moments: span)
        #expect(answers.answer(for: key, cutoff: nil, at: Self.at) == kept)
        #expect(answers.answer(for: key, cutoff: nil, at: Self.at.adding(599)) == kept)
        #expect(answers.answer(for: key, cutoff: nil, at: Self.at.adding(600)) == nil)
        #expect(answers.answer(for: key, cutoff: nil, at: Self.at.adding(-101)) == nil)
    }

    @Test func contextsAreComparedByteForByte() {
        let answers = RankedAnswers()
        let precomposed = RankedAnswers.Key(RankingContext(at: Self.at, serviceName: "caf\u{E9}"), explain: false)
        let decomposed = RankedAnswers.Key(RankingContext(at: Self.at, serviceName: "cafe\u{301}"), explain: false)
        #expect(precomposed != decomposed)
        _ = answers.keep(Self.list([1]), for: precomposed, cutoff: nil, moments: Self.always)
        #expect(answers.answer(for: decomposed, cutoff: nil, at: Self.at) == nil)
        // The moment is not part of a context's key; the set of exclusions is, in any order.
        let excluded = RankedAnswers.Key(RankingContext(at: Self.at, excluded: ["x", "y"]), explain: false)
        #expect(excluded == RankedAnswers.Key(RankingContext(at: Self.at.adding(60), excluded: ["y", "x"]), explain: false))
        #expect(excluded != RankedAnswers.Key(RankingContext(at: Self.at, excluded: ["x", "y"]), explain: true))
        #expect(excluded != RankedAnswers.Key(RankingContext(at: Self.at, excluded: ["xy"]), explain: false))
    }

    @Test func answersStayWithinTheirLimits() {
        let one = Self.list([1, 2, 3])
        let size = JSONRendering(one.suggestions).bytes.count + 3 * MemoryLayout<Suggestion>.stride
        // Room for two answers: the third starts the answers over.
        let answers = RankedAnswers(byteLimit: 2 * size + 10)
        let keys = (1...3).map { RankedAnswers.Key(RankingContext(at: Self.at, limit: $0), explain: false) }
        for key in keys { _ = answers.keep(one, for: key, cutoff: nil, moments: Self.always) }
        #expect(answers.answer(for: keys[0], cutoff: nil, at: Self.at) == nil)
        #expect(answers.answer(for: keys[2], cutoff: nil, at: Self.at) != nil)
        // An answer larger than the whole limit is given as it is, not kept.
        let small = RankedAnswers(byteLimit: size - 1)
        #expect(small.keep(one, for: keys[0], cutoff: nil, moments: Self.always).rendering == nil)
        #expect(small.answer(for: keys[0], cutoff: nil, at: Self.at) == nil)
        // At most `limit` answers at once; a context answered again replaces its own answer and leaves the others.
        let many = RankedAnswers()
        func key(_ limit: Int) -> RankedAnswers.Key {
            RankedAnswers.Key(RankingContext(at: Self.at, limit: limit), explain: false)
        }
        for limit in 1...RankedAnswers.limit { _ = many.keep(one, for: key(limit), cutoff: nil, moments: Self.always) }
        _ = many.keep(one, for: key(2), cutoff: nil, moments: Self.always)
        #expect(many.answer(for: key(1), cutoff: nil, at: Self.at) != nil)
        _ = many.keep(one, for: key(RankedAnswers.limit + 1), cutoff: nil, moments: Self.always)
        #expect(many.answer(for: key(1), cutoff: nil, at: Self.at) == nil)
    }
}
