/// Where ranking state lives: in memory (`InMemoryRankingIndex`) or in the store. The ranker (`TopKRanker`)
/// reads it through this protocol only, so both give the same ranking from the same code.
public protocol RankingSource {
    /// Sorted access: the conversations in non-increasing order of one decay channel's key `A_m`, lazily.
    func sortedAccess(channel: Int) throws -> any SortedAccessCursor

    /// Random access: one conversation's identifier, state and metadata, with its content sums for `contentKinds`
    /// (`-∞` where it has none), or `nil` when it is gone.
    func candidate(_ reference: Int64, contentKinds: [String]) throws -> RankingCandidate?

    /// The conversations in which someone with this custom identifier, contact identifier or handle takes part.
    func conversations(withPerson key: String) throws -> [Int64]

    /// Every conversation, for the brute-force reference and for evaluation.
    func allReferences() throws -> [Int64]

    /// How many conversations `allReferences()` would return.
    func conversationCount() throws -> Int
}

/// Sorted access into one channel's order, best first.
public protocol SortedAccessCursor {
    /// The next conversation and its key, or `nil` at the end.
    mutating func next() throws -> (key: Double, reference: Int64)?
}

/// What random access returns for one conversation.
public struct RankingCandidate: Sendable, Equatable {
    public var reference: Int64
    public var conversationIdentifier: String
    public var state: ConversationState
    /// The content sums in the order of the `contentKinds` asked for.
    public var contentSums: [Double]
    /// The service of the latest donation, for the service filter.
    public var serviceName: String?

    public init(
        reference: Int64, conversationIdentifier: String, state: ConversationState, contentSums: [Double],
        serviceName: String?
    ) {
        self.reference = reference
        self.conversationIdentifier = conversationIdentifier
        self.state = state
        self.contentSums = contentSums
        self.serviceName = serviceName
    }
}
