/// What a deletion removed.
public struct DeletionReport: Sendable, Equatable {
    /// Donations deleted.
    public var donations = 0
    /// Conversations that lost donations, in byte-wise order.
    public var conversations: [String] = []
    /// Of those, the ones with no donation left: their names, people and pictures are gone too.
    public var removedConversations: [String] = []
    /// Whether every byte of the deleted donations has left the store's files already. It has not while another
    /// process holds a long read of an embedded store (the deletion is committed all the same, and the old pages
    /// go at the next checkpoint).
    public var logTruncated = true

    public init() {}
}

/// Which donations of an account to delete (`INInteraction.delete(with:)` and friends).
public enum DeletionSelector: Sendable, Equatable {
    case conversation(String)
    case identifier(String)
    case groupIdentifier(String)
    /// Donations dated before this moment.
    case before(Timestamp)
    /// Every donation of the account.
    case all
}
