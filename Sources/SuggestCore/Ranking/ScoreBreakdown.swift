/// The parts of one suggestion's score, so that `--explain` can say why it is there.
public struct ScoreBreakdown: Sendable, Equatable {
    /// One additive term: a decay channel or the people term.
    public struct Term: Sendable, Equatable {
        /// The channel's `name` (`FrecencyPolicy.Channel.name`), or `people` for the people term.
        public var name: String
        /// The term's value at the query time.
        public var value: Double
    }

    /// One term per channel in the policy's order, then `people` when the context names people; empty unless the
    /// ranking was asked to explain.
    public var terms: [Term]
    /// `ln` of the product of the multiplicative factors (content, group preference, "suggest less"); 0 unless the
    /// ranking was asked to explain. Kept as a logarithm: a conversation asked about more than about 500 times
    /// has a product below the smallest `Double`.
    public var logFactor: Double
    /// The decayed share of the conversation's donations that carried the kinds being shared (0 without them).
    public var contentShare: Double
    /// How many of the context's people are in the conversation.
    public var matchedPeople: Int
    /// How many times the person asked to see this conversation less.
    public var lessFeedback: Int

    /// The product of the multiplicative factors; 0 once it is below the smallest `Double` (`logFactor` is not).
    public var factor: Double { LogSpace.value(logFactor) }

    /// The value of the term named `name`, 0 when absent.
    public func value(of name: String) -> Double { terms.first { $0.name == name }?.value ?? 0 }
}

/// One ranked conversation.
public struct RankedConversation: Sendable, Equatable {
    /// The ranking source's handle of the conversation, valid only while its query runs.
    public var conversation: ConversationHandle
    /// The conversation's `conversationIdentifier`: the last tie-breaker.
    public var conversationIdentifier: String
    /// `ln(score)`: the ranking compares these; scores of long-idle conversations underflow but their logarithms
    /// stay ordered.
    public var logScore: Double
    /// The conversation's latest donation (`ConversationState.lastDate`): the first tie-breaker.
    public var lastDate: Timestamp
    /// The state the score was computed from.
    public var state: ConversationState
    /// The service of the conversation's latest donation: the one a ranking context's `serviceName` filters on,
    /// and the one a suggestion names (the intent it is shown by may be an earlier donation's, `ShownDonation`).
    public var serviceName: String?
    /// The parts of the score, for `--explain`; only partly filled unless the ranking was asked to explain.
    public var breakdown: ScoreBreakdown

    /// The score as a plain number.
    public var score: Double { LogSpace.value(logScore) }

    /// The contract's order: higher score first; equal scores, the more recent donation first; then the smaller
    /// identifier in byte-wise order.
    @inline(__always)
    public static func ranksBefore(_ a: RankedConversation, _ b: RankedConversation) -> Bool {
        if a.logScore != b.logScore { return a.logScore > b.logScore }
        if a.lastDate != b.lastDate { return a.lastDate > b.lastDate }
        return a.conversationIdentifier.utf8.lexicographicallyPrecedes(b.conversationIdentifier.utf8)
    }
}
