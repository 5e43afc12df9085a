/// The ranking every store answers with: the exact top K of a ranking source under a policy and a context, turned
/// into suggestions with what each conversation's latest donation said of it.
///
/// One engine, whatever holds the state: a store only provides the `RankingSource` of an account (and its own
/// reading of retention and preferences); the walk, the scores, the tie-breaks and the shape of a suggestion are
/// all here, so every store gives the same answer to the bit.
public struct RankingEngine: Sendable {
    public let policy: FrecencyPolicy
    public let types: UniformTypeTree

    public init(policy: FrecencyPolicy = .default, types: UniformTypeTree = .standard) {
        self.policy = policy
        self.types = types
    }

    /// The top suggestions of the source under `context`, best first.
    /// - Parameter explain: attach each score's parts to its suggestion.
    /// - Complexity: a few sorted and random accesses per suggestion (`TopKRanker`), then one batch of latest intents.
    public func suggestions(
        account: String, in source: some RankingSource, context: RankingContext, explain: Bool = false
    ) throws -> SuggestionList {
        let ranked = try TopKRanker(policy: policy, context: context, tree: types).top(in: source, explain: explain)
        let intents = try source.latestIntents(ranked.map(\.conversation))
        let top = ranked.first?.logScore ?? 0
        var suggestions: [Suggestion] = []
        suggestions.reserveCapacity(ranked.count)
        for (offset, (conversation, intent)) in zip(ranked, intents).enumerated() {
            suggestions.append(
                Self.suggestion(
                    conversation, intent: intent, rank: offset + 1, relativeTo: top, explain: explain))
        }
        return SuggestionList(account: account, at: context.at, suggestions: suggestions)
    }

    /// What a share extension checks before preselecting the conversation its intent names.
    /// - Parameter isBlocked: whether the person blocked the conversation (a block outlives its donations).
    public func status(
        of conversationIdentifier: String, in source: some RankingSource, at: Timestamp, isBlocked: () throws -> Bool
    ) throws -> ConversationStatus {
        guard let conversation = try source.conversation(identifiedBy: conversationIdentifier),
            let candidate = try source.candidate(conversation, contentKinds: []), candidate.state.hasDonations
        else { return try isBlocked() ? .blocked : .unknown }
        if candidate.state.isBlocked { return .blocked }
        let ranked = Scorer(policy: policy, context: RankingContext(at: at), tree: types)
            .rank(candidate, matchedPeople: 0, explain: true)
        let intent = try source.latestIntents([conversation]).first ?? nil
        return .available(Self.suggestion(ranked, intent: intent, rank: 0, relativeTo: ranked.logScore, explain: true))
    }

    /// A ranked conversation as a suggestion.
    /// - Parameter top: the log-score of the first suggestion, which the score is taken relative to.
    static func suggestion(
        _ ranked: RankedConversation, intent: SendMessageIntent?, rank: Int, relativeTo top: Double, explain: Bool
    ) -> Suggestion {
        // exp(-∞ - -∞) is NaN: every score was 0 (a list of conversations known only by their tie-breaks).
        let relative = ranked.logScore == top ? 1 : LogSpace.value(ranked.logScore - top)
        return Suggestion(
            rank: rank, conversationIdentifier: ranked.conversationIdentifier,
            speakableGroupName: intent?.speakableGroupName, recipients: intent?.recipients ?? [],
            image: intent?.image ?? intent?.recipients.lazy.compactMap(\.image).first, conversationImage: intent?.image,
            serviceName: intent?.serviceName, isGroup: ranked.state.isGroup, lastDate: ranked.lastDate,
            score: relative.isNaN ? 0 : relative, explanation: explain ? Suggestion.Explanation(ranked) : nil)
    }
}
