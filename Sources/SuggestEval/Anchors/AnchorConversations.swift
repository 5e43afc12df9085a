import SuggestCore

/// What every anchor keeps of an account's conversations, donation by donation: dense slots, identifiers, the
/// latest donation either way (the first tie-breaker, and `recency`'s score), the latest outgoing one and the
/// number of outgoing ones.
struct AnchorConversations {
    /// By the identifier's bytes, as the stores keep conversations apart.
    private var slots: [ByteKey: Int32] = [:]
    private(set) var identifiers: [String] = []
    /// The latest donation in either direction, `-∞` before any.
    private(set) var lastDate: [Double] = []
    /// The latest outgoing donation, `-∞` when there is none.
    private(set) var lastOutgoing: [Double] = []
    private(set) var outgoingCount: [Int] = []

    var count: Int { identifiers.count }

    /// The slot of a known conversation.
    func existingSlot(for conversation: String) -> Int32? { slots[ByteKey(conversation)] }

    /// The slot of a conversation, and whether it was created now.
    mutating func slot(for conversation: String) -> (slot: Int32, isNew: Bool) {
        let key = ByteKey(conversation)
        if let known = slots[key] { return (known, false) }
        let slot = Int32(identifiers.count)
        slots[key] = slot
        identifiers.append(conversation)
        lastDate.append(-.infinity)
        lastOutgoing.append(-.infinity)
        outgoingCount.append(0)
        return (slot, true)
    }

    /// Counts one donation of `slot`.
    mutating func apply(_ event: ConversationState.Event, to slot: Int32) {
        let index = Int(slot)
        let t = event.date.seconds
        lastDate[index] = max(lastDate[index], t)
        guard event.direction == .outgoing else { return }
        outgoingCount[index] += 1
        lastOutgoing[index] = max(lastOutgoing[index], t)
    }

    /// The contract's order among equal scores: the more recent latest donation first, then the smaller
    /// identifier byte-wise.
    @inline(__always)
    func recencyPrecedes(_ a: Int32, _ b: Int32) -> Bool {
        let (dateA, dateB) = (lastDate[Int(a)], lastDate[Int(b)])
        if dateA != dateB { return dateA > dateB }
        return identifiers[Int(a)].utf8.lexicographicallyPrecedes(identifiers[Int(b)].utf8)
    }
}
