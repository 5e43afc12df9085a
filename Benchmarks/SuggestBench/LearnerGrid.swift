import SuggestCore
import SuggestEval

/// `suggest-bench learner-grid`: the learner's two constants (prior strength and horizon) over a grid, on
/// several histories at once, beside the best anchor of each: how much they matter, and whether a choice made on
/// one history (or one half of one) holds on another.
enum LearnerGrid {
    static let usage = """
        usage: suggest-bench learner-grid FILE... [--strengths 1,2,4,10] [--horizons 8,32,128,0]

        Replays each FILE (donation JSON Lines) under LearnedPolicy.default's channels with every prior strength
        and horizon of the grid (a horizon of 0 means none: a running mean over every send), and under every
        anchor, and prints one Markdown row per candidate: hit@8 and MRR on each file, and the lead over the best
        anchor of that file (the smallest lead over the files is the column to read).
        """

    static func run(_ arguments: [String]) throws -> Int32 {
        let parsed = try BenchArguments(arguments, flags: [], options: ["--strengths", "--horizons"])
        let files = parsed.positionals
        guard !files.isEmpty else { throw BenchArguments.UsageError("give at least one FILE") }
        func numbers(_ name: String, _ fallback: String) throws(BenchArguments.UsageError) -> [Double] {
            let text = parsed.string(name) ?? fallback
            var values: [Double] = []
            for part in text.split(separator: ",") {
                guard let value = Double(part), value >= 0 else { throw .init("\(name): '\(part)' is not a number") }
                values.append(value)
            }
            return values
        }
        let strengths = try numbers("--strengths", "1,2,4,10")
        let horizons = try numbers("--horizons", "8,32,128,0")
        var candidates: [RankingPolicy] = []
        for strength in strengths where strength > 0 {
            for horizon in horizons {
                let steps = horizon == 0 ? Int.max : Int(horizon)
                candidates.append(
                    .learned(
                        try LearnedPolicy(
                            base: LearnedPolicy.default.base, priorStrength: strength, horizon: max(1, steps)),
                        name: "n0 \(Format.fixed(strength, 0)) · H \(horizon == 0 ? "∞" : Format.fixed(horizon, 0))"))
            }
        }
        let anchors = RankingPolicy.all.filter { $0.learnedPolicy == nil && $0.name != "fixed" }
        var rows: [[String]] = candidates.map { [$0.name] }
        var leads: [[Double]] = Array(repeating: [], count: candidates.count)
        var header = "| candidate |"
        for file in files {
            Log.note("learner-grid: \(file)")
            let results = try Evaluator.evaluatePipelined(.file(file), policies: candidates + anchors)
            let anchorResults = results.suffix(anchors.count)
            let bestHit = anchorResults.map { $0.hitAt(8) ?? 0 }.max() ?? 0
            let bestMRR = anchorResults.map(\.mrr).max() ?? 0
            header += " \(file) hit@8 / MRR | lead over the best anchor |"
            for (index, result) in results.prefix(candidates.count).enumerated() {
                let hit = result.hitAt(8) ?? 0
                rows[index].append("\(Format.fixed(hit, 4)) / \(Format.fixed(result.mrr, 4))")
                rows[index].append("\(Format.fixed(hit - bestHit, 4)) / \(Format.fixed(result.mrr - bestMRR, 4))")
                leads[index] += [hit - bestHit, result.mrr - bestMRR]
            }
        }
        print(header + " smallest lead |")
        print("|" + String(repeating: "---|", count: 2 * files.count + 2))
        for (index, row) in rows.enumerated() {
            print("| " + row.joined(separator: " | ") + " | \(Format.fixed(leads[index].min() ?? 0, 4)) |")
        }
        return 0
    }
}
