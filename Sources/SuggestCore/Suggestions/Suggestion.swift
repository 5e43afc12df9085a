/// One suggested conversation as the share sheet shows it: what to display and, when asked, why it ranks there.
public struct Suggestion: Sendable, Equatable {
    /// 1 for the first suggestion; 0 for a conversation looked up on its own (a preselection).
    public var rank: Int
    /// The conversation as the app donated it (`INSendMessageIntent.conversationIdentifier`).
    public var conversationIdentifier: String
    /// The group's name, for a group conversation (`speakableGroupName`).
    public var speakableGroupName: String?
    /// The people of the latest donation (`recipients`).
    public var recipients: [Person]
    /// The conversation's picture, else the first recipient's other than the user's own (the avatar fallback order
    /// of share suggestions); an empty one is none.
    public var image: String?
    /// The conversation's own picture as last donated, without the fallback: what a new donation repeats.
    public var conversationImage: String?
    /// The service of the latest donation (`serviceName`), for an app with several.
    public var serviceName: String?
    /// Whether the conversation is a group: a donation to it named a group or more than one recipient.
    public var isGroup: Bool
    /// The latest donation, either direction.
    public var lastDate: Timestamp
    /// The score relative to the first suggestion's: 1 for the first, between 0 and 1 for the others (0 when it is
    /// too small for a `Double`). Raw scores span many orders of magnitude (a conversation's terms differ by 20);
    /// the ratio says how close a suggestion came to the first. The raw score is in `explanation`.
    public var score: Double
    /// Every part of the score, when the query asked for it.
    public var explanation: Explanation?

/// A suggestion as a store builds it; the fields are described above.
    public init(
        rank: Int, conversationIdentifier: String, speakableGroupName: String?, recipients: [Person], image: String?,
        conversationImage: String?, serviceName: String?, isGroup: Bool, lastDate: Timestamp, score: Double,
        explanation: Explanation?
    ) {
        self.rank = rank
        self.conversationIdentifier = conversationIdentifier
        self.speakableGroupName = speakableGroupName
        self.recipients = recipients
        self.image = image
        self.conversationImage = conversationImage
        self.serviceName = serviceName
        self.isGroup = isGroup
        self.lastDate = lastDate
        self.score = score
        self.explanation = explanation
    }

    /// Why a suggestion scored what it did.
    public struct Explanation: Sendable, Equatable {
        /// `ln` of the raw score: what the ranking compares (scores of long-idle conversations underflow, their
        /// logarithms stay ordered).
        public var logScore: Double
        /// The additive terms (each decay channel, and the people term when the query names people) at the query's
        /// moment, as raw values.
        public var terms: [ScoreBreakdown.Term]
        /// `ln` of the product of the multiplicative factors (content, group preference, "suggest less"), which
        /// does not underflow as the product does past about 500 "suggest less".
        public var logFactor: Double
        /// The product of the multiplicative factors; 0 once it is below the smallest `Double`.
        public var factor: Double { LogSpace.value(logFactor) }
        /// The decayed share of the conversation's donations that carried the kinds being shared.
        public var contentShare: Double
        /// How many of the query's people take part in the conversation.
        public var matchedPeople: Int
        /// How many times the person asked to see it less.
        public var lessFeedback: Int
        /// Donations the person sent in it.
        public var outgoingCount: Int
        /// Donations the person received in it.
        public var incomingCount: Int
        /// Shares that started from a suggestion of it.
        public var engagedCount: Int
        /// The latest donation the person sent, if any.
        public var lastOutgoingDate: Timestamp?
        /// Under a learned ranking, each channel's learned weight `π` for the suggestion's kind (a person's or a
        /// group's conversation), in the policy's channel order: each term above is that weight times the
        /// conversation's share of the channel. Empty under fixed weights.
        public var learnedWeights: [ScoreBreakdown.Term]
        /// How many of the account's sends the learned weights were learned from; `nil` under fixed weights.
        public var learnedFrom: Int?

        /// The explanation of a ranked conversation.
        /// - Parameter learned: under a learned ranking, the weights the query ranked with (`nil` under fixed ones).
        public init(_ ranked: RankedConversation, learned: LearnedWeightsSummary? = nil) {
            logScore = ranked.logScore
            terms = ranked.breakdown.terms
            logFactor = ranked.breakdown.logFactor
            contentShare = ranked.breakdown.contentShare
            matchedPeople = ranked.breakdown.matchedPeople
            lessFeedback = ranked.breakdown.lessFeedback
            outgoingCount = ranked.state.outgoingCount
            incomingCount = ranked.state.incomingCount
            engagedCount = ranked.state.engagedCount
            lastOutgoingDate = ranked.state.lastOutgoingDate
            learnedWeights =
                learned?.channels.map {
                    ScoreBreakdown.Term(name: $0.channel, value: ranked.state.isGroup ? $0.group : $0.person)
                } ?? []
            learnedFrom = learned?.sends
        }
    }

    /// The people the conversation is with: its recipients other than the user who name someone, each once.
    public var people: [Person] { SendMessageIntent.otherPeople(in: recipients) }

    /// Whether the conversation has a group name that is not blank (the title then is that name).
    public var hasGroupName: Bool { speakableGroupName.unlessBlank != nil }

    /// The name a person reads for the conversation: its group name, else its recipients other than the user (each
    /// by its first non-empty name, identifier or handle), else its identifier.
    public var title: String {
        if let name = speakableGroupName.unlessBlank { return name }
        // The user's own entry (`isMe`) is nobody the message goes to: "Me, Ana" read as a group with Ana; and a
        // person given twice is read once.
        let others = SendMessageIntent.otherPeople(in: recipients)
        let named = others.isEmpty ? recipients.filter(\.namesSomeone) : others
        guard !named.isEmpty else { return conversationIdentifier }
        // Appended one by one: `joined(separator:)` searches the run-time conformance tables on its first use.
        var title = ""
        for person in named {
            if !title.isEmpty { title += ", " }
            title += person.displayName.unlessBlank ?? person.customIdentifier.unlessBlank
                ?? person.personHandle?.value.unlessBlank ?? person.contactIdentifier.unlessBlank ?? "?"
        }
        return title
    }

}

/// The top suggestions of one account at one moment: what `suggest list --json` prints.
public struct SuggestionList: Sendable, Equatable {
    /// The account the suggestions are for.
    public var account: String
    /// The moment they were ranked at.
    public var at: Timestamp
    /// Best first. Changing them drops `rendering`, which wrote the ones before.
    public var suggestions: [Suggestion] {
        didSet { rendering = nil }
    }
    /// With `explain` under a learned ranking, the account's learned weights, for the people and the groups of
    /// every channel: what `list --explain` prints under its table. Not part of the list's JSON, which holds, in
    /// each suggestion's explanation, the weights of that suggestion's kind (`Suggestion.Explanation`).
    public var learnedWeights: LearnedWeightsSummary?
    /// The JSON of `suggestions`, written once and shared by every copy of a list kept to be given again
    /// (`RankedAnswers`); `nil` for a list written each time. Not part of the list's value.
    public var rendering: JSONRendering?

    /// - Parameter learnedWeights: the account's learned weights, when the list explains them.
    public init(account: String, at: Timestamp, suggestions: [Suggestion], learnedWeights: LearnedWeightsSummary? = nil) {
        self.account = account
        self.at = at
        self.suggestions = suggestions
        self.learnedWeights = learnedWeights
    }

    /// Lists are equal when they say the same: how they are written does not count.
    public static func == (lhs: SuggestionList, rhs: SuggestionList) -> Bool {
        lhs.account == rhs.account && lhs.at == rhs.at && lhs.suggestions == rhs.suggestions
            && lhs.learnedWeights == rhs.learnedWeights
    }
}

/// The list reads as its suggestions, best first.
extension SuggestionList: RandomAccessCollection {
    public var startIndex: Int { suggestions.startIndex }
    public var endIndex: Int { suggestions.endIndex }
    public subscript(position: Int) -> Suggestion { suggestions[position] }
}
