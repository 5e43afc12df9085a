extension FrecencyPolicy {
    /// The policy `list`, `share` and the store use: a short and a long half-life blended, outgoing donations
    /// counting more than incoming ones. Tuned by replay on real histories (see docs/ranking-quality.md).
    public static let `default` = FrecencyPolicy(
        channels: [
            Channel(name: "short-term", halfLife: 2 * 86_400, weight: 1, incoming: 0.3, engagedBonus: 0.5),
            Channel(name: "long-term", halfLife: 21 * 86_400, weight: 0.2, incoming: 0.3, engagedBonus: 0.5),
        ],
        contentWeight: 0.5, contentHalfLife: 30 * 86_400, peopleWeight: 3, groupFactor: 1, lessFactor: 0.25)
}
