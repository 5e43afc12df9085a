import SuggestCore
@testable import SuggestEval
import Testing

@Suite struct ReportTests {
    @Test func pageIsSelfContainedWithChartLegendAndTable() throws {
        var first = EvalResult(policy: "default", cutoffs: [1, 3, 8])
        var second = EvalResult(policy: "rec<ency>", cutoffs: [1, 3, 8])
        for rank in [1, 1, 2, 4, 9, 30] { first.record(rank: rank, covered: true) }
        for rank in [2, 3, 3, 5, 12, 40] { second.record(rank: rank, covered: rank < 10) }
        let html = EvalReport.html(
            histories: [EvalReport.History(name: "Tiny & small", note: "made up", results: [first, second])])
        #expect(html.hasPrefix("<!DOCTYPE html>"))
        #expect(html.contains("<svg"))
        #expect(html.components(of: "<polyline").count == 2)
        #expect(html.contains("k (suggestions shown)"))
        #expect(html.contains("hit@k (share of evaluated sends)"))
        #expect(html.contains("Tiny &amp; small"))
        #expect(html.contains("rec&lt;ency&gt;"))
        #expect(!html.contains("rec<ency>"))
        #expect(!html.contains("<script"))
        #expect(!html.contains("http://") || html.contains("xmlns=\"http://www.w3.org/2000/svg\""))
        #expect(html.contains("<td class=\"best\">0.333</td>"))  // hit@1 of default
    }

    /// Found by a probe: a `"` followed by a combining accent is one `Character`, and went through unescaped (a file
    /// named so put an `onmouseover` into the chart); the table's columns were hit@1, 3 and 8 whatever `--k` asked;
    /// under `--against` the heading named the first policy of rows that were every policy against the baseline; a
    /// single send's interval had no width and was marked significant.
    @Test func theReportEscapesScalarsFollowsTheCutoffsAndNamesTheBaseline() {
        let hostile = "h\u{301}\"\u{301} onmouseover=alert(3) x="
        #expect(!EvalReport.escape(hostile).unicodeScalars.contains("\""))
        #expect(!EvalReport.escape(hostile).components(of: "&quot;").isEmpty)

        var first = EvalResult(policy: "default", cutoffs: [2, 5])
        var second = EvalResult(policy: "frequency", cutoffs: [2, 5])
        for rank in [1, 3, 6] { first.record(rank: rank, covered: true) }
        for rank in [2, 4, 7] { second.record(rank: rank, covered: true) }
        var againstRecency = [PairedComparison(policy: "default", baseline: "recency", cutoffs: [2, 5]),
            PairedComparison(policy: "frequency", baseline: "recency", cutoffs: [2, 5])]
        for index in againstRecency.indices {
            againstRecency[index].add(account: 0, kinds: .group, policyRank: 1, baselineRank: 9, depth: 100)
        }
        let html = EvalReport.html(histories: [
            EvalReport.History(name: hostile, results: [first, second], comparisons: againstRecency)
        ])
        #expect(html.contains("<th>hit@2</th>") && html.contains("<th>hit@5</th>") && !html.contains("<th>hit@8</th>"))
        #expect(html.contains("Each policy against recency") && !html.contains("Where default wins"))
        #expect(html.components(of: "\"\u{301} onmouseover").isEmpty && !html.components(of: "onmouseover").isEmpty)
        let single = againstRecency[0].mrrDifference(kind: .group)
        #expect(!single.isSignificant && single.low == -1 && single.high == 1)
    }

    /// A few sends that all differ alike showed no spread, and got a zero-width interval marked significant; a few
    /// that differ got 1.96 standard errors where Student's t is far wider; no send at all printed a difference
    /// of 0 with an interval.
    @Test func fewSendsAreNotSignificantByTheirSpreadAlone() {
        func comparison(_ pairs: [(Int, Int)]) -> PairedComparison {
            var comparison = PairedComparison(policy: "p", baseline: "b", cutoffs: [1])
            for (policyRank, baselineRank) in pairs {
                comparison.add(account: 0, kinds: [], policyRank: policyRank, baselineRank: baselineRank, depth: 100)
            }
            return comparison
        }
        let alike = comparison([(1, 2), (1, 2)])
        #expect(!alike.mrrDifference().isSignificant && alike.mrrDifference().low == -1)
        #expect(!alike.hitDifference(1)!.isSignificant)
        // Alike to rounding: 1 − 1/3 is not exact in binary, and the spread came out as 3.7e-17.
        #expect(!comparison([(1, 3), (1, 3), (1, 3)]).mrrDifference().isSignificant)
        #expect(!comparison(Array(repeating: (1, 5), count: 5)).mrrDifference().isSignificant)
        // Six alike: 2 · 2⁻⁶ < 5%, significant with no spread.
        #expect(comparison(Array(repeating: (1, 2), count: 6)).mrrDifference().isSignificant)
        // Three sends of +0.5, 0 and +0.5: over 0 with 1.96 standard errors, not with t's 4.30.
        let three = comparison([(1, 2), (1, 1), (1, 2)]).mrrDifference()
        #expect(three.criticalValue == 4.303 && !three.isSignificant)
        #expect(three.mean - 1.96 * three.standardError > 0)
        #expect(PairedComparison.criticalValue(degreesOfFreedom: 30) == 1.96)
        let none = comparison([])
        #expect(PairedComparison.table([none]).contains("      -"))
        #expect(!PairedComparison.table([none]).contains("+0.0000"))
        var json = JSONWriter()
        none.write(to: &json)
        #expect(json.text.contains(#""pairs":0,"mrr":null,"hitAt":{}"#), "\(json.text)")
    }

    @Test func resultsByNameAreInNameOrder() {
        let html = EvalReport.html(results: [
            "Zeta": [EvalResult(policy: "default", cutoffs: [1])], "Alpha": [EvalResult(policy: "default", cutoffs: [1])],
        ])
        let alpha = html.components(of: "<h2>Alpha</h2>")
        #expect(alpha.count == 1)
        #expect(html.components(of: "<h2>").count == 2)
        #expect(alpha[0].offset < html.components(of: "<h2>Zeta</h2>")[0].offset)
    }
}

extension String {
    /// The UTF-8 offsets where `part` occurs, without Foundation.
    func components(of part: String) -> [(offset: Int, length: Int)] {
        let haystack = Array(utf8)
        let needle = Array(part.utf8)
        guard !needle.isEmpty, haystack.count >= needle.count else { return [] }
        var found: [(Int, Int)] = []
        for start in 0...(haystack.count - needle.count) where haystack[start..<start + needle.count].elementsEqual(needle) {
            found.append((start, needle.count))
        }
        return found
    }
}
