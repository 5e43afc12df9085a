import CSystem

/// Computes a conversation's exact score under a policy and a context: the random-access half of the ranker,
/// and the whole of the brute-force reference.
public struct Scorer: Sendable {
    /// The channels' shapes and the factors the scores use.
    public let policy: FrecencyPolicy
    /// The query the scores are for: its moment, what is shared, its people, service and exclusions.
    public let context: RankingContext
    /// The content kinds of the context, in the order the source returns their sums.
    public let contentKinds: [String]
    /// What this query adds to a conversation's stored key `A_m` to get its term, for a person's conversation and
    /// for a group's; the bound of the walk takes the larger. In vectors, as the keys are (a policy has at most
    /// four channels; the lanes past `channelCount` are unused): an array would be retained at every candidate.
    private let personOffsets: SIMD4<Double>
    private let groupOffsets: SIMD4<Double>
    private let boundOffsets: SIMD4<Double>
    private let channelCount: Int
    /// `ln(channelCount)`, for `isAbove`.
    private let logChannelCount: Double
    private let logGroupFactor: Double
    private let logLessFactor: Double
    /// The context's excluded identifiers as bytes: compared as every identifier is, byte for byte (a `Set` of
    /// strings takes `café` composed and decomposed for one).
    private let excludedKeys: Set<ByteKey>

    /// What one query adds to a conversation's stored channel keys to get its channel terms, as natural logarithms,
    /// one per channel for a person's conversation and one for a group's: a term is `offset + A_m`.
    ///
    /// For constant weights `β_m` the offset is `ln β_m − λ_m·t`, so it carries the query's moment. For weights an
    /// account learned it is `ln π_m − T_m` (`LearnedWeights.channelOffsets(at:policy:)`): the moment cancels out of
    /// a share of a channel's mass, so the offset, every score and the whole ranking are the same bits at every
    /// moment until the state changes or an expert turns stale (`LearnedWeights.freshnessSpan`). `-∞` turns a
    /// channel off.
    public struct ChannelOffsets: Sendable, Hashable {
        /// One logarithm per channel of the policy, for conversations with one other person.
        public var person: [Double]
        /// As many, for group conversations.
        public var group: [Double]
        /// Whether the offsets hold no `λ_m·t`: scores made with them change only when the offsets themselves do
        /// (learned weights: at an expert's turn from fresh to stale), not as time passes.
        public var isTimeInvariant: Bool

        /// - Parameters:
        ///   - person: one logarithm per channel of the policy.
        ///   - group: as many, for groups.
        ///   - isTimeInvariant: whether they are free of the query's moment (learned shares).
        public init(person: [Double], group: [Double], isTimeInvariant: Bool) {
            self.person = person
            self.group = group
            self.isTimeInvariant = isTimeInvariant
        }

        /// The offsets of a policy's constant weights at moment `at`: `ln β_m − λ_m·t`.
        public init(policy: FrecencyPolicy, at: Timestamp) {
            let t = at.seconds
            let offsets = policy.channels.map { LogSpace.ln($0.weight) - $0.rate * t }
            self.init(person: offsets, group: offsets, isTimeInvariant: false)
        }
    }

    /// Whether this scorer's scores hold no `λ_m·t` (learned weights): the same offsets rank with the same bits at
    /// every moment, so a ranking depends on the moment only through the offsets (which weight each expert uses)
    /// and through which conversations the context's idle cutoff admits.
    public let isTimeInvariant: Bool

    /// A scorer with the policy's own channel weights.
    public init(policy: FrecencyPolicy, context: RankingContext, tree: UniformTypeTree = .standard) {
        self.init(
            policy: policy, context: context, channelOffsets: ChannelOffsets(policy: policy, at: context.at), tree: tree)
    }

    /// A scorer whose channel offsets are given for this query: the policy's channel shapes (half-lives, donation
    /// weights) and context constants, with `channelOffsets` in place of the channels' `weight` at the query's
    /// moment.
    ///
    /// The score stays a non-negative combination of the channels' terms, so the threshold walk stays exact: its
    /// bound per channel takes the larger of the two offsets. Group conversations are still multiplied by the
    /// policy's `groupFactor`.
    /// - Parameters:
    ///   - channelOffsets: one logarithm per channel for people and one for groups; the counts must match the
    ///     policy's channels.
    public init(
        policy: FrecencyPolicy, context: RankingContext, channelOffsets: ChannelOffsets, tree: UniformTypeTree = .standard
    ) {
        precondition(
            channelOffsets.person.count == policy.channels.count && channelOffsets.group.count == policy.channels.count,
            "one channel offset per channel")
        self.policy = policy
        self.context = context
        self.contentKinds = policy.contentWeight > 0 ? context.contentKinds(in: tree) : []
        channelCount = policy.channels.count
        logChannelCount = LogSpace.ln(Double(channelCount))
        personOffsets = Self.vector(channelOffsets.person)
        groupOffsets = Self.vector(channelOffsets.group)
        boundOffsets = Self.vector(zip(channelOffsets.person, channelOffsets.group).map { max($0, $1) })
        isTimeInvariant = channelOffsets.isTimeInvariant
        logGroupFactor = LogSpace.ln(policy.groupFactor)
        logLessFactor = LogSpace.ln(policy.lessFactor)
        excludedKeys = Set(context.excluded.map(ByteKey.init))
    }

    /// Up to four values in the lanes of a vector, the rest 0.
    private static func vector(_ values: [Double]) -> SIMD4<Double> {
        var vector = SIMD4<Double>()
        for (index, value) in values.prefix(4).enumerated() { vector[index] = value }
        return vector
    }

    /// Whether the context allows suggesting this conversation at all.
    public func admits(_ candidate: RankingCandidate) -> Bool {
        guard admits(state: candidate.state) else { return false }
        // Byte for byte, as a service's sorted lists hold its conversations.
        if let service = context.serviceName, candidate.serviceName?.hasSameBytes(as: service) != true { return false }
        // `contains` on an empty set would still hash the identifier, on every conversation a query meets.
        return excludedKeys.isEmpty || !excludedKeys.contains(ByteKey(candidate.conversationIdentifier))
    }

    /// Whether the context allows a conversation by its state: not blocked, donated to, not idle. The whole of
    /// `admits(_:)` when `admitsByStateAlone`.
    @inline(__always)
    public func admits(state: ConversationState) -> Bool {
        guard !state.isBlocked, state.hasDonations else { return false }
        if let cutoff = context.notIdleSince, state.lastDate < cutoff { return false }
        return true
    }

    /// Whether the context admits or refuses a conversation by its state alone: it names no service and excludes
    /// nothing, so neither the conversation's identifier nor its service is read.
    public var admitsByStateAlone: Bool { context.serviceName == nil && excludedKeys.isEmpty }

    /// The most that channel `index` can add, in log space, for a conversation whose key `A_m` is at most `key`.
    @inline(__always)
    public func channelBound(_ index: Int, key: Double) -> Double {
        boundOffsets[index] + key
    }

    /// The largest factor the group preference can give (`ln g` when groups are preferred, else 0): "suggest less"
    /// only lowers a score (`lessFactor` ≤ 1).
    public var logGroupFactorBound: Double { max(0, logGroupFactor) }

    /// Whether a candidate scores above `logScore` or below it, when that is clear without its exact score: its
    /// channel terms are summed in linear space relative to `logScore` (one `exp` each, no `log1p`, nothing built),
    /// and called only outside a margin far above what rounding can move either score by. `nil` when the two are
    /// too close to call (then the exact score and its tie-breakers decide), when `logScore` is not finite, or when
    /// the context adds terms this leaves out (content kinds, people).
    @inline(__always)
    public func isAbove(_ candidate: RankingCandidate, logScore: Double) -> Bool? {
        isAbove(state: candidate.state, logScore: logScore)
    }

    /// `isAbove(_:logScore:)` of a conversation's state alone: it reads nothing else of a candidate.
    @inline(__always)
    public func isAbove(state: ConversationState, logScore: Double) -> Bool? {
        guard contentKinds.isEmpty, context.people.isEmpty, logScore.isFinite else { return nil }
        // A score is rounded by a few units in the last place of its own size: past e^±1e6 (a half-life of seconds
        // over years) that outgrows the fixed margin, and so does the margin.
        let margin = max(Self.comparisonMargin, 64 * logScore.magnitude.ulp)
        var shift = -logScore
        if state.isGroup { shift += logGroupFactor }
        if state.lessFeedback > 0 { shift += logLessFactor * Double(state.lessFeedback) }
        let offsets = state.isGroup ? groupOffsets : personOffsets
        // Most conversations a deep walk meets are far from the target: the largest term alone settles it, without
        // an `exp`. Above if it alone passes the target (e^x > 1 + x); below if even every term as large as it
        // stays under (then the sum is at most count·e^x, and ln(1 − m) > −2m).
        var largest = -Double.infinity
        for index in 0..<channelCount { largest = max(largest, offsets[index] + state.channels[index] + shift) }
        if largest > margin { return true }
        if largest < -2 * margin - logChannelCount { return false }
        var sum = 0.0
        for index in 0..<channelCount { sum += exp(offsets[index] + state.channels[index] + shift) }
        if sum > 1 + margin { return true }
        if sum < 1 - margin { return false }
        return nil
    }

    /// How far from equal a linear sum must at least be for `isAbove` to call it: scores of everyday sizes are
    /// sums of a few terms whose logarithms are within about 1e-12 of exact.
    static let comparisonMargin = 1e-7

    /// The exact ranked form of a candidate.
    /// - Parameter matchedPeople: how many of the context's people take part in the conversation.
    public func rank(_ candidate: RankingCandidate, matchedPeople: Int, explain: Bool = false) -> RankedConversation {
        let state = candidate.state
        var logTotal = LogSpace.zero
        var terms: [ScoreBreakdown.Term] = []
        if explain { terms.reserveCapacity(policy.channels.count + 1) }
        let offsets = state.isGroup ? groupOffsets : personOffsets
        for index in 0..<channelCount {
            let term = offsets[index] + state.channels[index]
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
            // 1 + γ·s, with s the sum of the decayed shares of the conversation's donations that carried each
            // shared kind, at most 1 (a donation of two shared kinds counts in both: a store keeps one sum per
            // kind): a factor in [1, 1 + γ], the same for light and heavy users.
            var kinds = LogSpace.zero
            for sum in candidate.contentSums { kinds = LogSpace.addExp(kinds, sum) }
            contentShare = state.contentTotal > LogSpace.zero ? min(1, LogSpace.value(kinds - state.contentTotal)) : 0
            logFactor += LogSpace.ln(1 + policy.contentWeight * contentShare)
        }
        if state.isGroup { logFactor += logGroupFactor }
        if state.lessFeedback > 0 { logFactor += logLessFactor * Double(state.lessFeedback) }
        let breakdown = ScoreBreakdown(
            terms: terms, logFactor: explain ? logFactor : 0, contentShare: contentShare,
            matchedPeople: matchedPeople, lessFeedback: state.lessFeedback)
        return RankedConversation(
            conversation: candidate.conversation, conversationIdentifier: candidate.conversationIdentifier,
            logScore: logTotal + logFactor, lastDate: state.lastDate, state: state,
            serviceName: candidate.serviceName, breakdown: breakdown)
    }
}
