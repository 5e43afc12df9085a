/// Everything the ranker knows of one conversation, kept up to date donation by donation.
///
/// The same value is held in memory (`InMemoryRankingIndex`) and in a row of the store, and both update it with
/// `apply(_:policy:)`: only where the state lives differs. Content-kind sums live beside it, keyed by kind.
public struct ConversationState: Sendable, Equatable {
    /// `A_m = ln Σ w·e^(λ_m·t)` per channel of the policy (`ln w + λ_m·t` of the latest donation for a `latest`
    /// channel); `-∞` for an empty sum.
    public var channels: SIMD4<Double>
    /// `ln Σ e^(λ_c·t)` over all donations with the content half-life: the denominator of the content shares.
    public var contentTotal: Double
    /// The latest donation in either direction: the first tie-breaker; `-∞` before the first (`hasDonations`).
    public var lastDate: Timestamp
    /// The latest outgoing donation, `nil` before the first.
    public var lastOutgoingDate: Timestamp?
    /// Outgoing donations counted.
    public var outgoingCount: Int
    /// Incoming donations counted; donations of unspecified direction are in neither count.
    public var incomingCount: Int
    /// Donations that completed a share started from a suggestion, in either direction.
    public var engagedCount: Int
    /// How many times the person asked to see this conversation less.
    public var lessFeedback: Int
    /// Never suggested while set; survives new donations.
    public var isBlocked: Bool
    /// Whether any donation counted was to a group (`SendMessageIntent.isGroup`); once set, it stays set.
    public var isGroup: Bool

    /// The state of a conversation with no donation yet.
    public static let empty = ConversationState(
        channels: SIMD4(repeating: LogSpace.zero), contentTotal: LogSpace.zero, lastDate: Timestamp(seconds: -.infinity),
        lastOutgoingDate: nil,
        outgoingCount: 0, incomingCount: 0, engagedCount: 0, lessFeedback: 0, isBlocked: false, isGroup: false)

    /// A state as a store read it back; every field as documented on its property, nothing checked. `empty`, then
    /// `apply(_:policy:)`, builds one from donations.
    public init(
        channels: SIMD4<Double>, contentTotal: Double, lastDate: Timestamp, lastOutgoingDate: Timestamp?, outgoingCount: Int,
        incomingCount: Int, engagedCount: Int, lessFeedback: Int, isBlocked: Bool, isGroup: Bool
    ) {
        self.channels = channels
        self.contentTotal = contentTotal
        self.lastDate = lastDate
        self.lastOutgoingDate = lastOutgoingDate
        self.outgoingCount = outgoingCount
        self.incomingCount = incomingCount
        self.engagedCount = engagedCount
        self.lessFeedback = lessFeedback
        self.isBlocked = isBlocked
        self.isGroup = isGroup
    }

    /// The facts of one donation that the ranking state needs.
    public struct Event: Sendable, Hashable {
        /// When the message was sent or received.
        public var date: Timestamp
        /// Which of the channels' weights the donation gets.
        public var direction: InteractionDirection
        /// Whether it completed a share started from a suggestion: outgoing ones get the `engagedBonus`.
        public var isEngagedSuggestion: Bool
        /// Whether its conversation is a group: the channels' `group` factor applies.
        public var isGroup: Bool

        /// The facts of one donation, given one by one.
        public init(date: Timestamp, direction: InteractionDirection, isEngagedSuggestion: Bool = false, isGroup: Bool = false) {
            self.date = date
            self.direction = direction
            self.isEngagedSuggestion = isEngagedSuggestion
            self.isGroup = isGroup
        }

        /// The facts of `interaction`; its conversation is a group when its intent is (`SendMessageIntent.isGroup`).
        public init(_ interaction: Interaction) {
            self.init(
                date: interaction.date, direction: interaction.direction,
                isEngagedSuggestion: interaction.isEngagedSuggestion, isGroup: interaction.intent.isGroup)
        }
    }

    /// Adds one donation.
    /// - Complexity: O(1): one `exp` and one `log1p` per channel.
    public mutating func apply(_ event: Event, policy: FrecencyPolicy) {
        let t = event.date.seconds
        // A donation at least as late as every earlier one (later applied wins a tie) is the latest.
        let isLatest = event.date >= lastDate
        for index in policy.decay.indices {
            let decay = policy.decay[index]
            let logWeight = decay.logWeight(event.direction, engaged: event.isEngagedSuggestion, isGroup: event.isGroup)
            if decay.isLatest {
                if isLatest { channels[index] = logWeight > LogSpace.zero ? logWeight + decay.rate * t : LogSpace.zero }
                continue
            }
            guard logWeight > LogSpace.zero else { continue }
            channels[index] = LogSpace.addExp(channels[index], logWeight + decay.rate * t)
        }
        if policy.contentWeight > 0 { contentTotal = ConversationState.applyContent(contentTotal, at: event.date, policy: policy) }
        if event.date > lastDate { lastDate = event.date }
        switch event.direction {
        case .outgoing:
            outgoingCount += 1
            if lastOutgoingDate.map({ event.date > $0 }) ?? true { lastOutgoingDate = event.date }
        case .incoming: incomingCount += 1
        case .unspecified: break
        }
        if event.isEngagedSuggestion { engagedCount += 1 }
        if event.isGroup { isGroup = true }
    }

    /// The log-domain content sum after one more donation of that kind at `date`.
    public static func applyContent(_ sum: Double, at date: Timestamp, policy: FrecencyPolicy) -> Double {
        LogSpace.addExp(sum, policy.contentRate * date.seconds)
    }

    /// The conversation's key in channel `channel`'s list of a content kind whose sum is `kindSum`:
    /// `A_m + ln s`, with `s = e^(kindSum − contentTotal)` the decayed share of its donations that carried the kind.
    ///
    /// Both sums decay at the content rate, so the share, like `A_m`, changes only with a new donation; and
    /// `e^(key − λ_m·t)` bounds what the kind adds to the channel's term through the content factor (`WalkPlan`).
    /// `-∞` when the conversation has no donation of the kind, or no content total (a policy without content).
    public func contentListKey(channel: Int, kindSum: Double) -> Double {
        guard kindSum > LogSpace.zero, contentTotal > LogSpace.zero else { return LogSpace.zero }
        return channels[channel] + min(0, kindSum - contentTotal)
    }

    /// Whether any donation is counted.
    public var hasDonations: Bool { lastDate.seconds > -.infinity }
}
