import SuggestCore

/// Replays one account under a `FrecencyPolicy` with the ranking code `suggest list` uses: an
/// `InMemoryRankingIndex` as the source, and `TopKRanker`'s exact rank (its `Scorer`, `ranksBefore` and
/// threshold walk), down to `depth`.
final class FrecencyReplay: AccountReplay {
    let index: InMemoryRankingIndex
    let depth: Int
    /// What the last rank found deeper than the depth leaves for the next (`DeepRankWitnesses`).
    private var witnesses = DeepRankWitnesses()

    init(policy: FrecencyPolicy, depth: Int) {
        index = InMemoryRankingIndex(policy: policy)
        self.depth = depth
    }

    /// - Complexity: see `TopKRanker.rank(of:in:depth:)`: a scan of a small account, or a walk that stops as soon
    ///   as no unseen conversation can rank before the target, or once `depth` of them do.
    func rank(of conversation: String, at date: Timestamp) throws -> RankedTarget? {
        guard let slot = index.existingSlot(for: conversation) else { return nil }
        let ranker = TopKRanker(policy: index.policy, context: RankingContext(at: date))
        var statistics = TopKRanker.Statistics()
        guard
            let ranked = try index.rank(
                of: slot, using: ranker, depth: depth, witnesses: &witnesses, statistics: &statistics)
        else { return nil }
        return RankedTarget(
            rank: ranked.rank, covered: ranked.ranked.logScore > LogSpace.zero, lastDate: ranked.ranked.lastDate)
    }

    /// Applies the donation's ranking event; the eval context has no content types and no people, so the index's
    /// content sums and people lookup would never be read.
    func apply(_ donation: ReplayDonation) {
        let slot = index.slot(for: donation.conversation)
        index.apply(donation.event, to: slot)
    }
}
