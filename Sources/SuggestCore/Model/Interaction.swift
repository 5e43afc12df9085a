/// One donation: a message sent or received at a moment, in an account (`INInteraction`).
public struct Interaction: Sendable, Hashable {
    /// The default account when a caller names none.
    public static let defaultAccount = "default"

    /// Whose history this belongs to; histories of different accounts never mix.
    public var account: String
    /// Unique within the account; donating the same identifier twice is a no-op. `nil` until the log assigns one.
    public var identifier: String?
    /// Groups donations for deletion together (`INInteraction.groupIdentifier`).
    public var groupIdentifier: String?
    public var date: Timestamp
    public var direction: InteractionDirection
    public var intent: SendMessageIntent
    /// Whether this donation completed a share that started from a suggestion (an "engaged suggestion").
    public var isEngagedSuggestion: Bool

    public init(
        account: String = Interaction.defaultAccount, identifier: String? = nil, groupIdentifier: String? = nil,
        date: Timestamp, direction: InteractionDirection = .unspecified, intent: SendMessageIntent,
        isEngagedSuggestion: Bool = false
    ) {
        self.account = account
        self.identifier = identifier
        self.groupIdentifier = groupIdentifier
        self.date = date
        self.direction = direction
        self.intent = intent
        self.isEngagedSuggestion = isEngagedSuggestion
    }

    public var conversationIdentifier: String { intent.conversationIdentifier }
}
