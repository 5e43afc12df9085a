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

    /// The figures per kind of target, one row per policy: for each kind, hit@k at the largest cut-off and the
    /// MRR; a heading line gives how many sends each kind has (the same for every policy).
    ///
    ///     by kind of target: reply 21,950 · idle 2,282 · group 0 · other 20,790 sends
    ///     policy     reply hit@8    mrr  idle hit@8    mrr  group hit@8    mrr  other hit@8    mrr
    ///     default          0.993  0.904        0.512  0.257          -      -        0.871  0.600
    ///
    /// Empty when the results keep no figures per kind.
    public static func kindTable(_ results: [EvalResult]) -> String {
        guard let first = results.first, !first.byKind.isEmpty, let k = first.cutoffs.last else { return "" }
        let counts = TargetKind.allCases.map {
            "\($0.rawValue) \(DecimalFormat.grouped(first.result(for: $0)?.evaluated ?? 0))"
        }
        var header = ["policy"]
        for kind in TargetKind.allCases { header += ["\(kind.rawValue) hit@\(k)", "mrr"] }
        var rows = [header]
        for result in results {
            var row = [result.policy]
            for kind in TargetKind.allCases {
                guard let part = result.result(for: kind), part.evaluated > 0 else {
                    row += ["-", "-"]
                    continue
                }
                row += [DecimalFormat.fixed(part.hitAt(k) ?? 0, places: 3), DecimalFormat.fixed(part.mrr, places: 3)]
            }
            rows.append(row)
        }
        return "by kind of target: " + counts.joined(separator: " · ") + " sends\n" + align(rows)
    }

    /// Rows of cells, the first column left-aligned and the others right-aligned, two spaces apart.
    static func align(_ rows: [[String]]) -> String {
        var widths = Array(repeating: 0, count: rows.map(\.count).max() ?? 0)
        for row in rows {
            for (column, cell) in row.enumerated() { widths[column] = max(widths[column], cell.count) }
        }
        return rows.map { row in
            row.enumerated().map { column, cell in DecimalFormat.pad(cell, widths[column], right: column > 0) }
                .joined(separator: "  ")
        }.joined(separator: "\n") + "\n"
    }
}

extension PairedComparison {
    /// The comparisons as a table, one row per pair and kind of target (all sends first): the differences of
    /// hit@k at the largest cut-off and of the MRR, policy minus baseline, with their 95% intervals, and a `*`
    /// where the interval leaves out 0.
    ///
    ///     policy − baseline    sends     kind   hit@8 difference (95%)           mrr difference (95%)
    ///     default − recency  45,997      all   +0.0010 (-0.0008 … +0.0028)    +0.0131 (+0.0113 … +0.0149) *
    public static func table(_ comparisons: [PairedComparison]) -> String {
        guard let first = comparisons.first, let k = first.cutoffs.last else { return "" }
        var rows = [
            ["policy − baseline", "kind", "sends", "hit@\(k) difference (95%)", "", "mrr difference (95%)", ""]
        ]
        for comparison in comparisons {
            for kind in [nil] + TargetKind.allCases.map(Optional.some) {
                let pairs = comparison.pairs(kind: kind)
                guard kind == nil || pairs > 0 else { continue }
                // A kind whose sends came from too few accounts is computed over sends, whatever the whole's.
                let overSends = comparison.isClustered() && !comparison.isClustered(kind: kind)
                var row = [
                    kind == nil ? "\(comparison.policy) − \(comparison.baseline)" : "",
                    (kind?.rawValue ?? "all") + (overSends ? " †" : ""), DecimalFormat.grouped(pairs),
                ]
                for difference in [comparison.hitDifference(k, kind: kind), comparison.mrrDifference(kind: kind)] {
                    // No send compared: no difference to show ("+0.0000 (+0.0000 … +0.0000)" said there was one).
                    guard let difference, pairs > 0 else {
                        row += ["-", ""]
                        continue
                    }
                    row += [
                        "\(signed(difference.mean)) (\(signed(difference.low)) … \(signed(difference.high)))",
                        difference.isSignificant ? "*" : "",
                    ]
                }
                rows.append(row)
            }
        }
        let clustered = comparisons.allSatisfy { $0.isClustered() }
        var note =
            clustered
            ? "standard errors clustered by account; * the 95% interval leaves out 0\n"
            : "standard errors over sends (fewer than \(minimumClusters) accounts); * the 95% interval leaves out 0\n"
        if rows.contains(where: { $0[1].hasSuffix(" †") }) {
            note += "† over sends: fewer than \(minimumClusters) accounts had such a send\n"
        }
        return EvalResult.align(rows) + note
    }

    /// `+0.0123` or `-0.0123`.
    static func signed(_ value: Double) -> String {
        let text = DecimalFormat.fixed(value, places: 4)
        return text.hasPrefix("-") ? text : "+" + text
    }
}
