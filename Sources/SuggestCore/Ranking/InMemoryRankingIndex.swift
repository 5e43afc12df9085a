/// Ranking state held in memory: for replay evaluation, benchmarks, and apps that keep their own log.
///
/// Conversations get dense slots; per-slot arrays hold the state, and one `SortedKeyList` per decay channel gives
/// sorted access. Not `Sendable`: one owner at a time, like a database connection.
public final class InMemoryRankingIndex: RankingSource {
    public let policy: FrecencyPolicy
    public let types: UniformTypeTree
    public private(set) var identifiers: [String] = []
    // The two properties `apply` touches skip the run-time exclusivity check (a fifth of applying a donation):
    // the index is not `Sendable`, has one owner at a time, and never hands out inout access to them.
    @exclusivity(unchecked) public private(set) var states: [ConversationState] = []
    private var slots: [String: Int32] = [:]
    private var services: [String?] = []
    private var channelLists: [SortedKeyList]
    @exclusivity(unchecked) private var pending = PendingSlots()
    /// The content sums per kind (`public.image`), read by random access when something is being shared.
    private var contentSums: [String: [Int32: Double]] = [:]
    private var peopleIndex: [String: [Int32]] = [:]
    private var peopleKeys: [Set<String>] = []

    public init(policy: FrecencyPolicy = .default, types: UniformTypeTree = .standard) {
        self.policy = policy
        self.types = types
        channelLists = Array(repeating: SortedKeyList(), count: policy.channels.count)
    }

    /// How many conversations the index holds.
    public var count: Int { identifiers.count }

    /// The slot of a conversation, created empty if it is new.
    /// - Complexity: O(1) on average (one hash of the identifier).
    public func slot(for conversationIdentifier: String) -> Int32 {
        if let slot = slots[conversationIdentifier] { return slot }
        let slot = Int32(identifiers.count)
        slots[conversationIdentifier] = slot
        identifiers.append(conversationIdentifier)
        states.append(.empty)
        services.append(nil)
        peopleKeys.append([])
        return slot
    }

    /// The slot of a known conversation.
    public func existingSlot(for conversationIdentifier: String) -> Int32? { slots[conversationIdentifier] }

    /// Records one donation: its ranking event, content kinds, people and service.
    public func apply(_ interaction: Interaction) {
        let slot = slot(for: interaction.conversationIdentifier)
        apply(ConversationState.Event(interaction), to: slot)
        for kind in Set(interaction.intent.contentTypes.map(types.contentKind(of:))) {
            applyContent(kind: kind, at: interaction.date, to: slot)
        }
        if let service = interaction.intent.serviceName { services[Int(slot)] = service }
        for person in interaction.intent.recipients {
            for key in person.matchKeys where peopleKeys[Int(slot)].insert(key).inserted {
                peopleIndex[key, default: []].append(slot)
            }
        }
    }

    /// Records one donation's ranking event: the hot path.
    /// - Complexity: O(1): one `exp` and one `log1p` per channel, and a mark per list.
    @inline(__always)
    public func apply(_ event: ConversationState.Event, to slot: Int32) {
        states[Int(slot)].apply(event, policy: policy)
        pending.mark(slot)
    }

    /// Adds one donation of a content kind to a conversation's sum for that kind.
    public func applyContent(kind: String, at date: Timestamp, to slot: Int32) {
        contentSums[kind, default: [:]][slot] = ConversationState.applyContent(
            contentSums[kind]?[slot] ?? LogSpace.zero, at: date, policy: policy)
    }

    /// Blocks or unblocks a conversation (it keeps its state).
    public func setBlocked(_ blocked: Bool, conversation: String) {
        let slot = slot(for: conversation)
        states[Int(slot)].isBlocked = blocked
    }

    /// Records one "suggest less" feedback.
    public func suggestLess(conversation: String) {
        let slot = slot(for: conversation)
        states[Int(slot)].lessFeedback += 1
    }

    /// Brings every sorted list up to date; queries call it, and benchmarks call it to time it apart.
    public func settle() {
        guard !pending.isEmpty else { return }
        let states = self.states
        for index in channelLists.indices {
            channelLists[index].settle(pending: pending.slots, count: states.count) { states[Int($0)].channels[index] }
        }
        pending.clear()
    }

    /// The exact rank of one conversation under `ranker`: `TopKRanker.rank(of:in:)` on this index, called from
    /// inside the module so that the generic ranker is specialized for it (a call from another module goes
    /// through witness tables at every access: a third of replay's time).
    public func rank(of slot: Int32, using ranker: TopKRanker) throws -> (Int, RankedConversation)? {
        try ranker.rank(of: Int64(slot), in: self)
    }

    // MARK: RankingSource

    public func sortedAccess(channel: Int) -> any SortedAccessCursor {
        settle()
        let states = self.states
        return channelLists[channel].cursor(currentKey: { states[Int($0)].channels[channel] })
    }

    public func candidate(_ reference: Int64, contentKinds: [String]) -> RankingCandidate? {
        guard reference >= 0, reference < Int64(identifiers.count) else { return nil }
        let slot = Int32(reference)
        return RankingCandidate(
            reference: reference, conversationIdentifier: identifiers[Int(slot)], state: states[Int(slot)],
            contentSums: contentKinds.map { contentSums[$0]?[slot] ?? LogSpace.zero },
            serviceName: services[Int(slot)])
    }

    public func conversations(withPerson key: String) -> [Int64] {
        (peopleIndex[key] ?? []).map(Int64.init)
    }

    public func allReferences() -> [Int64] { (0..<Int64(identifiers.count)).map { $0 } }

    public func conversationCount() -> Int { identifiers.count }
}
