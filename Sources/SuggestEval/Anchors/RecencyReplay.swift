import SuggestCore

/// `recency`: the latest donation in either direction first. The account's conversations are kept in that order
/// in one linked list, so a rank is a walk from its front.
final class RecencyReplay: AccountReplay {
    private var conversations = AnchorConversations()
    private var links = SlotLinks()
    private var order = SlotList()
    let depth: Int

    init(depth: Int) { self.depth = depth }

    /// - Complexity: O(min(r, depth)) for a conversation at rank r.
    func rank(of conversation: String, at date: Timestamp) throws -> RankedTarget? {
        guard let target = conversations.existingSlot(for: conversation) else { return nil }
        var before = 0
        var slot = order.head
        while slot >= 0, slot != target, before < depth {
            before += 1
            slot = links.next[Int(slot)]
        }
        return RankedTarget(
            rank: before + 1, covered: true, lastDate: Timestamp(seconds: conversations.lastDate[Int(target)]))
    }

    /// - Complexity: O(1) for a donation at least as late as the account's others.
    func apply(_ donation: ReplayDonation) {
        let (slot, isNew) = conversations.slot(for: donation.conversation)
        if isNew { links.addSlot() }
        let previous = conversations.lastDate[Int(slot)]
        conversations.apply(donation.event, to: slot)
        guard isNew || conversations.lastDate[Int(slot)] != previous else { return }
        if !isNew { links.remove(slot, from: &order) }
        let conversations = self.conversations
        links.insert(slot, into: &order) { conversations.recencyPrecedes($0, slot) }
    }
}
