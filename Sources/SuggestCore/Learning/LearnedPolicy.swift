/// A ranking policy whose channel weights are learned for each account from its own history: the channel shapes
/// (half-lives, donation weights) and the context constants come from a `FrecencyPolicy`; how much each channel
/// counts, for people and for groups, is `LearnedWeights`, updated at every donation.
///
/// The score of a conversation `c` of kind `k` (a person or a group) at any moment is a mixture
///
///     P(c) = Σ_m π_{m,k} · e^(A_m(c) − T_{m,k})
///
/// of one distribution per channel and kind: `e^(A_m(c) − T_{m,k})` is the share of channel `m`'s mass over the
/// account's conversations of kind `k` that `c` holds (`T_{m,k}` is the logarithm of that mass), so each channel
/// is an expert that says who is written to next. At each outgoing donation, before the donation is applied, the
/// mixture weights `π` move towards each expert's responsibility for the conversation actually written to
/// (online expectation-maximization for the weights of a mixture, Cappé and Moulines 2009): they are the
/// maximum-likelihood weights over the account's last `horizon` sends, drawn towards a prior by `priorStrength`
/// pseudo-sends. The prior splits each channel's share between people and groups by the mass each kind holds in
/// it, so a new account ranks as an unweighted mixture of the channels.
///
/// Each expert has two weights: one for the moments its kind's mass in the channel is fresh, one for those it is
/// stale (`staleAfter` half-lives of silence; `LearnedWeights.isFresh`). A share holds no moment, so without this
/// the five-minute experts gave "the latest person" a share near 1 an hour or a week later as a minute later;
/// with it each account learns how much an old "latest" still says of its next send, and a send teaches only the
/// weights in use at its moment (the specialists of Freund, Schapire, Singer and Warmuth 1997).
///
/// The score is a non-negative combination of the channel terms `e^(A_m − λ_m·t)` (its weights are
/// `π_{m,k} · e^(λ_m·t − T_{m,k})`), so `TopKRanker`'s threshold walk stays exact; the context factors (content,
/// people, "suggest less") apply to it as to any `FrecencyPolicy`.
public struct LearnedPolicy: Sendable, Hashable {
    /// The channel shapes and context constants; the channels' own `weight` is not used.
    public let base: FrecencyPolicy
    /// How many sends the prior counts as (`n₀`): the weight of the prior against what has been learned.
    public let priorStrength: Double
    /// How many of the latest sends the weights are fitted to (`H`): the step of the update is
    /// `1 / min(n + 1, H)` at the n-th send, a running mean that becomes a moving one after `H` sends, so the
    /// weights follow a person whose habits change.
    public let horizon: Int
    /// The prior's relative weight of each channel, in the order of `base.channels`, normalized here.
    public let channelPrior: [Double]
    /// After how many of its half-lives without a donation a channel's mass of one kind is stale: below
    /// `2^-staleAfter`, what one donation of weight 1 leaves after that silence. Its experts then rank and learn
    /// with their stale weights.
    public let staleAfter: Double
    /// Eight half-lives: what one donation of weight 1 leaves after them, 2^-8, is under a 250th of itself.
    public static let defaultStaleAfter = 8.0

    /// A learned policy, checked.
    /// - Parameters:
    ///   - base: the channel shapes; every `latest` channel must give every donation a positive weight (the
    ///     account's mass of a `latest` channel is updated by taking a conversation's old key out of it, which
    ///     is exact only when the new key is not far below the old one).
    ///   - priorStrength: `n₀`, above 0.
    ///   - horizon: `H`, at least 1.
    ///   - channelPrior: one non-negative weight per channel, not all 0; equal weights when `nil`.
    ///   - staleAfter: half-lives of silence after which a channel's experts use their stale weights, above 0.
    /// - Throws: `PolicyError` naming the first value out of range.
    public init(
        base: FrecencyPolicy, priorStrength: Double = 2, horizon: Int = 32, channelPrior: [Double]? = nil,
        staleAfter: Double = LearnedPolicy.defaultStaleAfter
    ) throws(PolicyError) {
        if let problem = Self.problem(
            base: base, priorStrength: priorStrength, horizon: horizon, channelPrior: channelPrior,
            staleAfter: staleAfter)
        {
            throw PolicyError(message: problem)
        }
        self.init(
            unchecked: base, priorStrength: priorStrength, horizon: horizon, channelPrior: channelPrior,
            staleAfter: staleAfter)
    }

    /// A learned policy from constants written in this package (`default`), which its tests check with `problem`.
    package init(
        unchecked base: FrecencyPolicy, priorStrength: Double = 2, horizon: Int = 32, channelPrior: [Double]? = nil,
        staleAfter: Double = LearnedPolicy.defaultStaleAfter
    ) {
        let prior = channelPrior ?? Array(repeating: 1, count: base.channels.count)
        let total = prior.reduce(0, +)
        self.base = base
        self.priorStrength = priorStrength
        self.horizon = horizon
        self.channelPrior = prior.map { $0 / total }
        self.staleAfter = staleAfter
    }

    /// What makes these values unusable as a learned policy, or `nil`.
    package static func problem(
        base: FrecencyPolicy, priorStrength: Double, horizon: Int, channelPrior: [Double]?, staleAfter: Double
    ) -> String? {
        if let problem = base.problem { return problem }
        guard priorStrength > 0 && priorStrength.isFinite else {
            return "priorStrength must be a positive number of sends, not \(priorStrength)"
        }
        guard horizon >= 1 else { return "horizon must be at least 1 send, not \(horizon)" }
        guard staleAfter > 0 && staleAfter.isFinite else {
            return "staleAfter must be a positive number of half-lives, not \(staleAfter)"
        }
        for channel in base.channels where channel.aggregation == .latest {
            let weights = [
                channel.outgoing, channel.outgoing + channel.engagedBonus, channel.incoming, channel.unspecified,
            ]
            guard channel.group > 0 && weights.allSatisfy({ $0 > 0 && $0.isFinite }) else {
                return
                    "channel '\(channel.name)': a learned `latest` channel needs a positive weight for every donation"
            }
        }
        let prior = channelPrior ?? Array(repeating: 1, count: base.channels.count)
        guard prior.count == base.channels.count else {
            return "channelPrior has \(prior.count) weights for \(base.channels.count) channels"
        }
        guard prior.allSatisfy({ $0 >= 0 && $0.isFinite }) else {
            return "channelPrior's weights must be finite numbers of 0 or more"
        }
        guard prior.reduce(0, +) > 0 else { return "channelPrior needs a weight above 0 for at least one channel" }
        return nil
    }

    /// What an account's stored `LearnedWeights` depend on: the channel shapes their masses are kept in
    /// (`base.stateFingerprintForWeights`) and the learner's constants. A store whose weights were learned under
    /// another fingerprint folds every account's history again (`DonationStore.maintain`). `kinds:moved`: a
    /// conversation that becomes a group moves its mass from the people's total to the groups'
    /// (`LearnedWeights.record`);
    /// `log-responsibilities`: a send's responsibilities are computed from logarithms (`LearnedWeights.learn`);
    /// `stale:`: the half-lives after which experts use their stale weights.
    ///
    /// Built from `Double.description` and integers, as `FrecencyPolicy.stateFingerprintForWeights` is, so that no
    /// run-time reflection runs at a command's start.
    public var weightsFingerprint: String {
        var text = base.stateFingerprintForWeights + ";learned:" + priorStrength.description + ":" + String(horizon)
        for weight in channelPrior { text += ":" + weight.description }
        return text + ";kinds:moved;log-responsibilities;stale:" + staleAfter.description
    }

    /// The learned policy `eval` calls `default`: the three speeds of `FrecencyPolicy.default` and a channel of pure
    /// recency, each with groups counted like people (the learned group weights do what the fixed policy's
    /// per-channel group weights did), and that policy's context constants.
    ///
    /// - `reply` (sum, 5 min, an incoming message weighs 64): the last exchanges, whoever just wrote first.
    /// - `latest` (latest donation, 1 day, one's own message weighs 0.5): by the latest message, an unanswered
    ///   one first.
    /// - `memory` (sum, 30 days, incoming 0.1; a share that started from a suggestion weighs 1.5): who one writes
    ///   to over weeks.
    /// - `recency` (latest donation, 5 min, either direction 1): the conversation of the very latest message,
    ///   one's own included, far ahead of the one before: an account that writes in bursts, or keeps a thread
    ///   going, writes next where it just wrote, which no other expert ranks first (`reply` puts anyone who
    ///   wrote in the last half hour first, `latest` counts one's own message as a day older).
    ///
    /// `recency` took the place of an expert of the shares started from a suggestion: on the bursty generated
    /// account it adds 0.072 of MRR and 0.0048 on the SMS stand-in, and changes neither CollegeMsg nor Enron
    /// (docs/ranking-quality.md), where the engagement expert moved nothing measurable on the one history with
    /// such shares. Those shares weigh more in `memory` instead (a bonus, not a learned weight).
    ///
    /// Two constants of the learner: the prior counts as 2 sends, and the weights are fitted to the last 32 sends
    /// (docs/ranking-quality.md has the grid they were read from and how little it matters).
    public static let `default` = LearnedPolicy(
        unchecked: FrecencyPolicy(
            unchecked: [
                .init(name: "reply", halfLife: 5 * 60, weight: 1, incoming: 64),
                .init(name: "latest", halfLife: 86_400, weight: 1, outgoing: 0.5, incoming: 1, aggregation: .latest),
                .init(name: "memory", halfLife: 30 * 86_400, weight: 1, incoming: 0.1, engagedBonus: 0.5),
                .init(name: "recency", halfLife: 5 * 60, weight: 1, outgoing: 1, incoming: 1, aggregation: .latest),
            ],
            contentWeight: 3, contentHalfLife: 30 * 86_400, peopleWeight: 3, groupFactor: 1, lessFactor: 0.25),
        priorStrength: 2, horizon: 32)
}
