/// Everything a store derives from one conversation's donations: its ranking state, its content sums per kind, and
/// the service of its latest donation.
///
/// Every store folds a conversation's donations into a record with `apply`, in the order they were recorded, when
/// it records them and again when it recomputes the conversation after a deletion: one fold, so every store (and a
/// recomputation) reaches the same bits.
public struct ConversationRecord: Sendable, Equatable {
    /// The ranking state: channel sums, dates, counts and flags.
    public var state: ConversationState
    /// `ln Σ e^(λ_c·t)` over the donations of each content kind (`public.image`), with the content half-life.
    public var contentSums: ContentSums
    /// The service of the latest donation (either direction), `nil` when it named none.
    public var serviceName: String?

    /// A record as a store read it back; the defaults make `empty`.
    public init(state: ConversationState = .empty, contentSums: ContentSums = [:], serviceName: String? = nil) {
        self.state = state
        self.contentSums = contentSums
        self.serviceName = serviceName
    }

    /// A conversation with no donation yet.
    public static let empty = ConversationRecord()

    /// The conversation's key in `list`, or `nil` when the list's scope does not hold it: what every store keeps
    /// its sorted lists by.
    public func key(in list: SortedList) -> Double? {
        switch list.scope {
        case .all:
            return state.channels[list.channel]
        case .service(let service):
            return serviceName?.hasSameBytes(as: service) == true ? state.channels[list.channel] : nil
        case .contentKind(let kind):
            return contentSums[kind].map { state.contentListKey(channel: list.channel, kindSum: $0) }
        }
    }

    /// Folds one donation in.
    /// - Parameter contentKinds: the distinct kinds of the donation's content types (`UniformTypeTree.contentKinds`).
    /// - Returns: whether the donation is now the conversation's latest (at least as late as every earlier one: the
    ///   later recorded wins a tie), whose names and pictures the conversation shows. An older donation arriving
    ///   late changes the scores, not what the conversation looks like.
    /// - Complexity: O(c + k) for c channels and k kinds, except when a kind must go (`ContentSums.add`).
    @discardableResult
    public mutating func apply(
        date: Timestamp, direction: InteractionDirection, isEngagedSuggestion: Bool, isGroup: Bool,
        contentKinds: [String], serviceName: String?, policy: FrecencyPolicy
    ) -> Bool {
        let isLatest = date >= state.lastDate
        state.apply(
            .init(date: date, direction: direction, isEngagedSuggestion: isEngagedSuggestion, isGroup: isGroup),
            policy: policy)
        contentSums.add(contentKinds, at: date, policy: policy)
        if isLatest { self.serviceName = serviceName }
        return isLatest
    }
}
