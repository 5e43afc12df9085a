/// Computes a conversation's exact score under a policy and a context: the random-access half of the ranker,
/// and the whole of the brute-force reference.
public struct Scorer: Sendable {
    /// The channels' shapes and the factors the scores use.
    public let policy: FrecencyPolicy
    /// The query the scores are for: its moment, what is shared, its people, service and exclusions.
    public let context: RankingContext
    /// The content kinds of the context, in the order the source returns their sums.
    public let contentKinds: [String]
    private let channelRates: [Double]
    /// `ln β_m` for a person's conversation and for a group's; the bound of the walk takes the larger.
    private let channelLogWeights: [Double]
    private let groupChannelLogWeights: [Double]
    private let boundLogWeights: [Double]
    private let logGroupFactor: Double
    private let logLessFactor: Double

    /// The channel weights `β_m` of one query, as natural logarithms, one for a person's conversation and one for
    /// a group's: the policy's own weights, or weights learned for the account (`LearnedWeights`). A logarithm,
    /// not a weight, because a learned weight carries the query time (`ln β = ln π − T + λ·t`), which overflows
    /// a `Double` as a plain number. `-∞` turns a channel off.
    public struct ChannelWeights: Sendable, Hashable {
        /// `ln β_m` for conversations with one other person, in the policy's channel order.
        public var person: [Double]
        /// `ln β_m` for group conversations.
        public var group: [Double]

        /// - Parameters:
        ///   - person: one logarithm per channel of the policy.
        ///   - group: as many, for groups.
        public init(person: [Double], group: [Double]) {
            self.person = person
            self.group = group
        }
    }

    /// A scorer with the policy's own channel weights.
    public init(policy: FrecencyPolicy, context: RankingContext, tree: UniformTypeTree = .standard) {
        let logWeights = policy.channels.map { LogSpace.ln($0.weight) }
        self.init(policy: policy, context: context, channelWeights: ChannelWeights(person: logWeights, group: logWeights), tree: tree)
    }

    /// A scorer whose channel weights are given for this query: the policy's channel shapes (half-lives, donation
    /// weights) and context constants, with `channelWeights` in place of the channels' `weight`.
    ///
    /// The score stays a non-negative combination of the channels' terms, so the threshold walk stays exact: its
    /// bound per channel takes the larger of the two weights. Group conversations are still multiplied by the
    /// policy's `groupFactor`.
    /// - Parameters:
    ///   - channelWeights: one logarithm per channel for people and one for groups; the counts must match the
    ///     policy's channels.
    public init(
        policy: FrecencyPolicy, context: RankingContext, channelWeights: ChannelWeights, tree: UniformTypeTree = .standard
    ) {
        precondition(
            channelWeights.person.count == policy.channels.count && channelWeights.group.count == policy.channels.count,
            "one channel weight per channel")
        self.policy = policy
        self.context = context
        self.contentKinds = policy.contentWeight > 0 ? context.contentKinds(in: tree) : []
        channelRates = policy.channels.map(\.rate)
        channelLogWeights = channelWeights.person
        groupChannelLogWeights = channelWeights.group
        boundLogWeights = zip(channelWeights.person, channelWeights.group).map { max($0, $1) }
        logGroupFactor = LogSpace.ln(policy.groupFactor)
        logLessFactor = LogSpace.ln(policy.lessFactor)
    }

    /// Whether the context allows suggesting this conversation at all.
    public func admits(_ candidate: RankingCandidate) -> Bool {
        let state = candidate.state
        guard !state.isBlocked, state.hasDonations else { return false }
        if let cutoff = context.notIdleSince, state.lastDate < cutoff { return false }
        // Byte for byte, as a service's sorted lists hold its conversations.
        if let service = context.serviceName, candidate.serviceName?.hasSameBytes(as: service) != true { return false }
        // `contains` on an empty set would still hash the identifier, on every conversation a query meets.
        return context.excluded.isEmpty || !context.excluded.contains(candidate.conversationIdentifier)
    }

    /// The most that channel `index` can add, in log space, for a conversation whose key `A_m` is at most `key`.
    @inline(__always)
    public func channelBound(_ index: Int, key: Double) -> Double {
        boundLogWeights[index] + key - channelRates[index] * context.at.seconds
    }

    /// The largest factor the channel sum of a conversation not met by a people look-up can be multiplied by:
    /// the content factor at its fullest and a group preference above 1. Added to the channel bounds, it makes
    /// the threshold of the top-K walk over every conversation.
    public var logMaximumFactor: Double {
        var factor = logGroupFactorBound
        if !contentKinds.isEmpty { factor += LogSpace.ln(1 + policy.contentWeight) }
        return factor
    }

    /// The largest factor the group preference can give (`ln g` when groups are preferred, else 0): "suggest less"
    /// only lowers a score (`lessFactor` ≤ 1).
    public var logGroupFactorBound: Double { max(0, logGroupFactor) }

    /// The exact ranked form of a candidate.
    /// - Parameter matchedPeople: how many of the context's people take part in the conversation.
    public func rank(_ candidate: RankingCandidate, matchedPeople: Int, explain: Bool = false) -> RankedConversation {
        let state = candidate.state
        let t = context.at.seconds
        var logTotal = LogSpace.zero
        var terms: [ScoreBreakdown.Term] = []
        if explain { terms.reserveCapacity(policy.channels.count + 1) }
        let logWeights = state.isGroup ? groupChannelLogWeights : channelLogWeights
        for index in channelRates.indices {
            let term = logWeights[index] + state.channels[index] - channelRates[index] * t
            logTotal = LogSpace.addExp(logTotal, term)
            if explain { terms.append(.init(name: policy.channels[index].name, value: LogSpace.value(term))) }
        }
        if !context.people.isEmpty {
            // π·m·(1 + base): a person in the shared photo lifts even a quiet conversation with them, and lifts a
            // busy one in proportion. Only conversations with a match get it, and the ranker scores all of those
            // up front, so it needs no sorted list.
            let people =
                matchedPeople > 0
                ? LogSpace.ln(policy.peopleWeight * Double(matchedPeople)) + LogSpace.addExp(0, logTotal)
                : LogSpace.zero
            logTotal = LogSpace.addExp(logTotal, people)
            if explain { terms.append(.init(name: "people", value: LogSpace.value(people))) }
        }
        var logFactor = 0.0
        var contentShare = 0.0
        if !contentKinds.isEmpty {
            // 1 + γ·s, with s the decayed share of the conversation's donations that carried the shared kinds:
            // a factor in [1, 1 + γ], the same for light and heavy users.
            var kinds = LogSpace.zero
            for sum in candidate.contentSums { kinds = LogSpace.addExp(kinds, sum) }
            contentShare = state.contentTotal > LogSpace.zero ? min(1, LogSpace.value(kinds - state.contentTotal)) : 0
            logFactor += LogSpace.ln(1 + policy.contentWeight * contentShare)
        }
        if state.isGroup { logFactor += logGroupFactor }
        if state.lessFeedback > 0 { logFactor += logLessFactor * Double(state.lessFeedback) }
        let breakdown = ScoreBreakdown(
            terms: terms, factor: explain ? LogSpace.value(logFactor) : 1, contentShare: contentShare,
            matchedPeople: matchedPeople, lessFeedback: state.lessFeedback)
        return RankedConversation(
            conversation: candidate.conversation, conversationIdentifier: candidate.conversationIdentifier,
            logScore: logTotal + logFactor, lastDate: state.lastDate, state: state, breakdown: breakdown)
    }
}
