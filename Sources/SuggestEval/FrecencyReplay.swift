import SuggestCore

/// Replays one account under a `FrecencyPolicy` with the ranking code `suggest list` uses: an
/// `InMemoryRankingIndex` as the source, `TopKRanker` for the top K, and its `Scorer` and
/// `RankedConversation.ranksBefore` for anything below.
final class FrecencyReplay: AccountReplay {
    let index: InMemoryRankingIndex
    /// K: how deep the top-K query goes (the largest cut-off).
    let depth: Int

    init(policy: FrecencyPolicy, depth: Int) {
        index = InMemoryRankingIndex(policy: policy)
        self.depth = depth
    }

    /// - Complexity: one top-K query; when the target is outside the top K, the same walk counting the
    ///   conversations that rank before it, stopping as soon as no unseen one can.
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
        let before = try ranker.countRankingBefore(target, in: index)
        return RankedTarget(rank: before + 1, covered: target.logScore > LogSpace.zero)
    }

    /// Applies the donation's ranking event; the eval context has no content types and no people, so the index's
    /// content sums and people lookup would never be read.
    func apply(_ interaction: Interaction) {
        let slot = index.slot(for: interaction.conversationIdentifier)
        index.apply(ConversationState.Event(interaction), to: slot)
    }
}
