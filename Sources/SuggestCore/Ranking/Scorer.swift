/// Computes a conversation's exact score under a policy and a context: the random-access half of the ranker,
/// and the whole of the brute-force reference.
public struct Scorer: Sendable {
    public let policy: FrecencyPolicy
    public let context: RankingContext
    /// The content kinds of the context, in the order the source returns their sums.
    public let contentKinds: [String]
    private let channelRates: [Double]
    private let channelLogWeights: [Double]
    private let logContentWeight: Double
    private let logGroupFactor: Double
    private let logLessFactor: Double

    public init(policy: FrecencyPolicy, context: RankingContext, tree: UniformTypeTree = .standard) {
        self.policy = policy
        self.context = context
        self.contentKinds = policy.contentWeight > 0 ? context.contentKinds(in: tree) : []
        channelRates = policy.channels.map(\.rate)
        channelLogWeights = policy.channels.map { LogSpace.ln($0.weight) }
        logContentWeight = LogSpace.ln(policy.contentWeight)
        logGroupFactor = LogSpace.ln(policy.groupFactor)
        logLessFactor = LogSpace.ln(policy.lessFactor)
    }

    /// Whether the context allows suggesting this conversation at all.
    public func admits(_ candidate: RankingCandidate) -> Bool {
        let state = candidate.state
        guard !state.isBlocked, state.hasDonations else { return false }
        if let cutoff = context.notIdleSince, state.lastDate < cutoff { return false }
        if let service = context.serviceName, candidate.serviceName != service { return false }
        return !context.excluded.contains(candidate.conversationIdentifier)
    }

    /// The upper bound that a list's key puts on the term it feeds, in log space: what any conversation not yet
    /// seen in that list can get from it at most.
    @inline(__always)
    public func termBound(_ list: RankingList, key: Double) -> Double {
        switch list {
        case .channel(let index): return channelLogWeights[index] + key - channelRates[index] * context.at.seconds
        case .contentKind: return logContentWeight + key - policy.contentRate * context.at.seconds
        }
    }

    /// The largest factor a conversation's additive terms can be multiplied by.
    public var logMaximumFactor: Double { max(0, logGroupFactor) }

    /// The exact ranked form of a candidate.
    /// - Parameter matchedPeople: how many of the context's people take part in the conversation.
    public func rank(_ candidate: RankingCandidate, matchedPeople: Int, explain: Bool = false) -> RankedConversation {
        let state = candidate.state
        let t = context.at.seconds
        var logTotal = LogSpace.zero
        var terms: [ScoreBreakdown.Term] = []
        for index in policy.channels.indices {
            let term = channelLogWeights[index] + state.channels[index] - channelRates[index] * t
            logTotal = LogSpace.addExp(logTotal, term)
            if explain { terms.append(.init(name: policy.channels[index].name, value: LogSpace.value(term))) }
        }
        if !contentKinds.isEmpty {
            var content = LogSpace.zero
            for sum in candidate.contentSums {
                content = LogSpace.addExp(content, logContentWeight + sum - policy.contentRate * t)
            }
            logTotal = LogSpace.addExp(logTotal, content)
            if explain { terms.append(.init(name: "content", value: LogSpace.value(content))) }
        }
        if !context.people.isEmpty {
            // π·m·(1 + score): a person in the shared photo lifts even a quiet conversation with them, and
            // lifts a busy one in proportion, so the signal holds for light and heavy users alike. Only
            // conversations with a match get it, and those are all scored up front, so it needs no sorted list.
            let people =
                matchedPeople > 0
                ? LogSpace.ln(policy.peopleWeight * Double(matchedPeople)) + LogSpace.addExp(0, logTotal)
                : LogSpace.zero
            logTotal = LogSpace.addExp(logTotal, people)
            if explain { terms.append(.init(name: "people", value: LogSpace.value(people))) }
        }
        var logFactor = 0.0
        if state.isGroup { logFactor += logGroupFactor }
        if state.lessFeedback > 0 { logFactor += logLessFactor * Double(state.lessFeedback) }
        let breakdown = ScoreBreakdown(
            terms: terms, factor: explain ? LogSpace.value(logFactor) : 1, matchedPeople: matchedPeople,
            lessFeedback: state.lessFeedback)
        return RankedConversation(
            reference: candidate.reference, conversationIdentifier: candidate.conversationIdentifier,
            logScore: logTotal + logFactor, lastDate: state.lastDate, state: state, breakdown: breakdown)
    }
}
