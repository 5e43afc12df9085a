import SuggestCore

/// A way of ranking conversations that replay evaluation can measure: the service's own policies (the learned
/// `default` and the `fixed` one before it), an anchor taken from another system (see reference/anchors.md), or
/// any `FrecencyPolicy` or `LearnedPolicy` being tuned.
///
/// Decayed sums (`fixed`, `tdlib`, `firefox`, tuning candidates) are `FrecencyPolicy` values and the learned
/// policies `LearnedPolicy` values; both are ranked by the same code as `suggest list`: `InMemoryRankingIndex`,
/// `Scorer` and `TopKRanker`. The anchors that are not decayed sums (`recency`, `frequency`, `zoxide`, `android`)
/// are scored by their own formulas, documented on each case of `Rule`, from incremental structures.
public struct RankingPolicy: Sendable, Hashable {
    /// How a policy scores a conversation at the moment of a query. In every rule only donations before the query
    /// count, and equal scores fall back to the contract's order: the more recent donation (either direction),
    /// then the smaller `conversationIdentifier` byte-wise.
    public enum Rule: Sendable, Hashable {
        /// `Σ_m β_m · Σ_i w_m(i) · 2^(-age_i / h_m)`, times the group factor, exactly as `suggest list` ranks.
        case frecency(FrecencyPolicy)
        /// A mixture of the channels of `LearnedPolicy.base`, one distribution per channel and kind of
        /// conversation, weighted by what the account has learned from its own earlier sends
        /// (`LearnedWeights`); learned after each send is ranked, never before.
        case learned(LearnedPolicy)
        /// The date of the latest donation in either direction.
        case recency
        /// The number of outgoing donations.
        case frequency
        /// zoxide 0.4.3: outgoing count × 4 when the last outgoing donation is under an hour old, × 2 under a
        /// day, × 0.5 under a week, × 0.25 otherwise; 0 without outgoing donations.
        case zoxide
        /// AOSP Sharesheet (`SharesheetModelScorer.computeScore`) without the MIME term: `probOR(recency,
        /// frequency)` over outgoing donations (the shares); see `SharesheetScore` for the exact reading.
        case android
    }

    /// The name `--policy` takes and results carry.
    public var name: String
    /// How it scores a conversation.
    public var rule: Rule
    /// One line on what the policy does, for `--help` and reports.
    public var summary: String

    /// A policy of any rule, such as an anchor under another name.
    public init(name: String, rule: Rule, summary: String) {
        self.name = name
        self.rule = rule
        self.summary = summary
    }

    /// A policy that ranks with a `FrecencyPolicy`: for tuning candidates and for the decayed anchors.
    public static func frecency(_ policy: FrecencyPolicy, name: String, summary: String = "") -> RankingPolicy {
        RankingPolicy(name: name, rule: .frecency(policy), summary: summary)
    }

    /// A policy that ranks with a `LearnedPolicy`: for tuning candidates of the learner.
    public static func learned(_ policy: LearnedPolicy, name: String, summary: String = "") -> RankingPolicy {
        RankingPolicy(name: name, rule: .learned(policy), summary: summary)
    }

    /// The `FrecencyPolicy` behind the policy, when it is one.
    public var frecencyPolicy: FrecencyPolicy? {
        if case .frecency(let policy) = rule { return policy }
        return nil
    }

    /// The `LearnedPolicy` behind the policy, when it is one.
    public var learnedPolicy: LearnedPolicy? {
        if case .learned(let policy) = rule { return policy }
        return nil
    }

    /// Every named policy, ours first (the learned default, then the fixed one it replaces), then the anchors from
    /// the simplest to the most elaborate.
    public static let all: [RankingPolicy] = [
        .default, .fixed, .recency, .frequency, .tdlib, .firefox, .zoxide, .android,
    ]

    /// The names `named(_:)` accepts, in the order of `all`.
    public static var names: [String] { all.map(\.name) }

    /// The policy called `name`.
    /// - Throws: `UnknownPolicyError`, which lists the valid names, when there is none.
    /// - Complexity: O(p) for p named policies.
    public static func named(_ name: String) throws(UnknownPolicyError) -> RankingPolicy {
        guard let policy = all.first(where: { $0.name == name }) else {
            throw UnknownPolicyError(name: name, validNames: names)
        }
        return policy
    }
}
