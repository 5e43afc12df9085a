#if canImport(Glibc)
    import Glibc
#endif
import SuggestCore
import SuggestTestSupport
import Testing

@testable import SuggestEval

/// Ranks to a depth, kinds of target, comparisons send by send, and what `eval` prints of them.
@Suite struct SessionTests {
    static func donation(
        _ conversation: String, _ seconds: Double, _ direction: InteractionDirection, account: String = "me",
        group: Bool = false
    ) -> Interaction {
        Interaction(
            account: account, identifier: nil, date: Timestamp(seconds: seconds), direction: direction,
            intent: SendMessageIntent(conversationIdentifier: conversation, speakableGroupName: group ? "G" : nil))
    }

    @Test func sendsAreSplitByKindOfTarget() throws {
        let day = 86_400.0
        let history = [
            Self.donation("a", 0, .incoming), Self.donation("team", 10, .incoming, group: true),
            Self.donation("b", 20, .outgoing),
            // Answers "team", the latest incoming: a reply, and a group.
            Self.donation("team", 30, .outgoing, group: true),
            // "a" last wrote at 0 and "team" at 10 since: not a reply; "a" is not idle yet.
            Self.donation("a", 40, .outgoing),
            // "b" silent since 20, for 8 days: idle.
            Self.donation("b", 8 * day, .outgoing),
            Self.donation("c", 8 * day + 1, .incoming),
            // "c" wrote last: a reply.
            Self.donation("c", 8 * day + 2, .outgoing),
        ]
        let evaluator = try Evaluator(policy: .recency)
        var kinds: [TargetKinds] = []
        for interaction in history {
            if case .ranked = try evaluator.consume(interaction) { kinds.append(evaluator.lastEvaluated.kinds) }
        }
        #expect(kinds == [[.reply, .group], [], [.idle], [.reply]])
        let result = evaluator.result
        #expect(result.result(for: .reply)?.evaluated == 2)
        #expect(result.result(for: .idle)?.evaluated == 1)
        #expect(result.result(for: .group)?.evaluated == 1)
        #expect(result.result(for: .other)?.evaluated == 1)
        // "b" was ranked 3rd (after "team" and "a"): the idle split's MRR is a third.
        #expect(result.result(for: .idle)?.mrr == 1.0 / 3)
    }

    /// A history of many accounts costs each policy only its ranking state: the session books accounts,
    /// identifiers and latest incoming donations once for every policy (each evaluator kept its own), and a
    /// comparison keeps sums only for the accounts it compared a send of (it kept a row of arrays for every account:
    /// `--policy all` took 7 GB on 500,000 accounts of two donations). The figures are a lone evaluator's.
    @Test func accountsAreBookedOnceAndComparedOnlyWhereASendWas() throws {
        var history: [Interaction] = []
        for account in 0..<300 {
            history.append(Self.donation("c", Double(account), .incoming, account: "a\(account)"))
            // A third of the accounts send, to a known conversation.
            if account % 3 == 0 { history.append(Self.donation("c", Double(account) + 1, .outgoing, account: "a\(account)")) }
        }
        // Some identifiers given twice: skipped alike by the session's book and a lone evaluator's.
        history += history.prefix(10).map { var again = $0; again.identifier = "same"; return again }
        history += history.suffix(10)
        let session = try EvalSession(
            policies: [.recency, try RankingPolicy.named("default")], pairs: [EvalSession.Pair(policy: 1, baseline: 0)])
        for interaction in history { try session.consume(interaction) }
        #expect(session.comparisons[0].rowCount == 100)
        #expect(session.comparisons[0].pairs() == 100)
        for (position, policy) in [RankingPolicy.recency, try RankingPolicy.named("default")].enumerated() {
            let alone = try Evaluator(policy: policy)
            for interaction in history { try alone.consume(interaction) }
            #expect(session.results[position] == alone.result, "\(policy.name)")
            #expect(alone.result.accounts == 300 && alone.result.duplicates > 0)
        }
    }

    @Test func aRankDeeperThanTheDepthCountsZeroAndBoundsTheMRR() {
        var result = EvalResult(policy: "p", cutoffs: [1, 3], depth: 20)
        result.record(rank: 1, covered: true)
        result.record(rank: 21, covered: true)
        #expect(result.beyondDepth == 1)
        #expect(result.mrr == 0.5)
        #expect(abs(result.mrrBound - (1 + 1.0 / 21) / 2) < 1e-15)
        #expect(result.jsonText.contains(#""depth":20,"beyondDepth":1,"mrrBound":"#))
    }

    @Test func theDepthMustCoverTheCutoffsAndTheCurve() {
        #expect(throws: InputError.self) { try Evaluator(policy: .recency, cutoffs: [1, 3, 8], depth: 10) }
        #expect(throws: InputError.self) { try Evaluator(policy: .recency, cutoffs: [1, 50], depth: 40) }
        #expect(throws: Never.self) { try Evaluator(policy: .recency, cutoffs: [1, 50], depth: 50) }
    }

    /// Large accounts, where the walks and the incremental structures of the anchors do the work, against the
    /// brute-force reference: ranks exact down to the depth, and the depth plus one below it.
    @Test("deep accounts match the reference", arguments: RankingPolicy.all.map(\.name))
    func deepAccountsMatchTheReference(policyName: String) throws {
        let policy = try RankingPolicy.named(policyName)
        var random = SeededRandom(seed: 77)
        var history: [Interaction] = []
        var date = 1_000_000_000.0
        for index in 0..<900 {
            date += [0, 30, 600, 3_600, 86_400, 4 * 86_400].randomElement(using: &random) ?? 0
            // Low numbers come back often, high ones rarely: deep ranks for the rare ones.
            let conversation = min(Int.random(in: 0..<150, using: &random), Int.random(in: 0..<150, using: &random))
            let roll = Int.random(in: 0..<10, using: &random)
            history.append(
                Interaction(
                    account: index % 7 == 0 ? "other" : "me", identifier: "d\(index)",
                    date: Timestamp(seconds: Int.random(in: 0..<30, using: &random) == 0 ? date - 7_200 : date),
                    direction: roll < 6 ? .outgoing : roll < 9 ? .incoming : .unspecified,
                    intent: SendMessageIntent(
                        conversationIdentifier: "c\(conversation)",
                        speakableGroupName: conversation % 5 == 0 ? "G" : nil),
                    isEngagedSuggestion: roll == 0))
        }
        let expected = ReferenceReplay.outcomes(of: history, policy: policy)
        for depth in [20, 1_000] {
            let evaluator = try Evaluator(policy: policy, depth: depth)
            var deep = 0
            for (position, donation) in history.enumerated() {
                let outcome = try evaluator.consume(donation)
                guard case .ranked(let lowest, let highest, let covered) = expected[position] else {
                    #expect(!(outcome.isRanked), "donation \(position)")
                    continue
                }
                guard case .ranked(let rank, let isCovered) = outcome else {
                    Issue.record("donation \(position): \(outcome), expected a rank")
                    continue
                }
                if lowest > depth { deep += 1 }
                #expect(
                    (min(lowest, depth + 1)...min(highest, depth + 1)).contains(rank) && covered == isCovered,
                    "depth \(depth), donation \(position): rank \(rank), expected \(lowest)...\(highest)")
            }
            if depth == 20 { #expect(deep > 20) }
        }
    }

    @Test func comparisonsAreTheDifferencesOfTheFigures() throws {
        let history = RandomHistory.make(seed: 5, count: 400) + RandomHistory.make(seed: 6, count: 400)
        let session = try EvalSession(
            policies: [.default, .recency, .default],
            pairs: [.init(policy: 0, baseline: 1), .init(policy: 0, baseline: 2)], cutoffs: [1, 3, 8])
        for interaction in history { try session.consume(interaction) }
        let (default_, recency) = (session.results[0], session.results[1])
        let versus = session.comparisons[0]
        #expect(versus.pairs() == default_.evaluated)
        #expect(abs(versus.mrrDifference().mean - (default_.mrr - recency.mrr)) < 1e-12)
        for k in [1, 3, 8] {
            let difference = try #require(versus.hitDifference(k))
            #expect(abs(difference.mean - ((default_.hitAt(k) ?? 0) - (recency.hitAt(k) ?? 0))) < 1e-12)
            let counts = try #require(versus.discordant(k))
            #expect(Double(counts.onlyPolicy - counts.onlyBaseline) / Double(versus.pairs()) == difference.mean)
        }
        for kind in TargetKind.allCases {
            let split = versus.mrrDifference(kind: kind).mean
            let expected = (default_.result(for: kind)?.mrr ?? 0) - (recency.result(for: kind)?.mrr ?? 0)
            #expect(abs(split - expected) < 1e-12, "\(kind)")
        }
        // A policy against itself: no difference, no interval, nothing discordant.
        let itself = session.comparisons[1]
        #expect(itself.mrrDifference() == PairedComparison.Difference(mean: 0, standardError: 0))
        #expect(itself.discordant(8)?.onlyPolicy == 0 && itself.discordant(8)?.onlyBaseline == 0)
    }

    @Test func intervalsAreClusteredByAccountWhenThereAreEnough() {
        // 30 accounts, each with two sends: one where the policy ranks first and the baseline second (+0.5), one
        // where both rank first (0). Account sums are all 0.5: clustered, the spread is 0; over sends it is not.
        var clustered = PairedComparison(policy: "p", baseline: "b", cutoffs: [1])
        var fewAccounts = PairedComparison(policy: "p", baseline: "b", cutoffs: [1])
        for account in 0..<30 {
            for (policyRank, baselineRank) in [(1, 2), (1, 1)] {
                clustered.add(
                    account: account, kinds: [], policyRank: policyRank, baselineRank: baselineRank, depth: 100)
                fewAccounts.add(
                    account: account % 2, kinds: [], policyRank: policyRank, baselineRank: baselineRank, depth: 100)
            }
        }
        #expect(clustered.isClustered() && !fewAccounts.isClustered())
        #expect(clustered.mrrDifference().mean == 0.25)
        #expect(clustered.mrrDifference().standardError == 0)
        // Over sends: 60 differences, half 0.5 and half 0: variance 0.0625 · 60/59, over 60.
        let expected = (0.0625 * 60 / 59 / 60).squareRoot()
        #expect(abs(fewAccounts.mrrDifference().standardError - expected) < 1e-15)
        #expect(fewAccounts.mrrDifference().isSignificant)
    }

    @Test func theSessionReadsFilesAsEvaluateDoes() throws {
        let history = RandomHistory.make(seed: 9, count: 300)
        let path = try TemporaryFile.create(history.map(\.jsonLine).joined(separator: "\n") + "\n")
        defer { unlink(path) }
        let session = try EvalSession(policies: [.default, .android], pairs: [.init(policy: 0, baseline: 1)])
        try session.consumeJSONLines(from: .file(path))
        #expect(session.results == (try Evaluator.evaluate(history, policies: [.default, .android])))
        let json = session.results[0].jsonText(comparisons: session.comparisons)
        let parsed = try JSONParser.parse(json)
        #expect(parsed["byKind"]?["reply"]?["evaluated"] != nil)
        guard case .array(let comparisons)? = parsed["comparisons"], let first = comparisons.first else {
            Issue.record("no comparisons in \(json.prefix(200))")
            return
        }
        #expect(first["baseline"] == .string("android"))
        #expect(first["hitAt"]?["8"]?["onlyPolicy"] != nil)
        let page = EvalReport.html(
            histories: [EvalReport.History(name: "h", results: session.results, comparisons: session.comparisons)])
        #expect(page.contains("<h3>By kind of target</h3>"))
        #expect(page.contains("default − android"))
        #expect(page.contains("class=\"win\"") || page.contains("class=\"loss\"") || page.contains("class=\"even\""))
        let table = PairedComparison.table(session.comparisons)
        #expect(table.hasPrefix("policy − baseline"))
        #expect(EvalResult.kindTable(session.results).hasPrefix("by kind of target: reply "))
    }

    @Test func pairsDefaultToTheFirstPolicyAgainstEachOther() throws {
        let names = ["default", "fixed", "recency"]
        let first = try #require(EvalSession.pairs(names: names, baseline: nil))
        #expect(first.map { [$0.policy, $0.baseline] } == [[0, 1], [0, 2]])
        let against = try #require(EvalSession.pairs(names: names, baseline: "recency"))
        #expect(against.map { [$0.policy, $0.baseline] } == [[0, 2], [1, 2]])
        #expect(EvalSession.pairs(names: names, baseline: "nope") == nil)
    }

    @Test func aPairOutsideThePoliciesIsAnErrorNotACrash() {
        for pair in [EvalSession.Pair(policy: 0, baseline: 2), EvalSession.Pair(policy: -1, baseline: 0)] {
            #expect(throws: InputError.self) { try EvalSession(policies: [.default, .recency], pairs: [pair]) }
        }
    }
}

extension ReplayOutcome {
    var isRanked: Bool {
        if case .ranked = self { return true }
        return false
    }
}
