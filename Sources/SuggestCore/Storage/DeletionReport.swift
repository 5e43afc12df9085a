/// What a deletion removed.
public struct DeletionReport: Sendable, Equatable {
    /// Donations deleted.
    public var donations = 0
    /// Conversations that lost donations, in byte-wise order.
    public var conversations: [String] = []
    /// Of those, the ones with no donation left: their names, people and pictures are gone too.
    public var removedConversations: [String] = []
    /// Whether every byte of the deleted donations has left the store's files already. It has not while another
    /// process holds a long read of an embedded store, or keeps its log busy (the deletion is committed all the same,
    /// and the old pages go at the next checkpoint that finds the log idle).
    public var logTruncated = true
    /// Whether the deletion forgot preferences that no removed conversation accounts for: "suggest less" of a
    /// conversation with no donation left to delete (`.conversation`, `.all`), or, for `.account`, the blocks and
    /// every other preference left. (A conversation removed entirely takes its "suggest less" with it, and is
    /// listed in `removedConversations`.) True even when no donation was deleted: the preference was the last trace.
    public var preferencesForgotten = false

    /// A report of nothing deleted, which a deletion fills in.
    public init() {}
}

/// Which donations of an account to delete (`INInteraction.delete(with:)` and friends).
public enum DeletionSelector: Sendable, Equatable {
    /// Every donation to the conversation with this `conversationIdentifier`.
    case conversation(String)
    /// The donation with this identifier (`INInteraction.delete(with:)` given identifiers).
    case identifier(String)
    /// Every donation with this group identifier (`INInteraction.delete(with:)` given a group identifier).
    case groupIdentifier(String)
    /// Donations dated before this moment.
    case before(Timestamp)
    /// Every donation of the account ("suggest less" goes with them; blocks stay: they are the person's standing
    /// choices, as `suggest delete --all` keeps them).
    case all
    /// The whole account: every donation and every preference, blocks included (the server's `DELETE` of an
    /// account).
    case account
}
