extension EvalResult {
    /// Results as an aligned text table, one row per policy, for people at a terminal:
    ///
    ///     policy     donations  outgoing  evaluated    new  hit@1  hit@3  hit@8    mrr  coverage
    ///     default      119,670    59,835     39,539  20,296  0.412  0.623  0.781  0.551     1.000
    ///
    /// The columns are the cut-offs of the first result; a result without one of them shows `-`.
    /// - Complexity: O(r · c) for r results and c cut-offs.
    public static func table(_ results: [EvalResult]) -> String {
        let cutoffs = results.first?.cutoffs ?? EvalResult.defaultCutoffs
        var header = ["policy", "donations", "outgoing", "evaluated", "new"]
        header += cutoffs.map { "hit@\($0)" }
        header += ["mrr", "coverage"]
        var rows: [[String]] = [header]
        for result in results {
            var row = [
                result.policy, DecimalFormat.grouped(result.donations), DecimalFormat.grouped(result.outgoing),
                DecimalFormat.grouped(result.evaluated), DecimalFormat.grouped(result.new),
            ]
            row += cutoffs.map { k in result.hitAt(k).map { DecimalFormat.fixed($0, places: 3) } ?? "-" }
            row += [DecimalFormat.fixed(result.mrr, places: 3), DecimalFormat.fixed(result.coverage, places: 3)]
            rows.append(row)
        }
        var widths = Array(repeating: 0, count: header.count)
        for row in rows {
            for (column, cell) in row.enumerated() { widths[column] = max(widths[column], cell.count) }
        }
        return rows.map { row in
            row.enumerated().map { column, cell in
                DecimalFormat.pad(cell, widths[column], right: column > 0)
            }.joined(separator: "  ")
        }.joined(separator: "\n") + "\n"
    }

    /// This result alone as a table.
    public var table: String { Self.table([self]) }
}
