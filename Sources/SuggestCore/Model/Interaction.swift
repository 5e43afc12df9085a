/// One donation: a message sent or received at a moment, in an account (`INInteraction`).
public struct Interaction: Sendable, Hashable {
    /// The default account when a caller names none.
    public static let defaultAccount = "default"

    /// Whose history this belongs to; histories of different accounts never mix.
    public var account: String
    /// Unique within the account; donating the same identifier twice is a no-op. `nil` until the log assigns one.
    public var identifier: String?
    /// Groups donations for deletion together (`INInteraction.groupIdentifier`). Never empty: an empty one is no
    /// group (`nil`), since no deletion could name it.
    public var groupIdentifier: String? {
        didSet { groupIdentifier = groupIdentifier.noneIfEmpty }
    }
    /// When the message was sent or received (`INInteraction.dateInterval`'s start): the moment its weight decays
    /// from.
    public var date: Timestamp
    /// Whether the user sent or received the message (`INInteraction.direction`); it picks the channels' weight.
    public var direction: InteractionDirection
    /// The conversation and the people of the message (`INInteraction.intent`).
    public var intent: SendMessageIntent
    /// Whether this donation completed a share that started from a suggestion (an "engaged suggestion").
    public var isEngagedSuggestion: Bool

    /// A donation, as given but for an empty group identifier, taken as none: nothing is checked here
    /// (`init(json:defaultAccount:)` applies the contract's rules, a store the future-date rule and retention when it
    /// records it).
    public init(
        account: String = Interaction.defaultAccount, identifier: String? = nil, groupIdentifier: String? = nil,
        date: Timestamp, direction: InteractionDirection = .unspecified, intent: SendMessageIntent,
        isEngagedSuggestion: Bool = false
    ) {
        self.account = account
        self.identifier = identifier
        self.groupIdentifier = groupIdentifier.noneIfEmpty
        self.date = date
        self.direction = direction
        self.intent = intent
        self.isEngagedSuggestion = isEngagedSuggestion
    }

    /// The intent's `conversationIdentifier`: the conversation this donation counts for.
    public var conversationIdentifier: String { intent.conversationIdentifier }
}

extension Interaction {
    /// The donation with the group identifier of its conversation's donations, when it has none and they name
    /// exactly one (`DonationStore.recordShare`); as it is otherwise.
    /// - Parameter groups: the distinct group identifiers the conversation's stored donations carry.
    public func inheritingGroup(of groups: [String]) -> Interaction {
        guard groupIdentifier == nil, groups.count == 1 else { return self }
        var donation = self
        donation.groupIdentifier = groups[0]
        return donation
    }
}
