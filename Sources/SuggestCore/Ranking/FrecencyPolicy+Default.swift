extension FrecencyPolicy {
    /// The policy `list`, `share` and the store use: three speeds, each taking over where the faster one has faded.
    ///
    /// - `reply` (half-life 5 min): the conversations of the last few hours, in the order of their latest message;
    ///   an incoming message weighs 64 = 2^6, so it counts as if it were 6 half-lives (30 min) more recent: the
    ///   person who just wrote is the one most likely answered.
    /// - `recent` (half-life 1 day, β = 1e-20 ≈ 2^-66): takes over about 66 reply half-lives (5.5 h) after the
    ///   latest message; both directions count the same.
    /// - `memory` (half-life 30 days, β = 1e-21, incoming 0.1): takes over after about 3.3 days of silence
    ///   (log2 10 days), so a regular contact stays suggested through a quiet week; mostly what one sends counts.
    ///
    /// Chosen by replay on CollegeMsg with the memory required, then checked on Enron (docs/ranking-quality.md has
    /// the grids and figures). The content, people, group, "suggest less" and engaged-suggestion constants are not
    /// measured by those histories and keep their earlier values: a person in the shared image (2) or a matching
    /// content kind (0.5) outranks any conversation not exchanged with in the last half hour or so.
    public static let `default` = FrecencyPolicy(
        channels: [
            Channel(name: "reply", halfLife: 5 * 60, weight: 1, incoming: 64, engagedBonus: 0.5),
            Channel(name: "recent", halfLife: 86_400, weight: 1e-20, incoming: 1, engagedBonus: 0.5),
            Channel(name: "memory", halfLife: 30 * 86_400, weight: 1e-21, incoming: 0.1, engagedBonus: 0.5),
        ],
        contentWeight: 3, contentHalfLife: 30 * 86_400, peopleWeight: 3, groupFactor: 1, lessFactor: 0.25)
}
