import SuggestCore

/// One account's ranking state as Redis held it at one state stamp (`StateStamp`): every conversation's record,
/// with its preference, and every sorted list, built from the records with the code that writes the sorted sets
/// (`ConversationRecord.key(in:)`), so that they hold the same keys to the bit. Immutable once built, so the
/// server's threads share it without a lock; `RedisRankingMirror` hands it out, and a query uses it only after
/// reading the same stamp from Redis.
///
/// Conversations are known by slots (dense, from 0), the handles of a mirrored `RedisRankingSource`; `numbers`
/// maps a slot back to the conversation's number for what is still read from Redis (the latest intents, the
/// people), which is read with the stamp in the same round trip.
final class MirroredRedisAccount: MirroredState {
    let account: String
    let stamp: [UInt8]
    /// Whether the store owed no rebuild when the account was read (between two reads of the same stamp: a
    /// rebuild's every step changes it, and writes its bookmark first).
    let keysFollowThePolicy: Bool
    let weights: LearnedWeights
    let numbers: [Int64]
    let slotsByNumber: [Int64: Int32]
    let slotsByIdentifier: [[UInt8]: Int32]
    let identifiers: [String]
    /// Each conversation's state, its preference (block, "suggest less") applied as random access applies it.
    let states: [ConversationState]
    let contentSums: [ContentSums]
    let services: [String?]
    /// One sorted list per channel, for every conversation, each service and each content kind, keyed by the
    /// name's bytes (as Redis compares names).
    let allLists: [MirroredList]
    let serviceLists: [[UInt8]: [MirroredList]]
    let kindLists: [[UInt8]: [MirroredList]]
    let channelCount: Int
    /// About how many bytes the arrays above hold, and the cache's floors beyond them: what the mirrors' budget
    /// counts.
    let estimatedBytes: Int

    /// What queries read from Redis beside the mirror, and the answers they gave, at its stamp.
    let cache: MirrorReadCache

    var count: Int { numbers.count }

    /// One conversation as read for a mirror.
    struct Conversation {
        var number: Int64
        var identifier: String
        var record: ConversationRecord
    }

    /// - Parameters:
    ///   - conversations: every conversation of the account with a record, in any order.
    ///   - preferences: the `pref` hash, conversation identifier (bytes) to its `BLOCKED,LESS` value.
    init(
        account: String, stamp: [UInt8], keysFollowThePolicy: Bool, weights: LearnedWeights,
        conversations: [Conversation], preferences: [[UInt8]: String], channelCount: Int,
        answerCounters: RankedAnswers.Counters
    ) {
        self.account = account
        self.stamp = stamp
        self.keysFollowThePolicy = keysFollowThePolicy
        self.weights = weights
        self.channelCount = channelCount
        numbers = conversations.map(\.number)
        identifiers = conversations.map(\.identifier)
        contentSums = conversations.map(\.record.contentSums)
        services = conversations.map(\.record.serviceName)
        states = conversations.map { conversation in
            var state = conversation.record.state
            if let preference = preferences[Array(conversation.identifier.utf8)] {
                let (blocked, less) = RedisDonationStore.preference(preference)
                state.isBlocked = blocked
                state.lessFeedback = less
            }
            return state
        }
        var byNumber: [Int64: Int32] = [:]
        var byIdentifier: [[UInt8]: Int32] = [:]
        byNumber.reserveCapacity(conversations.count)
        byIdentifier.reserveCapacity(conversations.count)
        for (slot, conversation) in conversations.enumerated() {
            byNumber[conversation.number] = Int32(slot)
            byIdentifier[Array(conversation.identifier.utf8)] = Int32(slot)
        }
        slotsByNumber = byNumber
        slotsByIdentifier = byIdentifier

        func lists(_ scope: SortedListScope, of slots: [Int32]) -> [MirroredList] {
            (0..<channelCount).map { channel in
                let list = SortedList(channel: channel, scope: scope)
                return MirroredList(
                    sorting: slots.compactMap { slot in
                        conversations[Int(slot)].record.key(in: list).map { (key: $0, slot: slot) }
                    })
            }
        }
        allLists = lists(.all, of: conversations.indices.map(Int32.init))
        var byService: [[UInt8]: (name: String, slots: [Int32])] = [:]
        var byKind: [[UInt8]: (name: String, slots: [Int32])] = [:]
        for (slot, conversation) in conversations.enumerated() {
            if let service = conversation.record.serviceName {
                byService[Array(service.utf8), default: (service, [])].slots.append(Int32(slot))
            }
            for kind in conversation.record.contentSums.keys {
                byKind[Array(kind.utf8), default: (kind, [])].slots.append(Int32(slot))
            }
        }
        serviceLists = byService.mapValues { lists(.service($0.name), of: $0.slots) }
        kindLists = byKind.mapValues { lists(.contentKind($0.name), of: $0.slots) }

        // Element sizes, the two dictionaries at their load factor, and each long string's heap buffer.
        var bytes = conversations.count * (8 + 16 + 16 + MemoryLayout<ConversationState>.stride + 8 + 16 + 48 + 48)
        for identifier in identifiers where identifier.utf8.count > 15 { bytes += 2 * (identifier.utf8.count + 32) }
        for sums in contentSums where !sums.isEmpty { bytes += 64 + 48 * sums.count }
        var entries = channelCount * conversations.count
        for lists in serviceLists.values { entries += lists.reduce(0) { $0 + $1.keys.count } }
        for lists in kindLists.values { entries += lists.reduce(0) { $0 + $1.keys.count } }
        let arrayBytes = bytes + entries * 12
        estimatedBytes = MirrorReadCache.budgetedBytes(ofMirrorHolding: arrayBytes)
        cache = MirrorReadCache(answerCounters: answerCounters, mirrorBytes: arrayBytes)
    }

    /// The list sorted access walks, or `nil` for a channel past the policy's (the query is then answered from
    /// Redis).
    func list(_ list: SortedList) -> MirroredList? {
        guard list.channel >= 0, list.channel < channelCount else { return nil }
        switch list.scope {
        case .all: return allLists[list.channel]
        case .service(let service): return serviceLists[Array(service.utf8)]?[list.channel] ?? MirroredList()
        case .contentKind(let kind): return kindLists[Array(kind.utf8)]?[list.channel] ?? MirroredList()
        }
    }

    /// Random access to one slot, as `RedisRankingSource` reads it from Redis.
    func candidate(_ slot: Int32, handle: ConversationHandle, contentKinds: [String]) -> RankingCandidate {
        let index = Int(slot)
        return RankingCandidate(
            conversation: handle, conversationIdentifier: identifiers[index], state: states[index],
            contentSums: contentKinds.map { contentSums[index][$0] ?? LogSpace.zero }, serviceName: services[index])
    }
}
