import SuggestCore

/// `android`: the AOSP Sharesheet score (`SharesheetScore`), from incremental structures.
///
/// A conversation's frequency sum (in tenths) changes only when one of its shares ages past 1, 3, 7 or 14 days;
/// every share of the account sits in one array by date, with one pointer per step marking the shares that have
/// aged past it, and a query moves the pointers to its moment, each share it passes taking a tenth from its
/// conversation's sum. The sums are counted by value, so how many conversations reach a frequency bucket is one
/// look-up; the six latest share targets (the only ones with a recency score) come from a list in share order.
/// A rank is then a few counts, six exact comparisons, and, for ties, a walk down the account's conversations in
/// the contract's tie order to the target.
final class SharesheetReplay: AccountReplay {
    private var conversations = AnchorConversations()
    /// Every share (outgoing donation) of the account by date, and whose it is.
    private var shareDates: [Double] = []
    private var shareSlots: [Int32] = []
    /// Per step of `SharesheetScore.ageSteps`, how many shares (from the start of `shareDates`) have aged past it.
    private var aged = [Int](repeating: 0, count: SharesheetScore.ageSteps.count)
    /// Each conversation's frequency sum in tenths at `now`.
    private var tenths: [Int] = []
    private var total = 0
    private var withShares = 0
    /// The sums of the conversations with a share, counted by value.
    private var sums = ValueCounts()
    /// The conversations with a share, in share order (latest share first, then the contract's tie order).
    private var shareLinks = SlotLinks()
    private var shareOrder = SlotList()
    /// Every conversation in the contract's tie order (latest donation first, then identifier).
    private var recencyLinks = SlotLinks()
    private var recencyOrder = SlotList()
    /// The moment the sums hold for.
    private var now = -Double.infinity
    let depth: Int

    init(depth: Int) { self.depth = depth }

    func rank(of conversation: String, at date: Timestamp) throws -> RankedTarget? {
        guard let target = conversations.existingSlot(for: conversation) else { return nil }
        move(to: date.seconds)
        // The six latest share targets and their recency scores.
        var latest: [Int32] = []
        latest.reserveCapacity(SharesheetScore.recencyScores.count)
        var slot = shareOrder.head
        while slot >= 0, latest.count < SharesheetScore.recencyScores.count {
            latest.append(slot)
            slot = shareLinks.next[Int(slot)]
        }
        let targetScore = score(target, latest: latest)
        var before = 0
        for other in latest where other != target {
            let otherScore = score(other, latest: latest)
            if otherScore > targetScore || (otherScore == targetScore && conversations.recencyPrecedes(other, target)) {
                before += 1
            }
        }
        // The others score their frequency alone: a bucket's score, decreasing from bucket 0 (0.2) to 4 (0). Those
        // in the buckets that score more have a sum at or above the least sum of the last such bucket.
        let minimums = minimumTenths()
        let scores = Self.frequencyOnlyScores
        if let weakest = (0..<minimums.count).last(where: { scores[$0] > targetScore }) {
            before += sums.above(minimums[weakest] - 1)
            for other in latest where tenths[Int(other)] >= minimums[weakest] { before -= 1 }
        }
        // Then those of the bucket that ties, if one does, ahead of the target in the contract's order.
        if let tied = scores.firstIndex(of: targetScore), before < depth {
            let least = tied < minimums.count ? minimums[tied] : Int.min
            let beyond = tied > 0 ? minimums[tied - 1] : Int.max
            var slot = recencyOrder.head
            while slot >= 0, before < depth, conversations.recencyPrecedes(slot, target) {
                let sum = tenths[Int(slot)]
                if sum >= least, sum < beyond, !latest.contains(slot) { before += 1 }
                slot = recencyLinks.next[Int(slot)]
            }
        }
        return RankedTarget(
            rank: min(before, depth) + 1, covered: targetScore > 0,
            lastDate: Timestamp(seconds: conversations.lastDate[Int(target)]))
    }

    /// The score of a conversation with no recency score, for each frequency bucket (0.2, 0.15, 0.1, 0.05, 0),
    /// computed as Android combines them, so that equal scores are equal to the last bit.
    static let frequencyOnlyScores: [Double] = [0.2, 0.15, 0.1, 0.05, 0].map {
        SharesheetScore.probOR(SharesheetScore.probOR(0, $0), 0)
    }

    /// The least sum, in tenths, that reaches each frequency bucket (0.2, 0.15, 0.1, 0.05) at the current total:
    /// `SharesheetScore.normalizedFrequency` solved for the sum.
    private func minimumTenths() -> [Int] {
        guard total > 0, withShares > 0 else { return [Int.max, Int.max, Int.max, Int.max] }
        // ratio = sum · count / total against 2.5, 1.5, 1 and 0.75; the least whole sum at or above each, and at
        // least 1 (a sum of 0 has no frequency).
        func atLeast(_ numerator: Int, _ denominator: Int) -> Int {
            let product = numerator * total
            let divisor = denominator * withShares
            return max(1, (product + divisor - 1) / divisor)
        }
        return [atLeast(5, 2), atLeast(3, 2), atLeast(1, 1), atLeast(3, 4)]
    }

    /// A conversation's Sharesheet score at `now`, `latest` being the six latest share targets in order.
    private func score(_ slot: Int32, latest: [Int32]) -> Double {
        let recency = latest.firstIndex(of: slot).map { SharesheetScore.recencyScores[$0] } ?? 0
        let frequency = SharesheetScore.normalizedFrequency(tenths: tenths[Int(slot)], total: total, count: withShares)
        return SharesheetScore.probOR(SharesheetScore.probOR(recency, frequency), 0)
    }

    func apply(_ donation: ReplayDonation) {
        let (slot, isNew) = conversations.slot(for: donation.conversation)
        let index = Int(slot)
        if isNew {
            shareLinks.addSlot()
            recencyLinks.addSlot()
            tenths.append(0)
        }
        let oldLastDate = conversations.lastDate[index]
        let hadShares = conversations.outgoingCount[index] > 0
        let oldLastOutgoing = conversations.lastOutgoing[index]
        conversations.apply(donation.event, to: slot)
        let conversations = self.conversations
        if isNew || conversations.lastDate[index] != oldLastDate {
            if !isNew { recencyLinks.remove(slot, from: &recencyOrder) }
            recencyLinks.insert(slot, into: &recencyOrder) { conversations.recencyPrecedes($0, slot) }
        }
        if donation.event.direction == .outgoing {
            addShare(donation.event.date.seconds, of: slot, hadShares: hadShares)
        }
        if !hadShares || conversations.lastOutgoing[index] != oldLastOutgoing {
            guard conversations.outgoingCount[index] > 0 else { return }
            if hadShares { shareLinks.remove(slot, from: &shareOrder) }
            shareLinks.insert(slot, into: &shareOrder) { self.sharesLater($0, than: slot) }
        } else if hadShares, conversations.lastDate[index] != oldLastDate {
            // A later donation that is not a share only moves it ahead of those whose latest share is as late.
            shareLinks.moveTowardsHead(slot, in: &shareOrder) { self.sharesLater(slot, than: $0) }
        }
    }

    /// Adds one share at `date` to the array by date and to its conversation's sum, aged as it is at `now`.
    private func addShare(_ date: Double, of slot: Int32, hadShares: Bool) {
        var position = shareDates.count
        while position > 0, shareDates[position - 1] > date { position -= 1 }
        shareDates.insert(date, at: position)
        shareSlots.insert(slot, at: position)
        var weight = 10
        for (step, bound) in SharesheetScore.ageSteps.enumerated() where position < aged[step] || now - date > bound {
            aged[step] += 1
            weight -= 1
        }
        if hadShares {
            sums.add(tenths[Int(slot)], -1)
        } else {
            withShares += 1
        }
        tenths[Int(slot)] += weight
        total += weight
        sums.add(tenths[Int(slot)], 1)
    }

    /// Moves the pointers of every step to `t`: each share that ages past a step takes a tenth from its
    /// conversation's sum (gives one back if the query goes back in time).
    private func move(to t: Double) {
        guard t != now else { return }
        now = t
        for (step, bound) in SharesheetScore.ageSteps.enumerated() {
            while aged[step] < shareDates.count, t - shareDates[aged[step]] > bound {
                change(shareSlots[aged[step]], by: -1)
                aged[step] += 1
            }
            while aged[step] > 0, !(t - shareDates[aged[step] - 1] > bound) {
                aged[step] -= 1
                change(shareSlots[aged[step]], by: 1)
            }
        }
    }

    private func change(_ slot: Int32, by delta: Int) {
        sums.add(tenths[Int(slot)], -1)
        tenths[Int(slot)] += delta
        total += delta
        sums.add(tenths[Int(slot)], 1)
    }

    /// Whether `a`'s latest share is later than `b`'s, equal dates in the contract's tie order.
    private func sharesLater(_ a: Int32, than b: Int32) -> Bool {
        let (lastA, lastB) = (conversations.lastOutgoing[Int(a)], conversations.lastOutgoing[Int(b)])
        if lastA != lastB { return lastA > lastB }
        return conversations.recencyPrecedes(a, b)
    }
}
