/// What a store knows of one conversation of an account, for preselection in the share flow.
public enum ConversationStatus: Sendable, Equatable {
    /// It exists and may be suggested.
    case available(Suggestion)
    /// It exists, but its latest donation is older than the store's idle limit (`Retention.idleDays`): it is not
    /// suggested until it gets another one.
    case idle(Suggestion)
    /// The person blocked it.
    case blocked
    /// It has no donation in the store: deleted, expired, or never donated.
    case unknown
}
