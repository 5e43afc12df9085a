/// Whether the person sent or received the message (`INInteractionDirection`).
public enum InteractionDirection: String, Sendable, Hashable, CaseIterable {
    case unspecified
    case outgoing
    case incoming
}
