/// Computes a conversation's exact score under a policy and a context: the random-access half of the ranker,
/// and the whole of the brute-force reference.
public struct Scorer: Sendable {
    public let policy: FrecencyPolicy
    public let context: RankingContext
    /// The content kinds of the context, in the order the source returns their sums.
    public let contentKinds: [String]
    private let channelRates: [Double]
    private let channelLogWeights: [Double]
    private let logGroupFactor: Double
    private let logLessFactor: Double

    public init(policy: FrecencyPolicy, context: RankingContext, tree: UniformTypeTree = .standard) {
        self.policy = policy
        self.context = context
        self.contentKinds = policy.contentWeight > 0 ? context.contentKinds(in: tree) : []
        channelRates = policy.channels.map(\.rate)
        channelLogWeights = policy.channels.map { LogSpace.ln($0.weight) }
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
        channelLogWeights[index] + key - channelRates[index] * context.at.seconds
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
        for index in channelRates.indices {
            let term = channelLogWeights[index] + state.channels[index] - channelRates[index] * t
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
