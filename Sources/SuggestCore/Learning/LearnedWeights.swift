import CSystem

/// What one account has learned about its own habits under a `LearnedPolicy`: per channel and kind of
/// conversation (a person or a group), the logarithm of the account's mass in that channel and the mean
/// responsibility of that channel for the conversations written to, while that mass was fresh and while it was
/// stale. Twenty-four numbers and a count, updated by `record(_:before:after:policy:)` once per donation.
///
/// The update is a fold of the account's donations in the order they were applied, with the same arithmetic in
/// every store: two stores that apply the same donations in the same order hold the same weights, bit for bit.
/// Deleting donations is undone by folding the remaining history again (`fold(_:policy:)`), the way a store
/// recomputes a conversation's state from its remaining donations; nothing is subtracted from a sum of the past.
public struct LearnedWeights: Sendable, Hashable {
    /// `T_{m,person} = ln Σ e^(A_m(c))` over the account's conversations with one person, per channel; `-∞` for
    /// none. The logarithms of exponentials of dates, like the channel keys themselves: time-invariant.
    public var personTotals: SIMD4<Double>
    /// `T_{m,group}`: the same over group conversations.
    public var groupTotals: SIMD4<Double>
    /// `π̂_{m,person}`: the mean, over the last sends (`LearnedPolicy.horizon`), of the share of the conversation
    /// written to that channel `m` explained as a person's conversation.
    public var personShares: SIMD4<Double>
    /// `π̂_{m,group}`: the same for groups. The shares learned while fresh and those learned while stale sum to 1
    /// together once anything is learned; the eight in use at a moment need not, since each learned from other
    /// sends (only their ratios rank).
    public var groupShares: SIMD4<Double>
    /// `π̂_{m,person}` at the sends when the people's mass in channel `m` was stale (`isFresh`): `personShares`
    /// are those at the sends when it was fresh.
    public var personStaleShares: SIMD4<Double>
    /// The same for groups.
    public var groupStaleShares: SIMD4<Double>
    /// How many sends to a known conversation have been learned from.
    public var targets: Int

    /// An account with no donation.
    public static let empty = LearnedWeights(
        personTotals: SIMD4(repeating: LogSpace.zero), groupTotals: SIMD4(repeating: LogSpace.zero),
        personShares: SIMD4(repeating: 0), groupShares: SIMD4(repeating: 0), personStaleShares: SIMD4(repeating: 0),
        groupStaleShares: SIMD4(repeating: 0), targets: 0)

    /// Weights as a store keeps them: every field as it was saved.
    public init(
        personTotals: SIMD4<Double>, groupTotals: SIMD4<Double>, personShares: SIMD4<Double>,
        groupShares: SIMD4<Double>, personStaleShares: SIMD4<Double>, groupStaleShares: SIMD4<Double>,
        targets: Int
    ) {
        self.personTotals = personTotals
        self.groupTotals = groupTotals
        self.personShares = personShares
        self.groupShares = groupShares
        self.personStaleShares = personStaleShares
        self.groupStaleShares = groupStaleShares
        self.targets = targets
    }

    /// The moment until which the kind's mass in `channel` is fresh: `staleAfter` half-lives after it decayed to
    /// 1, when it has decayed to `2^-staleAfter` (`-∞` when the kind has no mass there: no weight to choose).
    /// Computed from the stored total alone, with the same arithmetic in every store, so that every store splits
    /// the same moments the same way.
    public func freshUntil(_ channel: Int, group: Bool, policy: LearnedPolicy) -> Double {
        let total = group ? groupTotals[channel] : personTotals[channel]
        guard total > LogSpace.zero else { return -.infinity }
        let shape = policy.base.channels[channel]
        // The mass is e^(total − λt): it decays to 1 at total / λ.
        return total / shape.rate + policy.staleAfter * shape.halfLife
    }

    /// Whether the kind's mass in `channel` is fresh at `moment` (before `freshUntil`): its experts then rank and
    /// learn with `personShares` or `groupShares`, else with the stale ones.
    public func isFresh(_ channel: Int, group: Bool, at moment: Timestamp, policy: LearnedPolicy) -> Bool {
        moment.seconds < freshUntil(channel, group: group, policy: policy)
    }

    /// Which experts are fresh at one moment (`isFresh`), channel by channel: for people and for groups.
    struct Freshness {
        var person = SIMDMask<SIMD4<Double>.MaskStorage>(repeating: false)
        var group = SIMDMask<SIMD4<Double>.MaskStorage>(repeating: false)
    }

    /// Every expert's `isFresh` at `moment`, worked out once for a mixture and the step of learning that uses it.
    func freshness(at moment: Timestamp, policy: LearnedPolicy) -> Freshness {
        var fresh = Freshness()
        for channel in policy.base.channels.indices {
            fresh.person[channel] = isFresh(channel, group: false, at: moment, policy: policy)
            fresh.group[channel] = isFresh(channel, group: true, at: moment, policy: policy)
        }
        return fresh
    }

    /// The moments around `moment` at which every expert is fresh or stale as at `moment`: a ranking made at
    /// `moment` is the same bits at every moment of this range (the idle cutoff aside).
    public func freshnessSpan(at moment: Timestamp, policy: LearnedPolicy) -> Range<Double> {
        var lower = -Double.infinity
        var upper = Double.infinity
        for channel in policy.base.channels.indices {
            for group in [false, true] {
                let until = freshUntil(channel, group: group, policy: policy)
                if until <= moment.seconds { lower = max(lower, until) } else { upper = min(upper, until) }
            }
        }
        return lower..<upper
    }

    /// Learns from one donation, then counts it in the account's channel masses.
    ///
    /// An outgoing donation to a conversation that already has a donation is a send the ranking could have
    /// offered: the weights first move towards the channels that gave that conversation the larger share, judged
    /// on the state before the donation (rank first, then learn), then the donation is counted. Call it with
    /// the conversation's state just before and just after `ConversationState.apply(_:policy:)` applied the
    /// event with `policy.base`.
    /// - Parameters:
    ///   - event: the donation.
    ///   - before: the conversation's state before it (`.empty` for a new conversation).
    ///   - after: the state after it.
    ///   - policy: the policy whose `base` updated the states.
    /// - Complexity: O(c) for c channels: at most two `exp` and one `log` per channel for the masses, and, for a
    ///   send, one `exp` per channel and kind for the mixture. No query of the ranking.
    public mutating func record(
        _ event: ConversationState.Event, before: ConversationState, after: ConversationState, policy: LearnedPolicy
    ) {
        if event.direction == .outgoing && before.hasDonations { learn(from: before, at: event.date, policy: policy) }
        count(event, before: before, after: after, policy: policy)
    }

    /// The mixture weights `π_{m,k}` in use at `moment`: the learned shares (fresh or stale, as each expert is at
    /// that moment) drawn towards the prior, which splits each channel's prior weight between people and groups by
    /// the share of the channel's mass each kind holds.
    /// - Returns: `π` for people and for groups, per channel; the weights of the experts in use, which need not sum
    ///   to 1 (the fresh and the stale shares learned from other sends), and rank by their ratios.
    public func mixture(at moment: Timestamp, policy: LearnedPolicy) -> (person: SIMD4<Double>, group: SIMD4<Double>) {
        mixture(freshness(at: moment, policy: policy), policy: policy)
    }

    /// `mixture(at:policy:)` with the experts' freshness at that moment.
    func mixture(_ fresh: Freshness, policy: LearnedPolicy) -> (person: SIMD4<Double>, group: SIMD4<Double>) {
        var person = SIMD4<Double>(repeating: 0)
        var group = SIMD4<Double>(repeating: 0)
        let learned = Double(min(targets, policy.horizon))
        let strength = policy.priorStrength
        let personInUse = personStaleShares.replacing(with: personShares, where: fresh.person)
        let groupInUse = groupStaleShares.replacing(with: groupShares, where: fresh.group)
        for index in policy.base.channels.indices {
            let total = LogSpace.addExp(personTotals[index], groupTotals[index])
            var personPrior = 0.0
            var groupPrior = 0.0
            if total > LogSpace.zero {
                personPrior = policy.channelPrior[index] * exp(personTotals[index] - total)
                groupPrior = policy.channelPrior[index] * exp(groupTotals[index] - total)
            }
            person[index] = (strength * personPrior + learned * personInUse[index]) / (strength + learned)
            group[index] = (strength * groupPrior + learned * groupInUse[index]) / (strength + learned)
        }
        return (person, group)
    }

    /// The channel offsets a query at `moment` ranks with: `ln π_{m,k} − T_{m,k}`, so that the scorer's term
    /// `e^(offset + A_m)` is `π_{m,k}` times the conversation's share of the channel's mass. Both the key and the
    /// mass decay alike, so the moment enters only through which weight each expert uses (fresh or stale): the
    /// offsets, and every score made with them, are the same bits at every moment of `freshnessSpan`, until the
    /// state changes.
    /// - Returns: offsets for `Scorer.init(policy:context:channelOffsets:tree:)` with `policy.base`.
    public func channelOffsets(at moment: Timestamp, policy: LearnedPolicy) -> Scorer.ChannelOffsets {
        let mixture = mixture(at: moment, policy: policy)
        var person: [Double] = []
        var group: [Double] = []
        person.reserveCapacity(policy.base.channels.count)
        group.reserveCapacity(policy.base.channels.count)
        for index in policy.base.channels.indices {
            person.append(Self.logShareOffset(mixture.person[index], total: personTotals[index]))
            group.append(Self.logShareOffset(mixture.group[index], total: groupTotals[index]))
        }
        return Scorer.ChannelOffsets(person: person, group: group, isTimeInvariant: true)
    }

    /// `ln π − T`, or `-∞` when the expert has no weight or no mass.
    private static func logShareOffset(_ share: Double, total: Double) -> Double {
        guard share > 0, total > LogSpace.zero else { return LogSpace.zero }
        return LogSpace.ln(share) - total
    }

    /// One step of online EM for the mixture weights: the responsibility of each channel (of the target's kind)
    /// for the target, then a step of `1 / min(n + 1, H)` towards it of the weights in use at the send's moment
    /// (fresh or stale); the others keep what they hold, since they said nothing of this send.
    ///
    /// The responsibilities are computed from logarithms, `ln π_m + ln p_m − ln Σ_j π_j p_j`: a conversation last
    /// written to decades before its send has a share of every channel below the smallest `Double` (`e^-745`), and
    /// the send would teach nothing, where the ratios between the channels are what it teaches.
    private mutating func learn(from target: ConversationState, at moment: Timestamp, policy: LearnedPolicy) {
        let isGroup = target.isGroup
        let totals = isGroup ? groupTotals : personTotals
        let fresh = freshness(at: moment, policy: policy)
        let mixture = mixture(fresh, policy: policy)
        let weights = isGroup ? mixture.group : mixture.person
        var logParts = SIMD4<Double>(repeating: LogSpace.zero)
        var logEvidence = LogSpace.zero
        for index in policy.base.channels.indices {
            let key = target.channels[index]
            guard key > LogSpace.zero, totals[index] > LogSpace.zero, weights[index] > 0 else { continue }
            // The conversation's share of the channel's mass, at most 1: rounding in the mass may push a lone
            // conversation a hair above it.
            logParts[index] = LogSpace.ln(weights[index]) + min(0, key - totals[index])
            logEvidence = LogSpace.addExp(logEvidence, logParts[index])
        }
        guard logEvidence > LogSpace.zero, logEvidence.isFinite else { return }
        let step = 1 / Double(min(targets + 1, policy.horizon))
        var responsibilities = SIMD4<Double>(repeating: 0)
        for index in policy.base.channels.indices where logParts[index] > LogSpace.zero {
            responsibilities[index] = exp(logParts[index] - logEvidence)
        }
        let none = SIMD4<Double>(repeating: 0)
        Self.move(
            &personShares, &personStaleShares, towards: isGroup ? none : responsibilities, by: step, freshWhere: fresh.person)
        Self.move(
            &groupShares, &groupStaleShares, towards: isGroup ? responsibilities : none, by: step, freshWhere: fresh.group)
        targets += 1
    }

    /// Moves the shares in use, the fresh ones where `fresh` holds and the stale ones elsewhere, a step towards
    /// `target`; the others keep what they hold.
    private static func move(
        _ freshShares: inout SIMD4<Double>, _ staleShares: inout SIMD4<Double>, towards target: SIMD4<Double>,
        by step: Double, freshWhere fresh: SIMDMask<SIMD4<Double>.MaskStorage>
    ) {
        freshShares.replace(with: freshShares + step * (target - freshShares), where: fresh)
        staleShares.replace(with: staleShares + step * (target - staleShares), where: .!fresh)
    }

    /// Counts the donation in the account's masses: a sum channel's mass grows by exactly what the
    /// conversation's key grew by; a `latest` channel's mass trades the conversation's old key for its new one.
    private mutating func count(
        _ event: ConversationState.Event, before: ConversationState, after: ConversationState, policy: LearnedPolicy
    ) {
        let t = event.date.seconds
        let isNew = !before.hasDonations
        let changedKind = !isNew && before.isGroup != after.isGroup
        for (index, decay) in policy.base.decay.enumerated() {
            let old = before.channels[index]
            let new = after.channels[index]
            if old == new && !changedKind { continue }
            if changedKind {
                // A conversation that turns into a group (the first message of a group often names its sender
                // alone) takes what it held from the people's mass to the groups': left there, it gave the people
                // a share of the prior and of every person's probability that no person conversation holds.
                // Where it was all of the people's mass the two cancel exactly, as the same additions built both.
                replace(old, with: LogSpace.zero, group: before.isGroup, channel: index)
                add(new, group: after.isGroup, channel: index)
            } else if isNew {
                add(new, group: after.isGroup, channel: index)
            } else if decay.isLatest {
                replace(old, with: new, group: after.isGroup, channel: index)
            } else {
                let logWeight = decay.logWeight(
                    event.direction, engaged: event.isEngagedSuggestion, isGroup: event.isGroup)
                if logWeight > LogSpace.zero { add(logWeight + decay.rate * t, group: after.isGroup, channel: index) }
            }
        }
    }

    private mutating func add(_ value: Double, group: Bool, channel: Int) {
        guard value > LogSpace.zero else { return }
        if group {
            groupTotals[channel] = LogSpace.addExp(groupTotals[channel], value)
        } else {
            personTotals[channel] = LogSpace.addExp(personTotals[channel], value)
        }
    }

    private mutating func replace(_ old: Double, with new: Double, group: Bool, channel: Int) {
        if group {
            groupTotals[channel] = Self.replaceExp(groupTotals[channel], removing: old, adding: new)
        } else {
            personTotals[channel] = Self.replaceExp(personTotals[channel], removing: old, adding: new)
        }
    }

    /// `ln(e^total − e^old + e^new)`, computed around the larger of `total` and `new` so that nothing overflows.
    ///
    /// `LearnedPolicy` requires positive weights in `latest` channels, so a conversation's new key is at most a
    /// few units below its old one and the difference cancels at most a few bits; when `old` was all of the mass
    /// (the difference rounds to zero or below), the new key alone is left.
    static func replaceExp(_ total: Double, removing old: Double, adding new: Double) -> Double {
        guard old > LogSpace.zero, total > LogSpace.zero else { return LogSpace.addExp(total, new) }
        let top = max(total, new)
        let remainder = exp(total - top) - exp(old - top) + (new > LogSpace.zero ? exp(new - top) : 0)
        guard remainder > 0 else { return new }
        return top + LogSpace.ln(remainder)
    }
}
