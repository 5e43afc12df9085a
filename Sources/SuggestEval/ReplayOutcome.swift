/// What replaying one donation did.
public enum ReplayOutcome: Sendable, Hashable {
    /// Its identifier had already been donated in the account: ignored, as a store ignores it.
    case duplicate
    /// An incoming or unspecified donation: applied, nothing ranked.
    case applied
    /// An outgoing donation to a conversation with no earlier donation: applied, not evaluated.
    case new
    /// An outgoing donation whose conversation ranked `rank` (1 = top) just before it was applied; `covered` when
    /// the policy's score for it was above zero.
    case ranked(rank: Int, covered: Bool)
}
