import SuggestCore

/// A lean exact reference for the benchmarks: every conversation scored with the ranker's own `Scorer`, only the
/// best K kept (no sort of the whole population), so that the threshold algorithm is compared with the fastest
/// obvious way rather than with `bruteForce`, which sorts every ranked conversation.
enum LinearScan {
    /// The top `context.limit` of `index` under `ranker`, in the contract's order.
    /// - Complexity: O(n log K) for n conversations.
    static func top(in index: InMemoryRankingIndex, ranker: TopKRanker) -> [RankedConversation] {
        let scorer = ranker.scorer
        let limit = scorer.context.limit
        var matches: [ConversationHandle: Int] = [:]
        if scorer.policy.peopleWeight > 0 {
            for conversations in index.conversations(withPeople: scorer.context.distinctPeople) {
                for conversation in Set(conversations) { matches[conversation, default: 0] += 1 }
            }
        }
        var best: [RankedConversation] = []
        best.reserveCapacity(limit + 1)
        for conversation in index.allConversations() {
            guard let candidate = index.candidate(conversation, contentKinds: scorer.contentKinds),
                scorer.admits(candidate)
            else { continue }
            let ranked = scorer.rank(candidate, matchedPeople: matches[conversation] ?? 0)
            if best.count == limit, let last = best.last, !RankedConversation.ranksBefore(ranked, last) { continue }
            var position = best.count
            while position > 0 && RankedConversation.ranksBefore(ranked, best[position - 1]) { position -= 1 }
            best.insert(ranked, at: position)
            if best.count > limit { best.removeLast() }
        }
        return best
    }
}
