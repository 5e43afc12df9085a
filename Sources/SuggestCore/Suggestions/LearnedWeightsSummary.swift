/// What `--explain` says of an account's learned weights: each channel's weight for people and for groups, and
/// how many sends they were learned from.
public struct LearnedWeightsSummary: Sendable, Equatable {
    /// How many sends to a known conversation the weights were learned from (`LearnedWeights.targets`).
    public var sends: Int
    /// How many sends the prior counts as (`LearnedPolicy.priorStrength`).
    public var priorSends: Double
    /// How many of the latest sends the learned shares stand for against the prior (`LearnedPolicy.horizon`).
    public var horizon: Int
    /// One entry per channel, in the policy's order (`LearnedWeights.explanation(at:policy:)`).
    public var channels: [LearnedWeights.Explanation]

    /// How many half-lives of silence make a channel's experts use their stale weights (`LearnedPolicy.staleAfter`).
    public var staleAfter: Double

    /// The summary of `weights` under `policy`, with the weights in use at `moment`.
    /// - Complexity: O(c) for c channels.
    public init(_ weights: LearnedWeights, at moment: Timestamp, policy: LearnedPolicy) {
        sends = weights.targets
        priorSends = policy.priorStrength
        horizon = policy.horizon
        staleAfter = policy.staleAfter
        channels = weights.explanation(at: moment, policy: policy)
    }
}
