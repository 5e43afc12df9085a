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

    /// How sure the lead of `default` is: the same donations ranked by `default` and by each anchor, side by side.
    /// For hit@8, the donations only one of the two finds in its first eight (McNemar's test: with b and c those
    /// counts, (b − c)² / (b + c) above 3.84 is significant at 5%, above 10.8 at 0.1%); for MRR, the mean paired
    /// difference of reciprocal ranks and its standard error.
    @Test func defaultAgainstEachAnchorSideBySide() throws {
        for (name, history) in [
            ("CollegeMsg", try SharedData.collegeMsgHistory()), ("Enron", try SharedData.enronHistory()),
        ] {
            print("\n### \(name): default against each anchor, donation by donation\n")
            print("| anchor | hit@8: only default | only anchor | McNemar χ² | MRR difference | standard error | z |")
            print("|---|---|---|---|---|---|---|")
            for anchor in RankingPolicy.all where anchor.name != RankingPolicy.default.name {
                let ours = try Evaluator(policy: .default)
                let theirs = try Evaluator(policy: anchor)
                var onlyOurs = 0
                var onlyTheirs = 0
                var differences: [Double] = []
                for donation in history {
                    let a = try ours.consume(donation)
                    let b = try theirs.consume(donation)
                    guard case .ranked(let rankA, _) = a, case .ranked(let rankB, _) = b else {
                        #expect(a == b, "both replays see the same new and duplicate donations")
                        continue
                    }
                    if rankA <= 8, rankB > 8 { onlyOurs += 1 }
                    if rankB <= 8, rankA > 8 { onlyTheirs += 1 }
                    differences.append(1 / Double(rankA) - 1 / Double(rankB))
                }
                let count = Double(differences.count)
                let mean = differences.reduce(0, +) / count
                let variance = differences.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / (count - 1)
                let standardError = (variance / count).squareRoot()
                let chiSquared = Double((onlyOurs - onlyTheirs) * (onlyOurs - onlyTheirs)) / Double(max(onlyOurs + onlyTheirs, 1))
                print(
                    "| \(anchor.name) | \(onlyOurs) | \(onlyTheirs) | \(Self.fixed(chiSquared, digits: 1)) | "
                        + "\(Self.fixed(mean, digits: 4)) | \(Self.fixed(standardError, digits: 4)) | "
                        + "\(Self.fixed(mean / standardError, digits: 1)) |")
            }
        }
    }

    /// `value` with `digits` decimals, for the tables above.
    static func fixed(_ value: Double, digits: Int) -> String {
        var scale = 1.0
        for _ in 0..<digits { scale *= 10 }
        let scaled = Int((abs(value) * scale).rounded())
        let whole = scaled / Int(scale)
        let fraction = String(scaled % Int(scale))
        let padded = String(repeating: "0", count: digits - fraction.count) + fraction
        return (value < 0 && scaled != 0 ? "-" : "") + "\(whole)" + (digits > 0 ? "." + padded : "")
    }

    static func fixed(_ value: Double) -> String {
        let scaled = Int((value * 1000).rounded())
        let digits = String(scaled)
        return scaled >= 1000 ? "1.000" : "0." + String(repeating: "0", count: 3 - digits.count) + digits
    }
}
