/// How a store ranks an account's conversations: with channel weights each account learns from its own sends (the
/// default, what `eval` calls `default`), or with a policy's constant weights (what `eval` calls `fixed`).
///
/// Either way the store keeps each conversation's state under one `FrecencyPolicy` (`base`); a learned ranking also
/// keeps each account's `LearnedWeights` beside it, updated at every donation in the order the store records them.
public enum StoreRanking: Sendable, Hashable {
    /// Per-account weights learned online (`LearnedWeights`) over the channels of the policy's `base`.
    case learned(LearnedPolicy)
    /// The policy's own constant channel weights, the same for every account.
    case fixed(FrecencyPolicy)

    /// The learned default: `LearnedPolicy.default`.
    public static let `default` = StoreRanking.learned(.default)

    /// The policy the stored state (channel keys, content sums) is built with.
    public var base: FrecencyPolicy {
        switch self {
        case .learned(let policy): return policy.base
        case .fixed(let policy): return policy
        }
    }

    /// The learned policy, when the ranking learns.
    public var learnedPolicy: LearnedPolicy? {
        if case .learned(let policy) = self { return policy }
        return nil
    }

    /// The scorer of one query: the base's channel shapes and context constants, with the account's learned
    /// channel weights for a learned ranking (`weights` is ignored for a fixed one).
    /// - Parameters:
    ///   - context: the query.
    ///   - weights: what the account has learned (`.empty` for an account with no donation).
    ///   - tree: the type tree content types are read with.
    /// - Complexity: O(c) for c channels.
    public func scorer(context: RankingContext, weights: LearnedWeights, tree: UniformTypeTree = .standard) -> Scorer {
        switch self {
        case .learned(let policy):
            return Scorer(
                policy: policy.base, context: context, channelOffsets: weights.channelOffsets(at: context.at, policy: policy),
                tree: tree)
        case .fixed(let policy):
            return Scorer(policy: policy, context: context, tree: tree)
        }
    }
}
