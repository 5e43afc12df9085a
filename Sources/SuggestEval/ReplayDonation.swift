import SuggestCore

/// What a replay needs of one donation: whose it is, its identifier (for duplicates), its conversation and the
/// event the ranking state folds in. Names, people and pictures are left behind.
///
/// `suggest eval` builds these on the parsing thread, so the replaying thread neither copies nor frees the
/// rest of each `Interaction` (a fifth of its time when it received whole donations).
struct ReplayDonation: Sendable {
    var account: String
    var identifier: String?
    var conversation: String
    var event: ConversationState.Event

    init(_ interaction: Interaction) {
        account = interaction.account
        identifier = interaction.identifier
        conversation = interaction.intent.conversationIdentifier
        event = ConversationState.Event(interaction)
    }
}
