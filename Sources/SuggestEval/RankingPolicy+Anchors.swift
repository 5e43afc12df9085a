import SuggestCore

extension RankingPolicy {
    /// The service's own policy, `LearnedPolicy.default`: four channels whose weights each account learns from
    /// its own sends.
    public static let `default` = RankingPolicy.learned(
        .default, name: "default",
        summary: "ours: LearnedPolicy.default (reply, latest, memory and recency channels, weights learned per account)")

    /// The fixed policy before the learned one, `FrecencyPolicy.default`: three channels with constant weights
    /// twenty orders of magnitude apart.
    public static let fixed = RankingPolicy.frecency(
        .default, name: "fixed",
        summary: "ours before learning: FrecencyPolicy.default (reply, latest and memory channels, fixed weights)")

    /// The latest donation in either direction first.
    public static let recency = RankingPolicy(
        name: "recency", rule: .recency, summary: "latest donation, either direction, first")

    /// The most outgoing donations first.
    public static let frequency = RankingPolicy(
        name: "frequency", rule: .frequency, summary: "most outgoing donations first")

    /// TDLib top dialogs (`TopDialogManager.cpp`): each outgoing donation adds `e^(-age / 241920 s)`; incoming
    /// donations do not count. As a `FrecencyPolicy`: one channel whose half-life is `241920 · ln 2` s (1.94 d).
    public static let tdlib = RankingPolicy.frecency(
        FrecencyPolicy(unchecked: [
            .init(
                name: "tdlib", halfLife: 241_920 * 0.693_147_180_559_945_3, weight: 1, outgoing: 1, incoming: 0,
                unspecified: 0)
        ]),
        name: "tdlib", summary: "TDLib top dialogs: Σ over outgoing of e^(-age/241920 s)")

    /// Firefox frecency (ranking.rst): a 30-day half-life, 100 per outgoing and 20 per incoming donation.
    public static let firefox = RankingPolicy.frecency(
        FrecencyPolicy(unchecked: [
            .init(name: "firefox", halfLife: 30 * 86_400, weight: 1, outgoing: 100, incoming: 20, unspecified: 0)
        ]),
        name: "firefox", summary: "Firefox frecency: 30-day half-life, 100 per outgoing, 20 per incoming")

    /// zoxide 0.4.3: outgoing count times a factor for the age of the last outgoing donation.
    public static let zoxide = RankingPolicy(
        name: "zoxide", rule: .zoxide, summary: "zoxide: outgoing count × 4/2/0.5/0.25 by age of the last (1 h/1 d/1 wk)")

    /// AOSP Sharesheet: probOR of a recency score for the 6 latest share targets and a normalized frequency.
    public static let android = RankingPolicy(
        name: "android", rule: .android,
        summary: "AOSP Sharesheet: probOR(recency of 6 latest, bucketed frequency / mean), no MIME term")
}
