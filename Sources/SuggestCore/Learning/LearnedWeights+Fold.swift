extension LearnedWeights {
    /// The weights of an account whose history is `donations`, applied in that order from nothing: what a store
    /// recomputes after a deletion, from the donations that remain, in the order they were recorded.
    ///
    /// The result equals, bit for bit, the weights an account reaches by `record(_:before:after:policy:)` over
    /// the same donations in the same order, so after a deletion the weights are those of a history that never
    /// had the deleted donations.
    /// - Parameters:
    ///   - donations: each donation's conversation (any key that tells conversations apart) and ranking event.
    ///   - policy: the learned policy.
    /// - Returns: the weights, and each conversation's ranking state under `policy.base`.
    /// - Complexity: O(n) for n donations, with one dictionary look-up each.
    public static func fold<Conversation: Hashable>(
        _ donations: some Sequence<(conversation: Conversation, event: ConversationState.Event)>, policy: LearnedPolicy
    ) -> (weights: LearnedWeights, states: [Conversation: ConversationState]) {
        var iterator = donations.makeIterator()
        return fold(policy: policy) { iterator.next() }
    }

    /// `fold(_:policy:)` over donations read one at a time by `next`, for a store that decodes them as it goes
    /// (a read that can fail, and a history that need not fit in memory at once).
    /// - Parameters:
    ///   - policy: the learned policy.
    ///   - next: the next donation in recording order, `nil` at the end.
    /// - Returns: the weights, and each conversation's ranking state under `policy.base`.
    /// - Throws: whatever `next` throws.
    /// - Complexity: O(n) for n donations, with one dictionary look-up each; memory for one state per conversation.
    public static func fold<Conversation: Hashable>(
        policy: LearnedPolicy, next: () throws -> (conversation: Conversation, event: ConversationState.Event)?
    ) rethrows -> (weights: LearnedWeights, states: [Conversation: ConversationState]) {
        var weights = LearnedWeights.empty
        var states: [Conversation: ConversationState] = [:]
        while let (conversation, event) = try next() {
            let before = states[conversation] ?? .empty
            var after = before
            after.apply(event, policy: policy.base)
            weights.record(event, before: before, after: after, policy: policy)
            states[conversation] = after
        }
        return (weights, states)
    }

    /// What `--explain` prints of an account's learned weights: per channel, the share of the ranking it holds
    /// for people and for groups, and the prior it started from.
    public struct Explanation: Sendable, Equatable {
        /// The channel's name in the policy (`reply`, `latest`, `memory`, `recency`).
        public var channel: String
        /// `π_{m,person}`: the weight the channel has for conversations with one person, at the moment (0 to 1; the
        /// weights in use need not sum to 1, since fresh and stale weights learn from other sends: their ratios
        /// rank).
        public var person: Double
        /// `π_{m,group}`: the same for groups.
        public var group: Double
        /// The channel's prior weight, both kinds together (what a new account starts from).
        public var prior: Double
        /// Whether `person` is the fresh weight (`LearnedWeights.isFresh`), else the stale one; a kind with no mass
        /// in the channel, which has no weight to choose, counts as fresh.
        public var personIsFresh: Bool
        /// The same for groups.
        public var groupIsFresh: Bool
    }

    /// The learned weights in use at `moment` channel by channel, for `--explain`, and how many sends they were
    /// learned from (`targets`; the prior counts as `policy.priorStrength` more).
    /// - Returns: one entry per channel of `policy.base`, in its order.
    public func explanation(at moment: Timestamp, policy: LearnedPolicy) -> [Explanation] {
        let fresh = freshness(at: moment, policy: policy)
        let mixture = mixture(fresh, policy: policy)
        return policy.base.channels.indices.map { index in
            Explanation(
                channel: policy.base.channels[index].name, person: mixture.person[index], group: mixture.group[index],
                prior: policy.channelPrior[index],
                personIsFresh: personTotals[index] == LogSpace.zero || fresh.person[index],
                groupIsFresh: groupTotals[index] == LogSpace.zero || fresh.group[index])
        }
    }
}
