import SuggestCore
import SuggestEval
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
