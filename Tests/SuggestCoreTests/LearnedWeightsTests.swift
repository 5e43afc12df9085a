import SuggestTestSupport
import Testing

@testable import SuggestCore

#if canImport(Glibc)
    import Glibc
#endif

/// The learned weights: a deterministic fold of the history, recomputed exactly after a deletion, ranked exactly
/// by the threshold walk, and learning what each account's own sends say.
@Suite struct LearnedWeightsTests {
    static let policy = LearnedPolicy.default
    static let day = 86_400.0
    static let end = RankerTests.end

    /// An index and the weights of `history`, applied donation by donation as a store would.
    static func replay(_ history: [Interaction], policy: LearnedPolicy = policy) -> (
        InMemoryRankingIndex, LearnedWeights
    ) {
        let index = InMemoryRankingIndex(policy: policy.base)
        var weights = LearnedWeights.empty
        for interaction in history {
            let slot = index.slot(for: interaction.conversationIdentifier)
            let before = index.states[Int(slot)]
            index.apply(interaction)
            weights.record(
                ConversationState.Event(interaction), before: before, after: index.states[Int(slot)], policy: policy)
        }
        return (index, weights)
    }

    /// `ln Σ e^key` of one channel over the index's conversations with one person, and over its groups.
    static func masses(of index: InMemoryRankingIndex, channel: Int) -> (people: Double, groups: Double) {
        var people = LogSpace.zero
        var groups = LogSpace.zero
        for state in index.states {
            if state.isGroup {
                groups = LogSpace.addExp(groups, state.channels[channel])
            } else {
                people = LogSpace.addExp(people, state.channels[channel])
            }
        }
        return (people, groups)
    }

    static func events(_ history: [Interaction]) -> [(conversation: String, event: ConversationState.Event)] {
        history.map { ($0.conversationIdentifier, ConversationState.Event($0)) }
    }

    /// A history with groups and people, all directions, engaged shares, and dates sometimes out of order.
    static func history(seed: UInt64, donations: Int = 2_000, conversations: Int = 40) -> [Interaction] {
        var random = SeededRandom(seed: seed)
        var date = end - 90 * day
        return (0..<donations).map { index in
            date += [5.0, 60, 600, 3_600, 6 * 3_600, day].randomElement(using: &random) ?? 60
            let conversation = Int.random(in: 0..<conversations, using: &random)
            let isGroup = conversation % 4 == 0
            let roll = Int.random(in: 0..<10, using: &random)
            let direction: InteractionDirection = roll < 5 ? .outgoing : roll < 9 ? .incoming : .unspecified
            let when = Int.random(in: 0..<25, using: &random) == 0 ? date - 2 * 3_600 : date
            return Interaction(
                identifier: "d\(index)", date: Timestamp(seconds: when), direction: direction,
                intent: SendMessageIntent(
                    conversationIdentifier: "c\(conversation)",
                    speakableGroupName: isGroup ? "Group \(conversation)" : nil,
                    recipients: [Person(customIdentifier: "p\(conversation)")]),
                isEngagedSuggestion: direction == .outgoing && Int.random(in: 0..<8, using: &random) == 0)
        }
    }

    /// A group's first message often names its sender alone, so the conversation starts as a person's and turns
    /// into a group with its next donation: its mass moves with it, and the people's total holds only people's.
    @Test func aConversationThatBecomesAGroupTakesItsMassWithIt() {
        func donation(_ index: Int, _ conversation: String, hoursAgo: Double, recipients: [String], sender: String?)
            -> Interaction
        {
            Interaction(
                identifier: "f\(index)", date: Timestamp(seconds: Self.end - hoursAgo * 3_600),
                direction: sender == nil ? .outgoing : .incoming,
                intent: SendMessageIntent(
                    conversationIdentifier: conversation, sender: sender.map { Person(customIdentifier: $0) },
                    recipients: recipients.map { Person(customIdentifier: $0) }))
        }
        // The probe's account: its only conversation begins with its sender alone, then names two people.
        let alone = [
            donation(0, "g", hoursAgo: 3, recipients: [], sender: "u2"),
            donation(1, "g", hoursAgo: 2, recipients: ["u1", "u2"], sender: "u2"),
        ]
        let (_, weights) = Self.replay(alone)
        for channel in 0..<4 {
            #expect(weights.personTotals[channel] == LogSpace.zero, "channel \(channel)")
            #expect(weights.mixture(at: Timestamp(seconds: Self.end), policy: Self.policy).person[channel] == 0, "channel \(channel)")
        }
        // Among others, the masses stay the sums of each kind's keys.
        var history: [Interaction] = []
        var random = SeededRandom(seed: 11)
        for index in 0..<600 {
            let conversation = Int.random(in: 0..<12, using: &random)
            let hoursAgo = Double(600 - index)
            if conversation % 3 == 0 && !history.contains(where: { $0.conversationIdentifier == "c\(conversation)" }) {
                history.append(donation(index, "c\(conversation)", hoursAgo: hoursAgo, recipients: [], sender: "s\(conversation)"))
            } else if conversation % 3 == 0 {
                history.append(donation(index, "c\(conversation)", hoursAgo: hoursAgo, recipients: ["a", "b"], sender: nil))
            } else {
                history.append(donation(index, "c\(conversation)", hoursAgo: hoursAgo, recipients: ["p\(conversation)"], sender: nil))
            }
        }
        let (index, mixed) = Self.replay(history)
        #expect(index.states.contains { $0.isGroup })
        for channel in 0..<4 {
            let (people, groups) = Self.masses(of: index, channel: channel)
            #expect(abs(exp(mixed.personTotals[channel] - people) - 1) < 1e-9, "channel \(channel)")
            #expect(abs(exp(mixed.groupTotals[channel] - groups) - 1) < 1e-9, "channel \(channel)")
        }
        // And a fold of the history gives the same bits.
        #expect(LearnedWeights.fold(Self.events(history), policy: Self.policy).weights == mixed)
    }

    /// A send to a conversation last written to over a century before the account's latest message: its share of
    /// every channel is below the smallest `Double`, and it still teaches which channel held it best (`memory`,
    /// the slowest).
    @Test func aSendToAConversationDecadesOldStillTeaches() {
        let history = [
            Interaction(
                identifier: "o1", date: Timestamp(seconds: -2_208_988_800), direction: .outgoing,
                intent: SendMessageIntent(conversationIdentifier: "old")),
            Interaction(
                identifier: "n1", date: Timestamp(seconds: 1_796_083_200), direction: .incoming,
                intent: SendMessageIntent(conversationIdentifier: "new")),
            Interaction(
                identifier: "o2", date: Timestamp(seconds: -2_208_988_799), direction: .outgoing,
                intent: SendMessageIntent(conversationIdentifier: "old")),
        ]
        let (_, weights) = Self.replay(history)
        #expect(weights.targets == 1)
        #expect(weights.personShares[2] > 0.999)
        #expect(abs(weights.personShares.sum() - 1) < 1e-12)
    }

    @Test(arguments: [UInt64(1), 2, 3])
    func foldEqualsDonationByDonation(seed: UInt64) {
        let history = Self.history(seed: seed)
        let (index, weights) = Self.replay(history)
        let (folded, states) = LearnedWeights.fold(Self.events(history), policy: Self.policy)
        #expect(folded == weights)
        #expect(weights.targets > 500)
        for slot in 0..<index.count { #expect(states[index.identifiers[slot]] == index.states[slot]) }
    }

    /// What a store must do after a deletion, as a check any store can run: after `delete`, the store's weights
    /// must equal the fold of the donations that remain, in the order they were recorded, and (so the check can
    /// fail) differ from the weights before the deletion. Here the "store" keeps its donation log in memory and
    /// folds it again after each deletion; a store test calls the same function with closures over its store.
    static func checkDeletion(
        history: [Interaction], record: ([Interaction]) throws -> Void, delete: (String) throws -> Void,
        weights: () throws -> LearnedWeights, deleted conversation: String
    ) throws {
        try record(history)
        let before = try weights()
        try delete(conversation)
        let remaining = history.filter { $0.conversationIdentifier != conversation }
        let expected = LearnedWeights.fold(events(remaining), policy: policy).weights
        #expect(try weights() == expected)
        #expect(try weights() != before)
    }

    @Test func deletingAConversationLeavesTheWeightsOfAHistoryWithoutIt() throws {
        final class MemoryStore {
            var log: [Interaction] = []
            var weights = LearnedWeights.empty
            func record(_ donations: [Interaction]) {
                log += donations
                weights =
                    LearnedWeights.fold(LearnedWeightsTests.events(log), policy: LearnedWeightsTests.policy).weights
            }
            func delete(_ conversation: String) {
                log.removeAll { $0.conversationIdentifier == conversation }
                weights =
                    LearnedWeights.fold(LearnedWeightsTests.events(log), policy: LearnedWeightsTests.policy).weights
            }
        }
        for (seed, conversation) in [(UInt64(4), "c0"), (5, "c7")] {
            let store = MemoryStore()
            try Self.checkDeletion(
                history: Self.history(seed: seed), record: store.record, delete: store.delete,
                weights: { store.weights },
                deleted: conversation)
        }
    }

    @Test func aNewAccountRanksByTheUnweightedMixture() {
        let history = Self.history(seed: 6, donations: 30).map { interaction in
            Interaction(
                identifier: interaction.identifier, date: interaction.date, direction: .incoming,
                intent: interaction.intent)
        }
        let (_, weights) = Self.replay(history)
        #expect(weights.targets == 0)
        let mixture = weights.mixture(at: Timestamp(seconds: Self.end), policy: Self.policy)
        for index in 0..<4 {
            // Each channel's prior (a quarter) split by the mass of each kind.
            let people = exp(
                weights.personTotals[index] - LogSpace.addExp(weights.personTotals[index], weights.groupTotals[index]))
            #expect(abs(mixture.person[index] - people / 4) < 1e-12)
            #expect(abs(mixture.person[index] + mixture.group[index] - 0.25) < 1e-12)
        }
    }

    @Test func theMassesStayTheSumsOfTheConversationKeys() {
        let (index, weights) = Self.replay(Self.history(seed: 7, donations: 5_000, conversations: 60))
        for channel in 0..<3 {
            let (people, groups) = Self.masses(of: index, channel: channel)
            // Relative 1e-9 of the mass: the `latest` channel trades old keys for new ones 5,000 times.
            #expect(abs(exp(weights.personTotals[channel] - people) - 1) < 1e-9, "channel \(channel)")
            #expect(abs(exp(weights.groupTotals[channel] - groups) - 1) < 1e-9, "channel \(channel)")
        }
    }

    @Test(arguments: [UInt64(1), 2, 3])
    func learnedWeightsRankExactly(seed: UInt64) throws {
        let history = RankerTests.history(seed: seed, donations: 1_500, conversations: 60)
        let index = InMemoryRankingIndex(policy: Self.policy.base)
        var weights = LearnedWeights.empty
        for (offset, interaction) in history.enumerated() {
            let slot = index.slot(for: interaction.conversationIdentifier)
            let before = index.states[Int(slot)]
            index.apply(interaction)
            weights.record(
                ConversationState.Event(interaction), before: before, after: index.states[Int(slot)],
                policy: Self.policy)
            if offset % 211 == 0 || offset == history.count - 1 {
                for context in RankerTests.contexts {
                    let scorer = Scorer(
                        policy: Self.policy.base, context: context,
                        channelOffsets: weights.channelOffsets(at: context.at, policy: Self.policy))
                    let ranker = TopKRanker(scorer: scorer)
                    let fast = try ranker.top(in: index, explain: true)
                    #expect(fast == (try ranker.bruteForce(in: index, explain: true)), "context \(context)")
                }
            }
        }
    }

    /// A learned ranking is a mixture of shares of each channel's mass, and a share holds no moment: the same state
    /// ranks the same conversations with the same bits (scores, explanations) at every moment at which each expert
    /// is as fresh or stale (`freshnessSpan`): once every expert is stale, a year or ten years later. Only the idle
    /// cutoff, which the moment sets, can change the answer within a span; a store may keep an answer while nothing
    /// is written (`RankedAnswers`) because of this.
    @Test func aLearnedRankingIsTheSameBitsAtEveryMomentOfItsSpan() throws {
        let (index, weights) = Self.replay(Self.history(seed: 12))
        for context in RankerTests.contexts where context.notIdleSince == nil {
            func ranked(after seconds: Double) throws -> [RankedConversation] {
                var later = context
                later.at = context.at.adding(seconds)
                let scorer = Scorer(
                    policy: Self.policy.base, context: later,
                    channelOffsets: weights.channelOffsets(at: later.at, policy: Self.policy))
                #expect(scorer.isTimeInvariant)
                return try TopKRanker(scorer: scorer).top(in: index, explain: true)
            }
            let span = weights.freshnessSpan(at: context.at, policy: Self.policy)
            let now = try ranked(after: 0)
            for seconds in [1, 3_600, 365 * Self.day, -40 * Self.day, 3_650 * Self.day]
            where span.contains(context.at.seconds + seconds) {
                #expect(try ranked(after: seconds) == now, "\(context), \(seconds) s later")
            }
            // Past every expert's freshness (the 30-day memory of 2,000 donations stays fresh for about 19 of its
            // half-lives), the ranking holds for ever.
            let stale = weights.freshnessSpan(at: context.at.adding(3_650 * Self.day), policy: Self.policy)
            #expect(stale.upperBound == .infinity)
            #expect(try ranked(after: 3_650 * Self.day) == (try ranked(after: 36_500 * Self.day)))
        }
        // The fixed policy's constant weights are not shares: its ranking changes as time passes.
        #expect(!Scorer(policy: .default, context: RankingContext(at: Timestamp(seconds: Self.end))).isTimeInvariant)
    }

    @Test func depthLimitedRanksAreExactToTheDepth() throws {
        let history = Self.history(seed: 8, donations: 4_000, conversations: 300)
        let (learned, weights) = Self.replay(history)
        let fixed = InMemoryRankingIndex(policy: .default)
        for interaction in history { fixed.apply(interaction) }
        #expect(fixed.count > TopKRanker.scanLimit)
        let at = Timestamp(seconds: Self.end + 3_600)
        let scorers: [(InMemoryRankingIndex, (RankingContext) -> Scorer)] = [
            (fixed, { Scorer(policy: .default, context: $0) }),
            (
                learned,
                {
                    Scorer(
                        policy: Self.policy.base, context: $0,
                        channelOffsets: weights.channelOffsets(at: $0.at, policy: Self.policy))
                }
            ),
        ]
        for (source, scorer) in scorers {
            let ranker = TopKRanker(scorer: scorer(RankingContext(at: at)))
            let order = try TopKRanker(scorer: scorer(RankingContext(at: at, limit: source.count))).bruteForce(
                in: source
            )
            .map(\.conversation.rawValue)
            var deep = 0
            for slot in stride(from: Int32(0), to: Int32(source.count), by: 7) {
                let exact = (order.firstIndex(of: Int64(slot)) ?? -1) + 1
                for depth in [20, 100, Int.max] {
                    let rank = try #require(try source.rank(of: slot, using: ranker, depth: depth)).rank
                    #expect(rank == (depth == .max ? exact : min(exact, depth + 1)), "slot \(slot), depth \(depth)")
                }
                if exact > 100 { deep += 1 }
            }
            #expect(deep > 5)
        }
    }

    /// Two people with opposite habits over the same conversations: one answers whoever just wrote, within the
    /// minute; the other writes to the same dozen people in turn, whoever wrote last. Each account's weights must
    /// move to the channel that predicts its own sends.
    @Test func eachAccountLearnsWhatPredictsItsOwnSends() {
        var random = SeededRandom(seed: 11)
        var replier: [Interaction] = []
        var roundRobin: [Interaction] = []
        var date = Self.end - 60 * Self.day
        for turn in 0..<600 {
            date += Double(Int.random(in: 600...7_200, using: &random))
            let writer = "c\(Int.random(in: 0..<12, using: &random))"
            for history in [0, 1] {
                let incoming = Interaction(
                    identifier: "in\(turn)", date: Timestamp(seconds: date), direction: .incoming,
                    intent: SendMessageIntent(conversationIdentifier: writer))
                let answer = history == 0 ? writer : "c\(turn % 12)"
                let outgoing = Interaction(
                    identifier: "out\(turn)", date: Timestamp(seconds: date + 30), direction: .outgoing,
                    intent: SendMessageIntent(conversationIdentifier: answer))
                if history == 0 { replier += [incoming, outgoing] } else { roundRobin += [incoming, outgoing] }
            }
        }
        // Just after the last send, while every expert is fresh.
        let after = Timestamp(seconds: date + 60)
        let learnedReplier = Self.replay(replier).1.mixture(at: after, policy: Self.policy).person
        let learnedRoundRobin = Self.replay(roundRobin).1.mixture(at: after, policy: Self.policy).person
        // Replier: the reply channel (an incoming message counts 64) and recency (the very latest message) say who
        // is answered.
        #expect(learnedReplier[0] + learnedReplier[3] > 0.9)
        // In turn: whoever wrote last is not the one written to; the memory, which all twelve share, is right.
        #expect(learnedRoundRobin[0] < 0.1)
        #expect(learnedRoundRobin[2] > learnedRoundRobin[0])
        #expect(learnedRoundRobin[2] + learnedRoundRobin[1] > 0.9)
    }

    /// A channel of the shares started from a suggestion alone (the default had one; it has a `recency` expert in
    /// its place since 2026-12-04, and those shares weigh more in `memory`): it holds no mass, and so no weight,
    /// until the account engages one, and earns weight when they predict its sends.
    static let engagementPolicy = LearnedPolicy(
        unchecked: FrecencyPolicy(
            unchecked: Array(LearnedPolicy.default.base.channels.prefix(3)) + [
                .init(
                    name: "engagement", halfLife: 30 * 86_400, weight: 1, outgoing: 0, incoming: 0, unspecified: 0,
                    engagedBonus: 1)
            ]))

    @Test func engagedSharesEarnWeightOnlyWhenTheyPredict() {
        let policy = Self.engagementPolicy
        var history: [Interaction] = []
        var date = Self.end - 30 * Self.day
        // Shares from a suggestion to "fav", ordinary sends to the others in between.
        for turn in 0..<300 {
            date += 3_600
            let engaged = turn % 3 == 0
            history.append(
                Interaction(
                    identifier: "d\(turn)", date: Timestamp(seconds: date), direction: .outgoing,
                    intent: SendMessageIntent(conversationIdentifier: engaged ? "fav" : "c\(turn % 17)"),
                    isEngagedSuggestion: engaged))
        }
        let withEngagement = Self.replay(history, policy: policy).1
        let after = Timestamp(seconds: date + 60)
        #expect(withEngagement.mixture(at: after, policy: policy).person[3] > 0.1)
        let without = Self.replay(
            history.map {
                Interaction(identifier: $0.identifier, date: $0.date, direction: $0.direction, intent: $0.intent)
            }, policy: policy
        ).1
        #expect(without.personTotals[3] == LogSpace.zero)
        #expect(without.mixture(at: after, policy: policy).person[3] == 0)
        let explained = withEngagement.explanation(at: after, policy: policy)
        #expect(explained.map(\.channel) == ["reply", "latest", "memory", "engagement"])
        #expect(abs(explained.map { $0.person + $0.group }.reduce(0, +) - 1) < 1e-9)
        #expect(Self.replay(history).1.explanation(at: after, policy: Self.policy).map(\.channel) == ["reply", "latest", "memory", "recency"])
    }
}
