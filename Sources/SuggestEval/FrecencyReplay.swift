import SuggestCore

/// Replays one account under a `FrecencyPolicy` with the ranking code `suggest list` uses: an
/// `InMemoryRankingIndex` as the source, `TopKRanker` for the top K, and its `Scorer` and
/// `RankedConversation.ranksBefore` for anything below.
final class FrecencyReplay: AccountReplay {
    let index: InMemoryRankingIndex
    /// K: how deep the top-K query goes (the largest cut-off).
    let depth: Int

    /// The slack, in log space (a relative 1e-6), by which the walk below requires the unseen bound to fall short
    /// of the target: rounding in the bound can then never end the walk too early.
    static let margin = 1e-6

    init(policy: FrecencyPolicy, depth: Int) {
        index = InMemoryRankingIndex(policy: policy)
        self.depth = depth
    }

    /// - Complexity: one top-K query; when the target is outside the top K, a threshold walk that stops as soon as
    ///   no unseen conversation can rank before the target, O(n log n) at worst for n conversations.
    func rank(of conversation: String, at date: Timestamp) throws -> RankedTarget? {
        guard let slot = index.existingSlot(for: conversation) else { return nil }
        let reference = Int64(slot)
        let ranker = TopKRanker(policy: index.policy, context: RankingContext(at: date, limit: depth))
        let top = try ranker.top(in: index)
        if let position = top.firstIndex(where: { $0.reference == reference }) {
            return RankedTarget(rank: position + 1, covered: top[position].logScore > LogSpace.zero)
        }
        guard let candidate = index.candidate(reference, contentKinds: []), ranker.scorer.admits(candidate) else {
            return nil
        }
        let target = ranker.scorer.rank(candidate, matchedPeople: 0)
        let before = try countRankingBefore(target, scorer: ranker.scorer)
        return RankedTarget(rank: before + 1, covered: target.logScore > LogSpace.zero)
    }

    /// How many conversations rank before `target`, by the threshold algorithm's walk: sorted access over every
    /// channel, best bound first, until the most an unseen conversation could score is below the target's score.
    /// Every conversation met is scored exactly by `scorer` and compared with `ranksBefore`.
    func countRankingBefore(_ target: RankedConversation, scorer: Scorer) throws -> Int {
        let lists: [RankingList] = scorer.policy.channels.indices.map { .channel($0) }
        var cursors: [any SortedAccessCursor] = []
        var heads: [(key: Double, reference: Int64)?] = []
        for list in lists {
            var cursor = try index.sortedAccess(list)
            heads.append(try cursor.next())
            cursors.append(cursor)
        }
        var seen: Set<Int64> = [target.reference]
        var count = 0
        while true {
            var threshold = LogSpace.zero
            var widest = -1
            var widestBound = LogSpace.zero
            for position in lists.indices {
                guard let head = heads[position] else { continue }
                let bound = scorer.termBound(lists[position], key: head.key)
                threshold = LogSpace.addExp(threshold, bound)
                if widest < 0 || bound > widestBound {
                    widest = position
                    widestBound = bound
                }
            }
            guard widest >= 0, let head = heads[widest] else { break }
            if threshold + scorer.logMaximumFactor + Self.margin < target.logScore { break }
            heads[widest] = try cursors[widest].next()
            guard seen.insert(head.reference).inserted,
                let candidate = index.candidate(head.reference, contentKinds: []), scorer.admits(candidate)
            else { continue }
            if RankedConversation.ranksBefore(scorer.rank(candidate, matchedPeople: 0), target) { count += 1 }
        }
        return count
    }

    /// Applies the donation's ranking event; the eval context has no content types and no people, so the index's
    /// content sums and people lookup would never be read.
    func apply(_ interaction: Interaction) {
        let slot = index.slot(for: interaction.conversationIdentifier)
        index.apply(ConversationState.Event(interaction), to: slot)
    }
}
