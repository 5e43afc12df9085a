import SuggestCore

/// `frequency`: the most outgoing donations first. Conversations sit in one bucket per count, each bucket in the
/// contract's tie order (latest donation first, then identifier), and `atLeast[n]` counts the conversations with
/// at least n outgoing donations; a rank is one look-up and a walk into the target's bucket.
final class FrequencyReplay: AccountReplay {
    private var conversations = AnchorConversations()
    private var links = SlotLinks()
    private var buckets: [SlotList] = []
    /// `atLeast[n]`: how many conversations have n or more outgoing donations.
    private var atLeast: [Int] = []
    let depth: Int

    init(depth: Int) { self.depth = depth }

    /// - Complexity: O(1) to count the conversations with more, then O(min(t, depth)) for the t ahead of it in
    ///   its own bucket.
    func rank(of conversation: String, at date: Timestamp) throws -> RankedTarget? {
        guard let target = conversations.existingSlot(for: conversation) else { return nil }
        let count = conversations.outgoingCount[Int(target)]
        var before = count + 1 < atLeast.count ? atLeast[count + 1] : 0
        var slot = buckets[count].head
        while slot >= 0, slot != target, before < depth {
            before += 1
            slot = links.next[Int(slot)]
        }
        return RankedTarget(
            rank: min(before, depth) + 1, covered: count > 0,
            lastDate: Timestamp(seconds: conversations.lastDate[Int(target)]))
    }

    func apply(_ donation: ReplayDonation) {
        let (slot, isNew) = conversations.slot(for: donation.conversation)
        let oldCount = conversations.outgoingCount[Int(slot)]
        if isNew {
            links.addSlot()
            if atLeast.isEmpty { atLeast.append(0) }
            atLeast[0] += 1
        } else {
            links.remove(slot, from: &buckets[oldCount])
        }
        conversations.apply(donation.event, to: slot)
        let count = conversations.outgoingCount[Int(slot)]
        if count != oldCount {
            if count >= atLeast.count { atLeast.append(0) }
            atLeast[count] += 1
        }
        while buckets.count <= count { buckets.append(SlotList()) }
        let conversations = self.conversations
        links.insert(slot, into: &buckets[count]) { conversations.recencyPrecedes($0, slot) }
    }
}
