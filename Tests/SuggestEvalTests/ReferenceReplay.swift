#if canImport(Glibc)
    import Glibc
#endif
import SuggestCore
import SuggestEval

/// The obviously correct replay the evaluator is checked against: at each outgoing donation it recomputes every
/// conversation's score from the raw list of the account's earlier donations, by each policy's formula written
/// out directly (linear space, no log-domain sums, no index, no top-K), and counts who ranks before the target.
///
/// O(n²) per account; for small histories only.
enum ReferenceReplay {
    /// What the reference expects for one donation.
    enum Outcome: Equatable {
        case duplicate, applied, new
        /// The rank lies in `lowest...highest`: they differ only where two different histories have scores within
        /// a relative 1e-7, which the log-domain sums may order either way.
        case ranked(lowest: Int, highest: Int, covered: Bool)
    }

    /// The relative difference under which two decayed scores from different histories count as a near tie.
    static let tolerance = 1e-7

    static func outcomes(of history: [Interaction], policy: RankingPolicy) -> [Outcome] {
        var identifiers: [ByteKey: Set<ByteKey>] = [:]
        var past: [ByteKey: [Interaction]] = [:]
        var learners: [ByteKey: Learner] = [:]
        var outcomes: [Outcome] = []
        for donation in history {
            if let identifier = donation.identifier {
                guard identifiers[ByteKey(donation.account), default: []].insert(ByteKey(identifier)).inserted else {
                    outcomes.append(.duplicate)
                    continue
                }
            }
            let earlier = past[ByteKey(donation.account)] ?? []
            if donation.direction == .outgoing {
                let learner = learners[ByteKey(donation.account)] ?? Learner()
                outcomes.append(rank(donation, among: earlier, policy: policy, learner: learner))
                if case .learned(let learned) = policy.rule {
                    learners[ByteKey(donation.account)] = learner.learning(from: donation, among: earlier, policy: learned)
                }
            } else {
                outcomes.append(.applied)
            }
            past[ByteKey(donation.account), default: []].append(donation)
        }
        return outcomes
    }

    /// The learned policy written out: each channel's value of a conversation as a plain sum of weighted halvings
    /// (relative to the account's latest donation, so that nothing underflows), the masses as plain sums over
    /// the conversations of each kind, and the mixture's update applied step by step as `LearnedPolicy` defines
    /// it.
    struct Learner {
        /// `π̂` per channel, for people (`[0]`) and groups (`[1]`), learned at the sends when the kind's mass in the
        /// channel was fresh; `staleShares` when it was stale.
        var shares: [[Double]] = Array(repeating: [0, 0], count: FrecencyPolicy.maximumChannels)
        var staleShares: [[Double]] = Array(repeating: [0, 0], count: FrecencyPolicy.maximumChannels)
        var targets = 0
        /// Whether a send was learned from at a moment within rounding of an expert's turn from fresh to stale
        /// (whole hours after one donation of weight 1, in these histories): the store decides such a moment by
        /// its own rounding, so every later rank of the account may differ from this replay's.
        var ambiguous = false

        /// Each channel's value of each conversation, the masses per channel and kind (in each kind's unit), how
        /// the masses split between the kinds, and each kind's latest date (its unit).
        static func values(_ facts: [ByteKey: Facts], policy: LearnedPolicy) -> (
            values: [ByteKey: [Double]], masses: [[Double]], kindShares: [[Double]], reference: [Double]
        ) {
            // Each kind's values relative to its own latest donation: a channel's share of a conversation is the
            // same whatever the unit, and the latest conversation of a kind never underflows to 0.
            func kind(_ conversation: Facts) -> Int { conversation.donations.contains(where: { $0.intent.isGroup }) ? 1 : 0 }
            var reference = [-Double.infinity, -Double.infinity]
            for conversation in facts.values { reference[kind(conversation)] = max(reference[kind(conversation)], conversation.lastDate) }
            var values: [ByteKey: [Double]] = [:]
            var masses = Array(repeating: [0.0, 0.0], count: policy.base.channels.count)
            for (key, conversation) in facts {
                let kind = kind(conversation)
                values[key] = policy.base.channels.enumerated().map { index, channel in
                    var sum = 0.0
                    for donation in counted(conversation.donations, in: channel) {
                        sum += weight(of: donation, in: channel) * pow(2, (donation.date.seconds - reference[kind]) / channel.halfLife)
                    }
                    masses[index][kind] += sum
                    return sum
                }
            }
            // How each channel's mass splits between the kinds, in one unit: the group mass in the people's unit.
            let kindShares = policy.base.channels.enumerated().map { index, channel -> [Double] in
                let (people, groups) = (masses[index][0], masses[index][1])
                guard people > 0 else { return [0, groups > 0 ? 1 : 0] }
                guard groups > 0 else { return [1, 0] }
                let ratio = groups / people * pow(2, (reference[1] - reference[0]) / channel.halfLife)
                return ratio.isFinite ? [1 / (1 + ratio), ratio / (1 + ratio)] : [0, 1]
            }
            return (values, masses, kindShares, reference)
        }

        /// Whether each kind's mass in each channel is fresh at `t`: above `2^-staleAfter`, decayed to `t`; and
        /// whether any of them is within rounding of the turn.
        static func freshness(masses: [[Double]], reference: [Double], at t: Double, policy: LearnedPolicy) -> (
            fresh: [[Bool]], atTheTurn: Bool
        ) {
            var atTheTurn = false
            let fresh = masses.indices.map { index in
                (0..<2).map { kind in
                    guard masses[index][kind] > 0 else { return false }
                    let margin =
                        log2(masses[index][kind]) + (reference[kind] - t) / policy.base.channels[index].halfLife
                        + policy.staleAfter
                    if abs(margin) < 1e-6 { atTheTurn = true }
                    return margin > 0
                }
            }
            return (fresh, atTheTurn)
        }

        /// `π`: the shares in use (fresh or stale) drawn towards the prior, which splits each channel's weight by the
        /// mass of each kind.
        func mixture(kindShares: [[Double]], fresh: [[Bool]], policy: LearnedPolicy) -> [[Double]] {
            let learned = Double(min(targets, policy.horizon))
            return kindShares.indices.map { index in
                (0..<2).map { kind in
                    let prior = policy.channelPrior[index] * kindShares[index][kind]
                    let share = fresh[index][kind] ? shares[index][kind] : staleShares[index][kind]
                    return (policy.priorStrength * prior + learned * share) / (policy.priorStrength + learned)
                }
            }
        }

        /// The learner after the send `donation`, judged on the donations before it.
        func learning(from donation: Interaction, among earlier: [Interaction], policy: LearnedPolicy) -> Learner {
            var facts: [ByteKey: Facts] = [:]
            for past in earlier {
                facts[ByteKey(past.conversationIdentifier), default: Facts(identifier: past.conversationIdentifier)]
                    .donations.append(past)
            }
            for key in Array(facts.keys) {
                let last = facts[key]?.donations.map(\.date.seconds).max() ?? 0
                facts[key]?.lastDate = last
            }
            guard let target = facts[ByteKey(donation.conversationIdentifier)] else { return self }
            let (values, masses, kindShares, reference) = Self.values(facts, policy: policy)
            let kind = target.donations.contains(where: { $0.intent.isGroup }) ? 1 : 0
            let (fresh, atTheTurn) = Self.freshness(
                masses: masses, reference: reference, at: donation.date.seconds, policy: policy)
            let pi = mixture(kindShares: kindShares, fresh: fresh, policy: policy)
            let likelihoods = masses.indices.map { index in
                masses[index][kind] > 0 ? (values[ByteKey(target.identifier)]?[index] ?? 0) / masses[index][kind] : 0
            }
            let evidence = masses.indices.map { pi[$0][kind] * likelihoods[$0] }.reduce(0, +)
            guard evidence > 0 else { return self }
            var next = self
            if atTheTurn { next.ambiguous = true }
            let step = 1 / Double(min(targets + 1, policy.horizon))
            for index in masses.indices {
                for side in 0..<2 {
                    let responsibility = side == kind ? pi[index][kind] * likelihoods[index] / evidence : 0
                    if fresh[index][side] {
                        next.shares[index][side] += step * (responsibility - shares[index][side])
                    } else {
                        next.staleShares[index][side] += step * (responsibility - staleShares[index][side])
                    }
                }
            }
            next.targets += 1
            return next
        }
    }

    /// A conversation's facts as of the query.
    struct Facts {
        var identifier: String
        var donations: [Interaction] = []
        var lastDate = -Double.infinity
        var score = 0.0
        /// Whether the score depends on an expert at its turn from fresh to stale (any rank is the store's).
        var isAmbiguous = false
    }

    static func rank(_ donation: Interaction, among earlier: [Interaction], policy: RankingPolicy, learner: Learner)
        -> Outcome
    {
        var facts: [ByteKey: Facts] = [:]
        for past in earlier {
            facts[ByteKey(past.conversationIdentifier), default: Facts(identifier: past.conversationIdentifier)]
                .donations.append(past)
        }
        guard facts[ByteKey(donation.conversationIdentifier)] != nil else { return .new }
        let t = donation.date.seconds
        for key in Array(facts.keys) {
            let last = facts[key]?.donations.map(\.date.seconds).max() ?? -.infinity
            facts[key]?.lastDate = last
        }
        score(&facts, at: t, rule: policy.rule, learner: learner)
        guard let target = facts[ByteKey(donation.conversationIdentifier)] else { return .new }
        var lowest = 1
        var highest = 1
        if target.isAmbiguous {
            return .ranked(lowest: 1, highest: facts.count, covered: target.score > 0)
        }
        for (key, other) in facts where key != ByteKey(target.identifier) {
            switch compare(other, target, rule: policy.rule) {
            case .before:
                lowest += 1
                highest += 1
            case .after: break
            case .either: highest += 1
            }
        }
        let covered: Bool
        if case .recency = policy.rule { covered = true } else { covered = target.score > 0 }
        return .ranked(lowest: lowest, highest: highest, covered: covered)
    }

    enum Order { case before, after, either }

    /// Whether `a` ranks before `b`: higher score, then later donation, then smaller identifier byte-wise.
    static func compare(_ a: Facts, _ b: Facts, rule: RankingPolicy.Rule) -> Order {
        // Different histories whose sums agree to within rounding (or exactly, once a tiny term is absorbed) may be
        // ordered either way by the log-domain sums; identical ones tie exactly.
        let decayed: FrecencyPolicy?
        switch rule {
        case .frecency(let policy): decayed = policy
        case .learned(let policy): decayed = policy.base
        default: decayed = nil
        }
        if let policy = decayed, a.score > 0, b.score > 0,
            abs(a.score - b.score) <= tolerance * max(a.score, b.score),
            signature(a, policy: policy) != signature(b, policy: policy)
        {
            return .either
        }
        if a.score != b.score { return a.score > b.score ? .before : .after }
        if a.lastDate != b.lastDate { return a.lastDate > b.lastDate ? .before : .after }
        return a.identifier.utf8.lexicographicallyPrecedes(b.identifier.utf8) ? .before : .after
    }

    /// What the log-domain sums of a conversation depend on, in the order they were summed: per channel, the
    /// dates and weights of the donations it counts (a weight of 0 is skipped), and whether it is a group. Equal
    /// signatures give bit-identical scores, so their tie is exact and the tie-breakers decide.
    static func signature(_ facts: Facts, policy: FrecencyPolicy) -> [String] {
        var parts: [String] = []
        for channel in policy.channels {
            for donation in counted(facts.donations, in: channel) {
                let weight = weight(of: donation, in: channel)
                if weight > 0 { parts.append("\(donation.date.seconds)×\(weight)") }
            }
            parts.append("|")
        }
        parts.append(facts.donations.contains(where: { $0.intent.isGroup }) ? "group" : "person")
        return parts
    }

    static func weight(of donation: Interaction, in channel: FrecencyPolicy.Channel) -> Double {
        let weight: Double
        switch donation.direction {
        case .outgoing: weight = channel.outgoing + (donation.isEngagedSuggestion ? channel.engagedBonus : 0)
        case .incoming: weight = channel.incoming
        case .unspecified: weight = channel.unspecified
        }
        return donation.intent.isGroup ? weight * channel.group : weight
    }

    /// The donations a channel counts, in the order they were applied: all of them for a sum; for a `latest`
    /// channel the last one applied among those with the latest date.
    static func counted(_ donations: [Interaction], in channel: FrecencyPolicy.Channel) -> [Interaction] {
        switch channel.aggregation {
        case .sum: return donations
        case .latest:
            guard let latest = donations.map(\.date.seconds).max(),
                let last = donations.last(where: { $0.date.seconds == latest })
            else { return [] }
            return [last]
        }
    }

    static func score(_ facts: inout [ByteKey: Facts], at t: Double, rule: RankingPolicy.Rule, learner: Learner) {
        switch rule {
        case .learned(let policy):
            let (values, masses, kindShares, reference) = Learner.values(facts, policy: policy)
            let (fresh, atTheTurn) = Learner.freshness(masses: masses, reference: reference, at: t, policy: policy)
            let pi = learner.mixture(kindShares: kindShares, fresh: fresh, policy: policy)
            if atTheTurn || learner.ambiguous {
                // Any order: the store's rounding decides an expert at its turn (`Learner.ambiguous`).
                for key in Array(facts.keys) { facts[key]?.isAmbiguous = true }
            }
            for key in Array(facts.keys) {
                guard let conversation = facts[key], let value = values[key] else { continue }
                let kind = conversation.donations.contains(where: { $0.intent.isGroup }) ? 1 : 0
                var total = 0.0
                for index in masses.indices where masses[index][kind] > 0 {
                    total += pi[index][kind] * value[index] / masses[index][kind]
                }
                if kind == 1 { total *= policy.base.groupFactor }
                facts[key]?.score = total
            }
        case .frecency(let policy):
            for key in Array(facts.keys) {
                guard let conversation = facts[key] else { continue }
                var total = 0.0
                for channel in policy.channels {
                    var sum = 0.0
                    for donation in counted(conversation.donations, in: channel) {
                        sum += weight(of: donation, in: channel) * pow(2, -(t - donation.date.seconds) / channel.halfLife)
                    }
                    total += channel.weight * sum
                }
                if conversation.donations.contains(where: { $0.intent.isGroup }) { total *= policy.groupFactor }
                facts[key]?.score = total
            }
        case .recency:
            for key in Array(facts.keys) {
                let last = facts[key]?.lastDate ?? 0
                facts[key]?.score = last
            }
        case .frequency:
            for key in Array(facts.keys) {
                let count = facts[key]?.donations.filter { $0.direction == .outgoing }.count ?? 0
                facts[key]?.score = Double(count)
            }
        case .zoxide:
            for key in Array(facts.keys) {
                let outgoing = facts[key]?.donations.filter { $0.direction == .outgoing } ?? []
                guard let last = outgoing.map(\.date.seconds).max() else {
                    facts[key]?.score = 0
                    continue
                }
                let age = t - last
                let factor = age < 3600 ? 4.0 : age < 86_400 ? 2.0 : age < 7 * 86_400 ? 0.5 : 0.25
                facts[key]?.score = Double(outgoing.count) * factor
            }
        case .android:
            scoreAndroid(&facts, at: t)
        }
    }

    /// AOSP's computeScore, written out per share: weights by age in tenths, the mean over conversations with a
    /// share, the ratio compared exactly, the 6 latest share targets, probOR.
    static func scoreAndroid(_ facts: inout [ByteKey: Facts], at t: Double) {
        var sums: [ByteKey: Int] = [:]
        var latestShare: [ByteKey: Double] = [:]
        for (key, conversation) in facts {
            let shares = conversation.donations.filter { $0.direction == .outgoing }
            guard !shares.isEmpty else { continue }
            var sum = 0
            for share in shares {
                let elapsed = t - share.date.seconds
                let day = 86_400.0
                sum += elapsed <= day ? 10 : elapsed <= 3 * day ? 9 : elapsed <= 7 * day ? 8 : elapsed <= 14 * day ? 7 : 6
            }
            sums[key] = sum
            latestShare[key] = shares.map(\.date.seconds).max()
        }
        let total = sums.values.reduce(0, +)
        let count = sums.count
        let order = latestShare.keys.sorted { a, b in
            let (sa, sb) = (latestShare[a] ?? 0, latestShare[b] ?? 0)
            if sa != sb { return sa > sb }
            let (da, db) = (facts[a]?.lastDate ?? 0, facts[b]?.lastDate ?? 0)
            if da != db { return da > db }
            return a.string.utf8.lexicographicallyPrecedes(b.string.utf8)
        }
        let recencyScores = [0.40, 0.35, 0.33, 0.31, 0.29, 0.27]
        for key in Array(facts.keys) {
            var recency = 0.0
            if let position = order.firstIndex(of: key), position < 6 { recency = recencyScores[position] }
            var frequency = 0.0
            if let sum = sums[key], total > 0 {
                // ratio = sum / (total / count), compared as fractions.
                let ratioTimesTotal = sum * count
                if ratioTimesTotal * 10 >= total * 25 {
                    frequency = 0.2
                } else if ratioTimesTotal * 10 >= total * 15 {
                    frequency = 0.15
                } else if ratioTimesTotal >= total {
                    frequency = 0.1
                } else if ratioTimesTotal * 100 >= total * 75 {
                    frequency = 0.05
                }
            }
            let combined = 1 - (1 - recency) * (1 - frequency)
            facts[key]?.score = 1 - (1 - combined) * (1 - 0)
        }
    }
}
