import SuggestCore

/// The replay state of one account under one policy: it ranks a conversation as of a moment, from the donations
/// applied so far, and applies the next donation.
protocol AccountReplay: AnyObject {
    /// Where `conversation` ranks at `date` among the account's conversations that have a donation, exactly down
    /// to the replay's depth, or `nil` when it has none yet (a `new` conversation).
    func rank(of conversation: String, at date: Timestamp) throws -> RankedTarget?

    /// Records one donation of this account.
    func apply(_ donation: ReplayDonation)
}

/// Where the conversation a donation went to ranked just before it.
struct RankedTarget: Equatable {
    /// 1 for the top suggestion; the replay's depth plus one for any deeper rank.
    var rank: Int
    /// Whether the policy's score for it was above zero, i.e. the policy had evidence for it and did not leave it
    /// to the tie-breakers alone.
    var covered: Bool
    /// The conversation's latest donation before this one, either direction.
    var lastDate: Timestamp
}
