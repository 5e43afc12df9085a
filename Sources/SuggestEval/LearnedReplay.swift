import SuggestCore

/// Replays one account under a `LearnedPolicy`: the channel states in an `InMemoryRankingIndex` (the policy's
/// `base`), the account's `LearnedWeights` beside them, and `TopKRanker`'s exact rank with the weights learned
/// so far. Honest by construction: a send is ranked with the weights learned from the sends before it, and only
/// then learned from (`LearnedWeights.record` learns from the conversation's state before the donation).
final class LearnedReplay: AccountReplay {
    let policy: LearnedPolicy
    let index: InMemoryRankingIndex
    let depth: Int
    /// What the account has learned so far.
    private(set) var weights = LearnedWeights.empty
    /// What the last rank found deeper than the depth leaves for the next (`DeepRankWitnesses`).
    private var witnesses = DeepRankWitnesses()

    init(policy: LearnedPolicy, depth: Int) {
        self.policy = policy
        index = InMemoryRankingIndex(policy: policy.base)
        self.depth = depth
    }

    /// - Complexity: see `TopKRanker.rank(of:in:depth:)`.
    func rank(of conversation: String, at date: Timestamp) throws -> RankedTarget? {
        guard let slot = index.existingSlot(for: conversation) else { return nil }
        let scorer = Scorer(
            policy: policy.base, context: RankingContext(at: date),
            channelOffsets: weights.channelOffsets(at: date, policy: policy))
        var statistics = TopKRanker.Statistics()
        guard
            let ranked = try index.rank(
                of: slot, using: TopKRanker(scorer: scorer), depth: depth, witnesses: &witnesses,
                statistics: &statistics)
        else { return nil }
        return RankedTarget(
            rank: ranked.rank, covered: ranked.ranked.logScore > LogSpace.zero, lastDate: ranked.ranked.lastDate)
    }

    /// Applies the donation to the conversation's state and to the account's weights.
    /// - Complexity: O(1): `InMemoryRankingIndex.apply(_:to:)` and `LearnedWeights.record`.
    func apply(_ donation: ReplayDonation) {
        let slot = index.slot(for: donation.conversation)
        let before = index.states[Int(slot)]
        index.apply(donation.event, to: slot)
        weights.record(donation.event, before: before, after: index.states[Int(slot)], policy: policy)
    }
}
