import SuggestCore

/// What replay keeps of each account apart from its ranking state: its number, the identifiers it was donated
/// (a repeated one is skipped, as the store skips it) and its latest incoming donation (what a reply answers).
///
/// The same for every policy, so an `EvalSession` keeps one for all of its evaluators: kept by each, `--policy all`
/// held eight copies, and a history of 500,000 accounts of two donations took 7 GB.
final class AccountBook {
    /// What the book says of one donation, before any policy replays it.
    struct Admission {
        /// The account's number, in the order accounts were first met.
        var account: Int
        /// Whether this donation is the account's first.
        var isNewAccount: Bool
        /// Whether its identifier was donated in the account before: it is skipped.
        var isDuplicate: Bool
        /// Whether it is outgoing to the conversation of the account's latest incoming donation.
        var answersLatestIncoming: Bool
    }

    /// By the account's bytes, as the stores keep accounts apart.
    private var accountSlots: [ByteKey: Int] = [:]
    private var donatedIdentifiers: [IdentifierSet] = []
    /// Per account, the conversation of the latest incoming donation and its date.
    private var latestIncoming: [(conversation: String, date: Timestamp)?] = []

    /// Books one donation: its account, whether it repeats an identifier, whether it answers the latest incoming
    /// donation; an incoming one (not a duplicate) becomes the latest if it is as recent.
    func admit(_ donation: ReplayDonation) -> Admission {
        var admission = Admission(account: 0, isNewAccount: false, isDuplicate: false, answersLatestIncoming: false)
        if let known = accountSlots[ByteKey(donation.account)] {
            admission.account = known
        } else {
            admission.account = donatedIdentifiers.count
            admission.isNewAccount = true
            accountSlots[ByteKey(donation.account)] = admission.account
            donatedIdentifiers.append(IdentifierSet())
            latestIncoming.append(nil)
        }
        let account = admission.account
        if let identifier = donation.identifier, !donatedIdentifiers[account].insert(identifier) {
            admission.isDuplicate = true
            return admission
        }
        switch donation.event.direction {
        case .outgoing:
            if let latest = latestIncoming[account], latest.conversation.hasSameBytes(as: donation.conversation) {
                admission.answersLatestIncoming = true
            }
        case .incoming:
            if latestIncoming[account].map({ donation.event.date >= $0.date }) ?? true {
                latestIncoming[account] = (donation.conversation, donation.event.date)
            }
        default: break
        }
        return admission
    }
}
