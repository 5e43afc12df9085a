#if canImport(Glibc)
    import Glibc
#endif
import SuggestCore
import SuggestEval
import Testing

/// The figures of docs/ranking-quality.md: every policy on both histories, through the path the CLI takes (convert
/// to JSON Lines in /tmp, then evaluate the file), checked against the in-memory replay, printed as a Markdown
/// table, and the HTML report written to /tmp/report.html. Off by default; run with
/// `SUGGEST_FIGURES=1 swift test -c release --filter FiguresRun`.
@Suite(.enabled(if: SharedData.isSet("SUGGEST_FIGURES") && SharedData.isPresent))
struct FiguresRun {
    static let collegeNote =
        "CollegeMsg (SNAP): 59,835 private messages among 1,899 users of a UC Irvine online community, Apr–Oct 2004. Panzarasa, Opsahl & Carley, JASIST 60(5), 2009."
    static let enronNote =
        "Enron e-mail among 156 employees (Zhou et al. cleaning, Perry & Wolfe tables): 21,635 messages, 38,388 recipients, 1998–2002. Perry & Wolfe, JRSS-B 75(5), 2013; Zhou et al., NAACSOS 2007."

    @Test func everyPolicyOnBothHistories() throws {
        var histories: [EvalReport.History] = []
        for (name, note, path) in [
            ("CollegeMsg", Self.collegeNote, "/tmp/college.jsonl"), ("Enron", Self.enronNote, "/tmp/enron.jsonl"),
        ] {
            let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
            try #require(descriptor >= 0)
            let output = JSONLinesOutput(fileDescriptor: descriptor, name: path)
            var memory: [Interaction] = []
            let summary: HistoryConverter.Summary
            if name == "CollegeMsg" {
                summary = try HistoryConverter.collegeMsg(.file(SharedData.collegeMsg)) {
                    memory.append($0)
                    try output.write($0)
                }
            } else {
                summary = try HistoryConverter.enron(directory: SharedData.enron) {
                    memory.append($0)
                    try output.write($0)
                }
            }
            try output.flush()
            close(descriptor)
            print("\(name): \(summary)")
            let fromFile = try Evaluator.evaluate(.file(path), policies: RankingPolicy.all)
            #expect(fromFile == (try Evaluator.evaluate(memory, policies: RankingPolicy.all)))
            histories.append(EvalReport.History(name: name, note: note, results: fromFile))
            print("\n### \(name)\n")
            print("| policy | hit@1 | hit@3 | hit@8 | MRR | coverage |\n|---|---|---|---|---|---|")
            for result in fromFile {
                let cells = [result.hitAt(1) ?? 0, result.hitAt(3) ?? 0, result.hitAt(8) ?? 0, result.mrr, result.coverage]
                print("| \(result.policy) | " + cells.map { Self.fixed($0) }.joined(separator: " | ") + " |")
            }
            print("\n" + EvalResult.table(fromFile))
            for result in fromFile { print(result.jsonText) }
        }
        let html = EvalReport.html(histories: histories, title: "suggest: ranking quality by replay")
        let path = "/tmp/report.html"
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        try #require(descriptor >= 0)
        let bytes = Array(html.utf8)
        #expect(bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) } == bytes.count)
        close(descriptor)
    }

    static func fixed(_ value: Double) -> String {
        let scaled = Int((value * 1000).rounded())
        let digits = String(scaled)
        return scaled >= 1000 ? "1.000" : "0." + String(repeating: "0", count: 3 - digits.count) + digits
    }
}
