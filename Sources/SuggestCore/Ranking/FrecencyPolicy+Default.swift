extension FrecencyPolicy {
    /// The policy `list`, `share` and the store use: three speeds, each taking over where the faster one has faded.
    ///
    /// - `reply` (sum, half-life 5 min): the conversations of the last few hours, in the order of their latest
    ///   message; an incoming message weighs 64 = 2^6, so it counts as if it were 6 half-lives (30 min) more recent:
    ///   the person who just wrote is the one most likely answered. A group message weighs 2^-12 of that (it
    ///   counts as an hour older than a person's).
    /// - `latest` (latest donation only, half-life 1 day, β = 1e-19 ≈ 2^-63): after the reply channel has faded
    ///   (about 63 reply half-lives, 5 h), people in the order of their latest message, either direction; when
    ///   one's own message is the latest it weighs 0.5 (counts as a day older), so someone whose message is still
    ///   unanswered comes first. Groups are left out (weight 0).
    /// - `memory` (sum, half-life 30 days, β = 1e-21, incoming 0.1): who one writes to over weeks, groups and
    ///   people alike; it outranks the latest message of a conversation silent for more than log2(100) ≈ 6.6
    ///   days, so a regular contact stays suggested through a quiet week.
    ///
    /// The one-to-one constants were chosen on CollegeMsg, the group weights on Enron, and each confirmed on the
    /// other as far as it can be (docs/ranking-quality.md has the grids, the rules and the figures). The content,
    /// people, "suggest less" and engaged-suggestion constants are not measured by those histories and keep their
    /// earlier values: a person in the shared image (3) or a matching content kind (factor up to 4) outranks any
    /// conversation not exchanged with in the last half hour or so.
    public static let `default` = FrecencyPolicy(
        unchecked: [
            Channel(name: "reply", halfLife: 5 * 60, weight: 1, incoming: 64, engagedBonus: 0.5, group: 0x1p-12),
            Channel(
                name: "latest", halfLife: 86_400, weight: 1e-19, outgoing: 0.5, incoming: 1, engagedBonus: 0.5, group: 0,
                aggregation: .latest),
            Channel(name: "memory", halfLife: 30 * 86_400, weight: 1e-21, incoming: 0.1, engagedBonus: 0.5),
        ],
        contentWeight: 3, contentHalfLife: 30 * 86_400, peopleWeight: 3, groupFactor: 1, lessFactor: 0.25)
}
