import SuggestCore

/// One suggested conversation as the share sheet shows it: what to display and why it ranks where it does.
public struct Suggestion: Sendable, Equatable {
    public var rank: Int
    public var conversationIdentifier: String
    public var speakableGroupName: String?
    public var recipients: [Person]
    /// The conversation's picture, else the first recipient's (the avatar fallback order of share suggestions).
    public var image: String?
    /// The conversation's own picture as last donated, without the fallback: what a new donation repeats.
    public var conversationImage: String?
    public var serviceName: String?
    public var isGroup: Bool
    public var ranked: RankedConversation

    public var score: Double { ranked.score }
}

extension DonationStore {
    /// The top suggestions of an account at `context.at`.
    ///
    /// Idle conversations (per the store's retention) are left out; expired donations are deleted first.
    /// - Complexity: independent of the history's length: a few index steps per suggestion (threshold algorithm).
    public func suggestions(account: String, context: RankingContext, explain: Bool = false) throws -> [Suggestion] {
        try translating {
            let retention = try retention()
            try expireDonations(retention: retention)
            var context = context
            if context.notIdleSince == nil { context.notIdleSince = retention.notIdleSince(at: context.at) }
            return try database.read {
                let source = StoredRankingSource(database: database, account: account)
                let ranked = try TopKRanker(policy: policy, context: context, tree: types).top(in: source, explain: explain)
                return try ranked.enumerated().map { offset, conversation in
                    try suggestion(for: conversation, rank: offset + 1)
                }
            }
        }
    }

    /// The same ranking by scoring every conversation: the reference `suggestions` must equal.
    public func suggestionsByBruteForce(account: String, context: RankingContext) throws -> [RankedConversation] {
        try translating {
            try database.read {
                let source = StoredRankingSource(database: database, account: account)
                return try TopKRanker(policy: policy, context: context, tree: types).bruteForce(in: source)
            }
        }
    }

    private func suggestion(for ranked: RankedConversation, rank: Int) throws -> Suggestion {
        let intent = try latestIntent(conversationID: ranked.reference)
        return Suggestion(
            rank: rank, conversationIdentifier: ranked.conversationIdentifier,
            speakableGroupName: intent?.speakableGroupName, recipients: intent?.recipients ?? [],
            image: intent?.image ?? intent?.recipients.lazy.compactMap(\.image).first, conversationImage: intent?.image,
            serviceName: intent?.serviceName, isGroup: ranked.state.isGroup, ranked: ranked)
    }

    private func latestIntent(conversationID: Int64) throws -> SendMessageIntent? {
        let select = try database.statement(
            "SELECT s.body FROM conversations c JOIN snapshots s ON s.id = c.latest_snapshot_id WHERE c.id = ?")
        try select.reset([.integer(conversationID)])
        defer { _ = try? select.reset() }
        guard try select.step(), let body = select.text(0) else { return nil }
        return try DonationStore.decodeSnapshot(body)
    }

    /// What the store knows of one conversation of an account, for preselection in the share flow.
    public enum ConversationStatus: Sendable, Equatable {
        /// It exists and may be suggested.
        case available(Suggestion)
        /// The person blocked it.
        case blocked
        /// It has no donation in the store: deleted, expired, or never donated.
        case unknown
    }

    /// Looks up one conversation as the share extension receives it in the intent.
    public func conversationStatus(account: String, conversationIdentifier: String, at: Timestamp) throws
        -> ConversationStatus
    {
        try translating {
            try database.read {
                let id = try database.statement(
                    "SELECT id FROM conversations WHERE account = ? AND conversation_identifier = ?"
                ).scalarInt([.text(account), .text(conversationIdentifier)])
                let source = StoredRankingSource(database: database, account: account)
                guard let id, let candidate = try source.candidate(id, contentKinds: []),
                    candidate.state.hasDonations
                else { return try isBlocked(conversation: conversationIdentifier, account: account) ? .blocked : .unknown }
                if candidate.state.isBlocked { return .blocked }
                let ranked = Scorer(policy: policy, context: RankingContext(at: at), tree: types)
                    .rank(candidate, matchedPeople: 0, explain: true)
                return .available(try suggestion(for: ranked, rank: 0))
            }
        }
    }
}
