import SuggestCore

/// Replays one account under an anchor that is not a decayed sum (`recency`, `frequency`, `zoxide`, `android`):
/// per-conversation facts kept donation by donation, every conversation scored at each query.
final class AnchorReplay: AccountReplay {
    /// The anchors scored here.
    enum Rule {
        case recency, frequency, zoxide, android
    }

    let rule: Rule
    private var slots: [String: Int] = [:]
    private var identifiers: [String] = []
    /// The latest donation in either direction: the first tie-breaker, and the `recency` score.
    private var lastDate: [Double] = []
    /// The latest outgoing donation, `-∞` when there is none.
    private var lastOutgoing: [Double] = []
    private var outgoingCount: [Int] = []
    /// The dates of the outgoing donations, sorted; kept for `android` only.
    private var outgoingDates: [[Double]] = []
    /// Scratch space for the scores of one query.
    private var scores: [Double] = []
    private var tenths: [Int] = []

    init(rule: Rule) {
        self.rule = rule
    }

    func apply(_ donation: ReplayDonation) {
        let slot: Int
        if let known = slots[donation.conversation] {
            slot = known
        } else {
            slot = identifiers.count
            slots[donation.conversation] = slot
            identifiers.append(donation.conversation)
            lastDate.append(-.infinity)
            lastOutgoing.append(-.infinity)
            outgoingCount.append(0)
            outgoingDates.append([])
            scores.append(0)
            tenths.append(0)
        }
        let t = donation.event.date.seconds
        lastDate[slot] = max(lastDate[slot], t)
        guard donation.event.direction == .outgoing else { return }
        outgoingCount[slot] += 1
        lastOutgoing[slot] = max(lastOutgoing[slot], t)
        if case .android = rule {
            // Dates usually arrive in order: then this is an append.
            var position = outgoingDates[slot].count
            while position > 0, outgoingDates[slot][position - 1] > t { position -= 1 }
            outgoingDates[slot].insert(t, at: position)
        }
    }

    /// - Complexity: O(n) for n conversations (`android`: O(n log m) for m outgoing donations per conversation).
    func rank(of conversation: String, at date: Timestamp) throws -> RankedTarget? {
        guard let target = slots[conversation] else { return nil }
        let t = date.seconds
        let covered: Bool
        switch rule {
        case .recency:
            for slot in identifiers.indices { scores[slot] = lastDate[slot] }
            covered = true
        case .frequency:
            for slot in identifiers.indices { scores[slot] = Double(outgoingCount[slot]) }
            covered = scores[target] > 0
        case .zoxide:
            for slot in identifiers.indices {
                scores[slot] = Double(outgoingCount[slot]) * Self.zoxideFactor(age: t - lastOutgoing[slot])
            }
            covered = scores[target] > 0
        case .android:
            scoreSharesheet(at: t)
            covered = scores[target] > 0
        }
        let score = scores[target]
        let last = lastDate[target]
        var before = 0
        for slot in identifiers.indices where slot != target {
            if scores[slot] > score {
                before += 1
            } else if scores[slot] == score {
                if lastDate[slot] > last
                    || (lastDate[slot] == last
                        && identifiers[slot].utf8.lexicographicallyPrecedes(identifiers[target].utf8))
                {
                    before += 1
                }
            }
        }
        return RankedTarget(rank: before + 1, covered: covered, lastDate: Timestamp(seconds: last))
    }

    /// zoxide's factor for the age of the last access (here: the last outgoing donation).
    @inline(__always)
    static func zoxideFactor(age: Double) -> Double {
        if age < 3_600 { return 4 }
        if age < 86_400 { return 2 }
        if age < 604_800 { return 0.5 }
        return 0.25
    }

    /// Fills `scores` with every conversation's Sharesheet score at `t`.
    private func scoreSharesheet(at t: Double) {
        var total = 0
        var withShares = 0
        // The up to 6 latest share targets, latest first.
        var latest: [Int] = []
        latest.reserveCapacity(SharesheetScore.recencyScores.count + 1)
        for slot in identifiers.indices {
            guard outgoingCount[slot] > 0 else {
                tenths[slot] = 0
                continue
            }
            let sum = SharesheetScore.frequencyTenths(sortedDates: outgoingDates[slot], at: t)
            tenths[slot] = sum
            total += sum
            withShares += 1
            var position = latest.count
            while position > 0, sharesLater(slot, than: latest[position - 1]) { position -= 1 }
            if position < SharesheetScore.recencyScores.count {
                latest.insert(slot, at: position)
                if latest.count > SharesheetScore.recencyScores.count { latest.removeLast() }
            }
        }
        for slot in identifiers.indices { scores[slot] = 0 }
        for (position, slot) in latest.enumerated() { scores[slot] = SharesheetScore.recencyScores[position] }
        for slot in identifiers.indices {
            let frequency = SharesheetScore.normalizedFrequency(tenths: tenths[slot], total: total, count: withShares)
            // As Android: probOR(probOR(recency, frequency), mime frequency), the last being 0 here.
            scores[slot] = SharesheetScore.probOR(SharesheetScore.probOR(scores[slot], frequency), 0)
        }
    }

    /// Whether `a`'s latest share is later than `b`'s, equal dates in the contract's tie order.
    private func sharesLater(_ a: Int, than b: Int) -> Bool {
        if lastOutgoing[a] != lastOutgoing[b] { return lastOutgoing[a] > lastOutgoing[b] }
        if lastDate[a] != lastDate[b] { return lastDate[a] > lastDate[b] }
        return identifiers[a].utf8.lexicographicallyPrecedes(identifiers[b].utf8)
    }
}
