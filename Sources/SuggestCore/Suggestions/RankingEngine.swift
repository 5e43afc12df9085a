/// The ranking every store answers with: the exact top K of a ranking source under a ranking and a context, turned
/// into suggestions with what each conversation's latest donation said of it.
///
/// One engine, whatever holds the state: a store only provides the `RankingSource` of an account (and its own
/// reading of retention and preferences); the walk, the scores, the learned weights' use, the tie-breaks and the
/// shape of a suggestion are all here, so every store gives the same answer to the bit.
public struct RankingEngine: Sendable {
    /// Learned weights (read from each query's source) or a policy's fixed ones.
    public let ranking: StoreRanking
    /// The type tree content types are read with.
    public let types: UniformTypeTree

    /// The policy the ranking state is built with (`ranking.base`).
    public var policy: FrecencyPolicy { ranking.base }

    /// - Parameters:
    ///   - ranking: learned weights (the default) or a policy's fixed ones.
    ///   - types: the type tree content types are read with.
    public init(ranking: StoreRanking = .default, types: UniformTypeTree = .standard) {
        self.ranking = ranking
        self.types = types
    }

    /// An engine that ranks with a policy's fixed channel weights.
    public init(policy: FrecencyPolicy, types: UniformTypeTree = .standard) {
        self.init(ranking: .fixed(policy), types: types)
    }

    /// The scorer of one query on `source`: under a learned ranking, with the account's weights as the source
    /// holds them.
    /// - Returns: the scorer, and the account's weights when the ranking learns.
    /// - Complexity: one read of the weights (a learned ranking only), then O(c) for c channels.
    public func scorer(for source: some RankingSource, context: RankingContext) throws -> (
        scorer: Scorer, weights: LearnedWeights?
    ) {
        guard ranking.learnedPolicy != nil else {
            return (ranking.scorer(context: context, weights: .empty, tree: types), nil)
        }
        let weights = try source.learnedWeights()
        return (ranking.scorer(context: context, weights: weights, tree: types), weights)
    }

    /// `scorer(for:context:)` for a query that walks the sorted lists next: the weights are read with the first
    /// pages of every list the walk could open (`WalkPlan.possibleLists`), one round trip for a remote source
    /// where reading them in turn would take two.
    private func walkingScorer(for source: some RankingSource, context: RankingContext) throws -> (
        scorer: Scorer, weights: LearnedWeights?
    ) {
        guard ranking.learnedPolicy != nil else { return try scorer(for: source, context: context) }
        let lists = WalkPlan.possibleLists(policy: ranking.base, context: context, tree: types)
        let weights = try source.learnedWeights(beforeOpening: lists)
        return (ranking.scorer(context: context, weights: weights, tree: types), weights)
    }

    /// What an explanation says of the weights a query at `moment` ranked with.
    private func summary(_ weights: LearnedWeights?, at moment: Timestamp) -> LearnedWeightsSummary? {
        guard let weights, let policy = ranking.learnedPolicy else { return nil }
        return LearnedWeightsSummary(weights, at: moment, policy: policy)
    }

    /// The top suggestions of the source under `context`, best first.
    /// - Parameter explain: attach each score's parts to its suggestion, and the account's learned weights to the
    ///   list.
    /// - Complexity: a few sorted and random accesses per suggestion (`TopKRanker`), then one batch of latest intents.
    ///
    /// A source that stands for one version of the store (`RankingSource.rankedAnswers`) gets a learned ranking's
    /// answer once per context, idle cutoff that admits the same conversations, and span of moments at which every
    /// expert is as fresh or stale (`LearnedWeights.freshnessSpan`): the scores hold no other moment, so the answer
    /// at another moment of the span is the same bits.
    public func suggestions(
        account: String, in source: some RankingSource, context: RankingContext, explain: Bool = false
    ) throws -> SuggestionList {
        guard let learnedPolicy = ranking.learnedPolicy, let answers = source.rankedAnswers else {
            return try rank(account: account, in: source, context: context, explain: explain).list
        }
        let key = RankedAnswers.Key(context, explain: explain)
        if var list = answers.answer(for: key, cutoff: context.notIdleSince, at: context.at) {
            list.account = account
            list.at = context.at
            return list
        }
        let (list, weights) = try rank(account: account, in: source, context: context, explain: explain)
        let moments = (weights ?? .empty).freshnessSpan(at: context.at, policy: learnedPolicy)
        return answers.keep(list, for: key, cutoff: context.notIdleSince, moments: moments)
    }

    /// The top suggestions, ranked, and the learned weights they were ranked with.
    private func rank(
        account: String, in source: some RankingSource, context: RankingContext, explain: Bool
    ) throws -> (list: SuggestionList, weights: LearnedWeights?) {
        let (scorer, weights) = try walkingScorer(for: source, context: context)
        let learned = explain ? summary(weights, at: context.at) : nil
        let ranked = try TopKRanker(scorer: scorer).top(in: source, explain: explain)
        let intents = try source.latestIntents(ranked.map(\.conversation))
        let top = ranked.first?.logScore ?? 0
        var suggestions: [Suggestion] = []
        suggestions.reserveCapacity(ranked.count)
        for (offset, (conversation, intent)) in zip(ranked, intents).enumerated() {
            suggestions.append(
                Self.suggestion(
                    conversation, intent: intent, rank: offset + 1, relativeTo: top, explain: explain, learned: learned))
        }
        return (SuggestionList(account: account, at: context.at, suggestions: suggestions, learnedWeights: learned), weights)
    }

    /// The exact top K of the source under `context`, as ranked conversations.
    public func ranked(in source: some RankingSource, context: RankingContext) throws -> [RankedConversation] {
        try TopKRanker(scorer: try walkingScorer(for: source, context: context).scorer).top(in: source)
    }

    /// The same ranking by scoring every conversation: the reference the walk must equal.
    public func rankedByBruteForce(in source: some RankingSource, context: RankingContext) throws
        -> [RankedConversation]
    {
        try TopKRanker(scorer: try scorer(for: source, context: context).scorer).bruteForce(in: source)
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
        let (scorer, weights) = try scorer(for: source, context: RankingContext(at: at))
        let learned = summary(weights, at: at)
        let ranked = scorer.rank(candidate, matchedPeople: 0, explain: true)
        let intent = try source.latestIntents([conversation]).first ?? nil
        return .available(
            Self.suggestion(
                ranked, intent: intent, rank: 0, relativeTo: ranked.logScore, explain: true, learned: learned))
    }

    /// A ranked conversation as a suggestion.
    /// - Parameters:
    ///   - top: the log-score of the first suggestion, which the score is taken relative to.
    ///   - learned: the weights a learned ranking ranked with, for the explanation.
    static func suggestion(
        _ ranked: RankedConversation, intent: SendMessageIntent?, rank: Int, relativeTo top: Double, explain: Bool,
        learned: LearnedWeightsSummary?
    ) -> Suggestion {
        // exp(-∞ - -∞) is NaN: every score was 0 (a list of conversations known only by their tie-breaks).
        let relative = ranked.logScore == top ? 1 : LogSpace.value(ranked.logScore - top)
        return Suggestion(
            rank: rank, conversationIdentifier: ranked.conversationIdentifier,
            // A blank name is none, in the JSON as in the title.
            speakableGroupName: intent?.speakableGroupName.unlessBlank, recipients: intent?.recipients ?? [],
            image: intent?.image.unlessBlank
                ?? intent?.recipients.lazy.compactMap({ $0.isMe == true ? nil : $0.image.unlessBlank }).first,
            conversationImage: intent?.image,
            serviceName: ranked.serviceName, isGroup: ranked.state.isGroup, lastDate: ranked.lastDate,
            score: relative.isNaN ? 0 : relative,
            explanation: explain ? Suggestion.Explanation(ranked, learned: learned) : nil)
    }
}
