/// Whether the person sent or received the message (`INInteractionDirection`).
public enum InteractionDirection: String, Sendable, Hashable, CaseIterable {
    /// The app did not say: the channels weigh it with their `unspecified` weight (by default the incoming one).
    case unspecified
    /// The user sent the message.
    case outgoing
    /// The user received the message.
    case incoming
}
