/// Ranking state held in memory: for replay evaluation, benchmarks, and apps that keep their own log.
///
/// Conversations get dense slots; per-slot arrays hold the state, and one `SortedKeyList` per decay channel gives
/// sorted access. The lists of a scope (a service, a content kind) are built the first time a query asks for them
/// and kept up to date from then on, so a replay that never asks pays nothing for them. Not `Sendable`: one owner
/// at a time, like a database connection.
public final class InMemoryRankingIndex: RankingSource {
    /// The channel shapes and context constants the states are kept under.
    public let policy: FrecencyPolicy
    /// The type tree that maps a donation's content types to the kinds the content sums are kept by.
    public let types: UniformTypeTree
    /// Each slot's conversation identifier, in the order the conversations were first met.
    public private(set) var identifiers: [String] = []
    // The two properties `apply` touches skip the run-time exclusivity check (a fifth of applying a donation):
    // the index is not `Sendable`, has one owner at a time, and never hands out inout access to them.
    /// Each slot's ranking state, in the order of `identifiers`.
    @exclusivity(unchecked) public private(set) var states: [ConversationState] = []
    // Text is looked up by its bytes (`ByteKey`), as the stores compare it: canonically equivalent spellings of a
    // conversation, a person, a service or a kind stay apart.
    private var slots: [ByteKey: Int32] = [:]
    private var services: [String?] = []
    /// The intent each conversation is shown by (`ShownDonation`), without its content types.
    private var latest: [SendMessageIntent?] = []
    private var shown: [ShownDonation] = []
    /// One list per channel, built at the first sorted access (`settle`): a replay ranks an account of at most
    /// `TopKRanker.scanLimit` conversations by a scan, and `eval` of many small accounts kept lists it never read
    /// (four lists per policy and account).
    private var channelLists: [SortedKeyList] = []
    /// The lists of the scopes queries have asked for, one per channel each.
    private var scopedLists: [ScopeKey: [SortedKeyList]] = [:]
    @exclusivity(unchecked) private var pending = PendingSlots()
    /// Each slot's content sums per kind (`public.image`), read by random access when something is being shared;
    /// grown to a slot at its first content.
    private var contentSums: [ContentSums] = []
    private var peopleIndex: [ByteKey: [Int32]] = [:]
    private var peopleKeys: [Set<ByteKey>] = []

    /// An empty index.
    /// - Parameters:
    ///   - policy: the channel shapes the states are kept under.
    ///   - types: the type tree for content kinds.
    public init(policy: FrecencyPolicy = .default, types: UniformTypeTree = .standard) {
        self.policy = policy
        self.types = types
    }

    /// How many conversations the index holds.
    public var count: Int { identifiers.count }

    /// The slot of a conversation, created empty if it is new.
    /// - Complexity: O(1) on average (one hash of the identifier).
    public func slot(for conversationIdentifier: String) -> Int32 {
        let key = ByteKey(conversationIdentifier)
        if let slot = slots[key] { return slot }
        let slot = Int32(identifiers.count)
        slots[key] = slot
        identifiers.append(conversationIdentifier)
        states.append(.empty)
        return slot
    }

    /// The slot of a known conversation.
    public func existingSlot(for conversationIdentifier: String) -> Int32? { slots[ByteKey(conversationIdentifier)] }

    /// Records one donation: its ranking event, content kinds, people, service and what it says of its
    /// conversation.
    public func apply(_ interaction: Interaction) {
        let slot = slot(for: interaction.conversationIdentifier)
        let isLatest = interaction.date >= states[Int(slot)].lastDate
        describe(upTo: slot)
        apply(ConversationState.Event(interaction), to: slot)
        applyContent(kinds: types.contentKinds(of: interaction.intent.contentTypes), at: interaction.date, to: slot)
        if isLatest { services[Int(slot)] = interaction.intent.serviceName }
        if shown[Int(slot)].takes(
            date: interaction.date, describes: interaction.intent.describesConversation, isLatest: isLatest)
        {
            var intent = interaction.intent
            intent.contentTypes = []
            latest[Int(slot)] = intent
        }
        for person in interaction.intent.participants {
            for key in person.matchKeys.map(ByteKey.init) where peopleKeys[Int(slot)].insert(key).inserted {
                peopleIndex[key, default: []].append(slot)
            }
        }
    }

    /// Grows what the index keeps of conversations beyond their ranking state (service, shown intent, people) to
    /// hold `slot`. Only whole donations (`apply(_:)`) fill it: a replay applies events alone, and growing it with
    /// every slot made each account of a replay carry four arrays it never read (`eval --policy all` holds one
    /// index per policy and account).
    private func describe(upTo slot: Int32) {
        let missing = Int(slot) + 1 - services.count
        guard missing > 0 else { return }
        services.append(contentsOf: repeatElement(nil, count: missing))
        latest.append(contentsOf: repeatElement(nil, count: missing))
        shown.append(contentsOf: repeatElement(ShownDonation(), count: missing))
        peopleKeys.append(contentsOf: repeatElement([], count: missing))
    }

    /// The service of a slot's latest donation, if a whole donation said one.
    @inline(__always)
    private func service(of slot: Int32) -> String? {
        Int(slot) < services.count ? services[Int(slot)] : nil
    }

    /// Records one donation's ranking event: the hot path.
    /// - Complexity: O(1): one `exp` and one `log1p` per channel, and a mark per list.
    @inline(__always)
    public func apply(_ event: ConversationState.Event, to slot: Int32) {
        states[Int(slot)].apply(event, policy: policy)
        if !channelLists.isEmpty { pending.mark(slot) }
    }

    /// Adds one donation that carried `kinds` (distinct) to a conversation's sums, as every store does
    /// (`ContentSums.add`).
    public func applyContent(kinds: [String], at date: Timestamp, to slot: Int32) {
        guard !kinds.isEmpty else { return }
        if contentSums.count <= Int(slot) {
            contentSums.append(contentsOf: repeatElement(ContentSums(), count: Int(slot) + 1 - contentSums.count))
        }
        contentSums[Int(slot)].add(kinds, at: date, policy: policy)
        if !channelLists.isEmpty { pending.mark(slot) }
    }

    /// Adds one donation of a content kind to a conversation's sums.
    @available(*, deprecated, renamed: "applyContent(kinds:at:to:)", message: "a donation's kinds are added at once")
    public func applyContent(kind: String, at date: Timestamp, to slot: Int32) {
        applyContent(kinds: [kind], at: date, to: slot)
    }

    /// A slot's sum for `kind`, `nil` when it has none.
    @inline(__always)
    private func contentSum(_ kind: String, of slot: Int32) -> Double? {
        Int(slot) < contentSums.count ? contentSums[Int(slot)][kind] : nil
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

    /// Brings every sorted list up to date, building the channels' lists the first time; queries call it, and
    /// benchmarks call it to time it apart.
    public func settle() {
        if channelLists.isEmpty {
            // Scopes' lists are only made after these (`sortedAccess`): there is nothing pending for any list yet.
            let members = Array(0..<Int32(states.count))
            let states = self.states
            channelLists = policy.channels.indices.map { index in
                var list = SortedKeyList()
                list.rebuild(members: members) { states[Int($0)].channels[index] }
                return list
            }
            return
        }
        guard !pending.isEmpty else { return }
        let states = self.states
        for index in channelLists.indices {
            channelLists[index].update(pending.slots) { states[Int($0)].channels[index] }
        }
        // Each list updated where the dictionary holds it: a copy taken out and put back would copy its blocks.
        for scopeKey in Array(scopedLists.keys) {
            let scope = scopeKey.scope
            for index in policy.channels.indices {
                scopedLists[scopeKey]![index].update(pending.slots, key: key(in: SortedList(channel: index, scope: scope)))
            }
        }
        pending.clear()
    }

    /// Whether a slot belongs to a scope now.
    private func holds(_ scope: SortedListScope, _ slot: Int32) -> Bool {
        switch scope {
        case .all: return true
        case .service(let service): return self.service(of: slot)?.hasSameBytes(as: service) == true
        case .contentKind(let kind): return contentSum(kind, of: slot) != nil
        }
    }

    /// A slot's key in `list` now (`ConversationRecord.key(in:)`), `nil` when the list's scope does not hold it.
    private func key(in list: SortedList) -> (Int32) -> Double? {
        let states = self.states
        let channel = list.channel
        switch list.scope {
        case .all:
            return { states[Int($0)].channels[channel] }
        case .service(let service):
            let services = self.services
            return { slot in
                Int(slot) < services.count && services[Int(slot)]?.hasSameBytes(as: service) == true
                    ? states[Int(slot)].channels[channel] : nil
            }
        case .contentKind(let kind):
            let sums = contentSums
            return { slot in
                guard Int(slot) < sums.count, let sum = sums[Int(slot)][kind] else { return nil }
                return states[Int(slot)].contentListKey(channel: channel, kindSum: sum)
            }
        }
    }

    private func members(of scope: SortedListScope) -> [Int32] {
        (0..<Int32(identifiers.count)).filter { holds(scope, $0) }
    }

    /// The rank of one conversation under `ranker`, exact down to `depth`: `TopKRanker.rank(of:in:depth:)` on this
    /// index, called from inside the module so that the generic ranker is specialized for it (a call from another
    /// module goes through witness tables at every access: a third of replay's time).
    public func rank(of slot: Int32, using ranker: TopKRanker, depth: Int = .max) throws -> RankOfConversation? {
        try ranker.rank(of: ConversationHandle(rawValue: Int64(slot)), in: self, depth: depth)
    }

    /// `rank(of:using:depth:)` for a series of ranks (a replay's), carrying `witnesses` from one to the next
    /// (`TopKRanker.rank(of:in:depth:witnesses:statistics:)`); the statistics count the walk's accesses, for
    /// benchmarks.
    public func rank(
        of slot: Int32, using ranker: TopKRanker, depth: Int, witnesses: inout DeepRankWitnesses,
        statistics: inout TopKRanker.Statistics
    ) throws -> RankOfConversation? {
        try ranker.rank(
            of: ConversationHandle(rawValue: Int64(slot)), in: self, depth: depth, witnesses: &witnesses,
            statistics: &statistics)
    }

    // MARK: RankingSource

    public func sortedAccess(_ lists: [SortedList]) -> [Cursor] {
        settle()
        return lists.map { list in
            switch list.scope {
            case .all: return channelLists[list.channel].cursor()
            case .service, .contentKind: return scoped(list.scope)[list.channel].cursor()
            }
        }
    }

    /// The lists of a scope, built from the current state the first time they are asked for.
    private func scoped(_ scope: SortedListScope) -> [SortedKeyList] {
        if let lists = scopedLists[ScopeKey(scope)] { return lists }
        let members = members(of: scope)
        var lists = Array(repeating: SortedKeyList(), count: policy.channels.count)
        for index in lists.indices {
            let key = key(in: SortedList(channel: index, scope: scope))
            lists[index].rebuild(members: members, key: { key($0) ?? LogSpace.zero })
        }
        scopedLists[ScopeKey(scope)] = lists
        return lists
    }

    // Inlined into the walk, so that the candidate is built where the walk reads it rather than copied there (two
    // copies of it were a tenth of a replay that ranks deep).
    @inline(__always)
    public func candidate(_ conversation: ConversationHandle, contentKinds: [String]) -> RankingCandidate? {
        let reference = conversation.rawValue
        guard reference >= 0, reference < Int64(identifiers.count) else { return nil }
        let slot = Int32(reference)
        return RankingCandidate(
            conversation: conversation, conversationIdentifier: identifiers[Int(slot)], state: states[Int(slot)],
            contentSums: contentKinds.map { contentSum($0, of: slot) ?? LogSpace.zero },
            serviceName: service(of: slot))
    }

    @inline(__always)
    public func rankingState(_ conversation: ConversationHandle) -> ConversationState? {
        let reference = conversation.rawValue
        guard reference >= 0, reference < Int64(states.count) else { return nil }
        return states[Int(reference)]
    }

    public func conversations(withPeople keys: [String]) -> [[ConversationHandle]] {
        keys.map { key in (peopleIndex[ByteKey(key)] ?? []).map { ConversationHandle(rawValue: Int64($0)) } }
    }

    public func conversation(identifiedBy conversationIdentifier: String) -> ConversationHandle? {
        slots[ByteKey(conversationIdentifier)].map { ConversationHandle(rawValue: Int64($0)) }
    }

    public func latestIntents(_ conversations: [ConversationHandle]) -> [SendMessageIntent?] {
        conversations.map { conversation in
            let slot = Int(conversation.rawValue)
            return slot >= 0 && slot < latest.count ? latest[slot] : nil
        }
    }

    public func allConversations() -> [ConversationHandle] {
        (0..<Int64(identifiers.count)).map { ConversationHandle(rawValue: $0) }
    }

    public func conversationCount() -> Int { identifiers.count }

    /// Always: the index applies every donation under its own policy.
    public func keysFollowThePolicy() -> Bool { true }
}

/// A scope as the key of its lists: its service or kind by bytes (`ByteKey`), where `SortedListScope`'s own
/// equality is `String`'s.
private enum ScopeKey: Hashable {
    case all
    case service(ByteKey)
    case contentKind(ByteKey)

    init(_ scope: SortedListScope) {
        switch scope {
        case .all: self = .all
        case .service(let service): self = .service(ByteKey(service))
        case .contentKind(let kind): self = .contentKind(ByteKey(kind))
        }
    }

    var scope: SortedListScope {
        switch self {
        case .all: .all
        case .service(let service): .service(service.string)
        case .contentKind(let kind): .contentKind(kind.string)
        }
    }
}
