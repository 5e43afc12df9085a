import SuggestCore
import SuggestEval
import SuggestTestSupport
import Testing

@Suite struct PolicyAndOutputTests {
    @Test func everyNamedPolicyResolves() throws {
        #expect(
            RankingPolicy.names == ["default", "fixed", "recency", "frequency", "tdlib", "firefox", "zoxide", "android"])
        for name in RankingPolicy.names { #expect(try RankingPolicy.named(name).name == name) }
        #expect(try RankingPolicy.named("default").learnedPolicy == LearnedPolicy.default)
        #expect(try RankingPolicy.named("fixed").frecencyPolicy == FrecencyPolicy.default)
    }

    @Test func unknownPolicyListsTheValidNames() {
        expectError {
            try RankingPolicy.named("Default")
        } where: { error in
            guard let error = error as? UnknownPolicyError else { return false }
            return error.description
                == "unknown policy \"Default\"; use one of: default, fixed, recency, frequency, tdlib, firefox, zoxide, android"
        }
    }

    @Test func decayedAnchorsAreFrecencyPolicies() throws {
        let tdlib = try #require(RankingPolicy.tdlib.frecencyPolicy)
        // e^(-age / 241920 s) is 2^(-age / half-life) with half-life = 241920 · ln 2.
        #expect(abs(tdlib.channels[0].rate - 1 / 241_920) < 1e-18)
        #expect(tdlib.channels[0].incoming == 0)
        let firefox = try #require(RankingPolicy.firefox.frecencyPolicy)
        #expect(firefox.channels[0].halfLife == 30 * 86_400)
        #expect(firefox.channels[0].outgoing == 100 && firefox.channels[0].incoming == 20)
    }

    static func sample() throws -> EvalResult {
        var result = EvalResult(policy: "default", cutoffs: [1, 3, 8])
        result.donations = 10
        result.outgoing = 6
        result.accounts = 2
        for rank in [1, 2, 5, 9] { result.record(rank: rank, covered: rank < 9) }
        return result
    }

    @Test func jsonHasTheContractFieldsFirst() throws {
        let text = try Self.sample().jsonText
        #expect(
            text == """
                {"policy":"default","donations":10,"outgoing":6,"evaluated":4,"hitAt":{"1":0.25,"3":0.5,"8":0.75},\
                "mrr":0.4527777777777778,"new":2,"coverage":0.75,"accounts":2,"duplicates":0}
                """)
        let parsed = try JSONParser.parse(text)
        #expect(parsed["hitAt"]?["8"] == .number(0.75))
        #expect(parsed["mrr"] == .number((1 + 0.5 + 0.2 + 1.0 / 9) / 4))
    }

    @Test func emptyResultWritesZeros() {
        let text = EvalResult(policy: "recency", cutoffs: [1]).jsonText
        #expect(
            text
                == #"{"policy":"recency","donations":0,"outgoing":0,"evaluated":0,"hitAt":{"1":0},"mrr":0,"new":0,"coverage":0,"accounts":0,"duplicates":0}"#
        )
    }

    @Test func tableAlignsColumns() throws {
        let table = EvalResult.table([try Self.sample(), EvalResult(policy: "android", cutoffs: [1, 3, 8])])
        #expect(
            table == """
                policy   donations  outgoing  evaluated  new  hit@1  hit@3  hit@8    mrr  coverage
                default         10         6          4    2  0.250  0.500  0.750  0.453     0.750
                android          0         0          0    0  0.000  0.000  0.000  0.000     0.000

                """)
    }

    @Test func curveAndHitAtBeyondTheCutoffs() throws {
        let result = try Self.sample()
        #expect(result.hitAt(2) == 0.5)
        #expect(result.hitAt(20) == 1)
        #expect(result.hitAt(21) == nil)
        #expect(result.curve.prefix(5) == [0.25, 0.5, 0.5, 0.5, 0.75])
    }
}
