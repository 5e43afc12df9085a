/// Where one account's ranking state lives: in memory (`InMemoryRankingIndex`), in SQLite, or across a network in a
/// Redis Cluster. The ranker (`TopKRanker`) reads it through this protocol only, so every store ranks with the same
/// code and gives the same answer from the same state.
///
/// The protocol is shaped for a source that may be remote: sorted access opens every list a query needs at once
/// (one round trip for the first page of each) and pages on as the walk goes down them, and random access takes a
/// batch of conversations (`randomAccessBatchSize` of them per round trip). A local source answers one at a time
/// and pays nothing for the batching.
public protocol RankingSource {
    associatedtype Cursor: SortedAccessCursor

    /// Sorted access: one cursor per list, in the order asked, each giving its conversations in non-increasing order
    /// of their key in the list (`ConversationRecord.key(in:)`: the channel key `A_m`, or for a content kind's list
    /// `A_m` plus the log of the kind's share).
    /// - Parameter lists: the channel and the conversations each list holds. A scope the account has never seen (a
    ///   service or content kind no donation carried) is an empty list, not an error.
    func sortedAccess(_ lists: [SortedList]) throws -> [Cursor]

    /// Random access: one conversation's identifier, state and metadata, with its content sums for `contentKinds`
    /// (`-∞` where it has none), or `nil` when it is gone.
    func candidate(_ conversation: ConversationHandle, contentKinds: [String]) throws -> RankingCandidate?

    /// Random access for several conversations at once, in the order given; a remote source answers them in one
    /// round trip. The default asks `candidate(_:contentKinds:)` for each.
    func candidates(_ conversations: [ConversationHandle], contentKinds: [String]) throws -> [RankingCandidate?]

    /// Random access to a conversation's ranking state alone, for a check that needs nothing else of it
    /// (`DeepRankWitnesses`), or `nil` when it is gone. The default reads the candidate.
    func rankingState(_ conversation: ConversationHandle) throws -> ConversationState?

    /// How many conversations the walk should gather before it asks `candidates` for them: 1 for a local source,
    /// more for a remote one, where every call is a round trip.
    var randomAccessBatchSize: Int { get }

    /// For each person key (a custom identifier, contact identifier or handle), the conversations in which someone
    /// with that key takes part.
    func conversations(withPeople keys: [String]) throws -> [[ConversationHandle]]

    /// The conversation with this identifier, if the account has it.
    func conversation(identifiedBy conversationIdentifier: String) throws -> ConversationHandle?

    /// What the latest donation of each conversation said of it (names, people, pictures), in the order given:
    /// what a suggestion shows.
    func latestIntents(_ conversations: [ConversationHandle]) throws -> [SendMessageIntent?]

    /// Every conversation of the account, for the brute-force reference and for evaluation.
    func allConversations() throws -> [ConversationHandle]

    /// How many conversations `allConversations()` would return.
    func conversationCount() throws -> Int

    /// What the account has learned under a `LearnedPolicy` (`StoreRanking.learned`), read in the same snapshot
    /// as the conversations: `.empty` for an account with no donation. The default, for a source that keeps no
    /// weights (an `InMemoryRankingIndex`), is `.empty`.
    func learnedWeights() throws -> LearnedWeights

    /// `learnedWeights()`, for a walk that opens some of `lists` next (which of them depends on the weights): a
    /// remote source reads their first pages in the same round trip and keeps them for the `sortedAccess` that
    /// follows. The default reads the weights alone.
    func learnedWeights(beforeOpening lists: [SortedList]) throws -> LearnedWeights

    /// The store's retention settings as of the same snapshot, for a source that holds them with its rows (a
    /// server's mirror of the account), so that a query needs no read of its own for them; `nil`, the default,
    /// when the store is to be asked (`DonationStore.retention()`).
    func retention() throws -> Retention?

    /// Where the answers of earlier queries on the same version of the store are kept, for a source that stands
    /// for one version (a server's mirror of the account); `nil`, the default, for a source that reads the store
    /// as it is now. The engine keeps and reuses only answers that hold at a later moment (`RankedAnswers`).
    var rankedAnswers: RankedAnswers? { get }

    /// Whether every conversation's channel keys were built under the policy the store ranks with: `false` while
    /// the store owes a rebuild to a changed policy, or is part-way through one, when it answers from rows built
    /// under another. The walk's stop at the idle cutoff reads a key as a bound on its conversation's latest
    /// date, which only the policy that built the key makes true; it asks this before it stops there. No
    /// default: a source that cannot tell must say `false`.
    func keysFollowThePolicy() throws -> Bool
}

extension RankingSource {
    public func candidates(_ conversations: [ConversationHandle], contentKinds: [String]) throws -> [RankingCandidate?] {
        try conversations.map { try candidate($0, contentKinds: contentKinds) }
    }

    public var randomAccessBatchSize: Int { 1 }

    public func rankingState(_ conversation: ConversationHandle) throws -> ConversationState? {
        try candidate(conversation, contentKinds: [])?.state
    }

    public func learnedWeights() throws -> LearnedWeights { .empty }

    public func learnedWeights(beforeOpening lists: [SortedList]) throws -> LearnedWeights { try learnedWeights() }

    public func retention() throws -> Retention? { nil }

    public var rankedAnswers: RankedAnswers? { nil }
}

/// A conversation as a ranking source knows it: a handle the source issued (a row, a slot, a member of a sorted
/// set), meaningful only to that source and only while the query runs. Never shown to a user or kept.
public struct ConversationHandle: Hashable, Sendable, Comparable {
    /// The source's own number for the conversation.
    public var rawValue: Int64

    /// A handle from the source's own number; only the source that issued it can read it.
    public init(rawValue: Int64) { self.rawValue = rawValue }

    public static func < (lhs: ConversationHandle, rhs: ConversationHandle) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// Which of an account's conversations a sorted list holds.
public enum SortedListScope: Hashable, Sendable {
    /// Every conversation.
    case all
    /// The conversations whose latest donation came through this service: what a query for one service walks.
    case service(String)
    /// The conversations with at least one donation of this content kind (`public.image`), keyed by
    /// `ConversationState.contentListKey`: what bounds the content factor when that kind is being shared.
    case contentKind(String)
}

/// One list of sorted access: a decay channel's keys over the conversations of a scope.
public struct SortedList: Hashable, Sendable {
    /// The decay channel whose keys order the list: an index into the policy's `channels`.
    public var channel: Int
    /// Which conversations the list holds.
    public var scope: SortedListScope

    /// - Parameters:
    ///   - channel: an index into the policy's `channels`.
    ///   - scope: which conversations the list holds.
    public init(channel: Int, scope: SortedListScope) {
        self.channel = channel
        self.scope = scope
    }
}

/// One entry of a sorted list.
public struct SortedEntry: Sendable, Equatable {
    /// The conversation's key in the list (`ConversationRecord.key(in:)`).
    public var key: Double
    /// The conversation the entry is for.
    public var conversation: ConversationHandle

    /// An entry of `conversation` with its `key`.
    public init(key: Double, conversation: ConversationHandle) {
        self.key = key
        self.conversation = conversation
    }

    /// Whether this entry comes before `other` in a sorted list: the higher key first; of equal keys, the lower
    /// handle, as a store's index of them orders its rows.
    @inlinable public func precedes(_ other: SortedEntry) -> Bool {
        key > other.key || (key == other.key && conversation < other.conversation)
    }
}

/// Sorted access into one list, best first.
public protocol SortedAccessCursor {
    /// The next conversation and its key, or `nil` at the end. A remote cursor fetches its next page here.
    mutating func next() throws -> SortedEntry?
}

/// What random access returns for one conversation.
public struct RankingCandidate: Sendable, Equatable {
    /// The source's handle of the conversation.
    public var conversation: ConversationHandle
    /// The conversation's identifier, as donated.
    public var conversationIdentifier: String
    /// The conversation's ranking state.
    public var state: ConversationState
    /// The content sums in the order of the `contentKinds` asked for.
    public var contentSums: [Double]
    /// The service of the latest donation, for the service filter.
    public var serviceName: String?

    /// A candidate as random access read it.
    /// - Parameters:
    ///   - contentSums: one per content kind asked for, in that order.
    ///   - serviceName: the service of the latest donation.
    public init(
        conversation: ConversationHandle, conversationIdentifier: String, state: ConversationState,
        contentSums: [Double], serviceName: String?
    ) {
        self.conversation = conversation
        self.conversationIdentifier = conversationIdentifier
        self.state = state
        self.contentSums = contentSums
        self.serviceName = serviceName
    }
}
