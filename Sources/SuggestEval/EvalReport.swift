import SuggestCore

/// A self-contained HTML page of replay results: per history, a hit@k chart (k = 1 … 20, inline SVG) with one
/// curve per policy, the table of figures, the figures per kind of target, and, for the compared pairs, where the
/// policy wins and where it loses (the differences with their 95% intervals, green where it is significantly
/// ahead, red where it is significantly behind). No scripts, no external files: it opens in any browser and can
/// be attached to an issue as it is.
public enum EvalReport {
    /// The results of several policies on one history.
    public struct History: Sendable {
        /// A short name: `CollegeMsg`.
        public var name: String
        /// One line under the name: where the data comes from, how to cite it.
        public var note: String
        /// One result per policy, in the order the legend and the table list them.
        public var results: [EvalResult]
        /// The policies compared send by send (`EvalSession`); the page shows where each policy wins and loses.
        public var comparisons: [PairedComparison]

        /// - Parameters:
        ///   - name: a short name.
        ///   - note: where the data comes from.
        ///   - results: one per policy.
        ///   - comparisons: pairs compared send by send, if any.
        public init(name: String, note: String = "", results: [EvalResult], comparisons: [PairedComparison] = []) {
            self.name = name
            self.note = note
            self.results = results
            self.comparisons = comparisons
        }
    }

    /// The colours of the curves, in policy order; `default` is drawn thicker.
    static let palette = ["#1f5fa8", "#e0701a", "#2e9a3a", "#c8302c", "#7d55b0", "#8a5a44", "#d45aa8", "#6b6b6b", "#1aa3a3"]

    /// The page for `results` keyed by history name, histories in name order.
    public static func html(results: [String: [EvalResult]], title: String = "Ranking quality") -> String {
        html(histories: results.keys.sorted().map { History(name: $0, results: results[$0] ?? []) }, title: title)
    }

    /// The page for these histories, in the order given.
    /// - Complexity: O(h · p · k) for h histories, p policies and k = `EvalResult.curveDepth`.
    public static func html(histories: [History], title: String = "Ranking quality") -> String {
        var page = """
            <!DOCTYPE html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <title>\(escape(title))</title>
            <style>
            body { font: 15px/1.45 -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; color: #222; margin: 24px auto; max-width: 980px; padding: 0 16px; }
            h1 { font-size: 24px; margin-bottom: 4px; }
            h2 { font-size: 19px; margin: 28px 0 2px; }
            p.note { color: #555; margin: 0 0 8px; }
            table { border-collapse: collapse; margin: 8px 0 20px; font-variant-numeric: tabular-nums; }
            th, td { padding: 3px 12px; border-bottom: 1px solid #ddd; text-align: right; }
            th:first-child, td:first-child { text-align: left; }
            td.best { font-weight: 700; }
            td.win { background: #dcf2dc; }
            td.loss { background: #f7d9d7; }
            td.even { color: #666; }
            h3 { font-size: 16px; margin: 18px 0 2px; }
            .swatch { display: inline-block; width: 12px; height: 12px; border-radius: 2px; margin-right: 6px; vertical-align: -1px; }
            svg text { font: 12px -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; fill: #333; }
            </style>
            </head>
            <body>
            <h1>\(escape(title))</h1>
            <p class="note">hit@k: the share of evaluated sends whose conversation was among the first k suggestions just before the send. MRR: the mean of 1/rank. Coverage: the share of evaluated sends for which the policy had any evidence for the conversation.</p>

            """
        for history in histories {
            page += "<section>\n<h2>\(escape(history.name))</h2>\n"
            if !history.note.isEmpty { page += "<p class=\"note\">\(escape(history.note))</p>\n" }
            page += chart(history) + table(history) + kindTable(history) + winsAndLosses(history)
            page += "</section>\n"
        }
        page += "</body>\n</html>\n"
        return page
    }

    /// The hit@k chart of one history as inline SVG.
    static func chart(_ history: History) -> String {
        let width = 760.0
        let height = 420.0
        let left = 64.0
        let right = 190.0
        let top = 20.0
        let bottom = 56.0
        let plotWidth = width - left - right
        let plotHeight = height - top - bottom
        let depth = EvalResult.curveDepth
        let curves = history.results.map(\.curve)
        let lowest = curves.flatMap { $0 }.min() ?? 0
        let floor = max(0, (lowest * 10).rounded(.down) / 10)
        func x(_ k: Int) -> Double { left + plotWidth * Double(k - 1) / Double(depth - 1) }
        func y(_ rate: Double) -> Double { top + plotHeight * (1 - (rate - floor) / max(1 - floor, 0.1)) }
        func number(_ value: Double) -> String { DecimalFormat.fixed(value, places: 1) }

        var svg = """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(width))" height="\(Int(height))" \
            viewBox="0 0 \(Int(width)) \(Int(height))" role="img" aria-label="hit@k by policy on \(escape(history.name))">
            <rect x="\(number(left))" y="\(number(top))" width="\(number(plotWidth))" height="\(number(plotHeight))" fill="#fafafa" stroke="#999"/>

            """
        var tick = floor
        while tick <= 1.000_001 {
            let position = y(tick)
            svg += "<line x1=\"\(number(left))\" y1=\"\(number(position))\" x2=\"\(number(left + plotWidth))\" "
            svg += "y2=\"\(number(position))\" stroke=\"#e2e2e2\"/>"
            svg += "<text x=\"\(number(left - 8))\" y=\"\(number(position + 4))\" text-anchor=\"end\">"
            svg += "\(DecimalFormat.fixed(tick, places: 1))</text>\n"
            tick += 0.1
        }
        for k in [1, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20] {
            svg += "<line x1=\"\(number(x(k)))\" y1=\"\(number(top + plotHeight))\" x2=\"\(number(x(k)))\" "
            svg += "y2=\"\(number(top + plotHeight + 5))\" stroke=\"#999\"/>"
            svg += "<text x=\"\(number(x(k)))\" y=\"\(number(top + plotHeight + 19))\" text-anchor=\"middle\">\(k)</text>\n"
        }
        svg += "<text x=\"\(number(left + plotWidth / 2))\" y=\"\(number(height - 12))\" text-anchor=\"middle\">"
        svg += "k (suggestions shown)</text>\n"
        svg += "<text transform=\"translate(16 \(number(top + plotHeight / 2))) rotate(-90)\" text-anchor=\"middle\">"
        svg += "hit@k (share of evaluated sends)</text>\n"
        for (index, result) in history.results.enumerated() {
            let color = palette[index % palette.count]
            let stroke = result.policy == "default" ? 3.5 : 1.8
            let points = result.curve.enumerated().map { "\(number(x($0.offset + 1))),\(number(y($0.element)))" }
            svg += "<polyline fill=\"none\" stroke=\"\(color)\" stroke-width=\"\(stroke)\" "
            svg += "points=\"\(points.joined(separator: " "))\"/>\n"
            for k in [1, 3, 8] where k <= result.curve.count {
                svg += "<circle cx=\"\(number(x(k)))\" cy=\"\(number(y(result.curve[k - 1])))\" r=\"3\" fill=\"\(color)\"/>"
            }
            let legendY = top + 14 + Double(index) * 22
            svg += "\n<line x1=\"\(number(width - right + 16))\" y1=\"\(number(legendY - 4))\" "
            svg += "x2=\"\(number(width - right + 40))\" y2=\"\(number(legendY - 4))\" stroke=\"\(color)\" stroke-width=\"\(stroke)\"/>"
            svg += "<text x=\"\(number(width - right + 46))\" y=\"\(number(legendY))\">\(escape(result.policy)) "
            svg += "(MRR \(DecimalFormat.fixed(result.mrr, places: 3)))</text>\n"
        }
        svg += "</svg>\n"
        return svg
    }

    /// The table of figures of one history; the best value of each column in bold.
    static func table(_ history: History) -> String {
        // The cut-offs the run measured (`--k`), as the JSON and the text table give them.
        let cutoffs = history.results.first?.cutoffs ?? []
        let columns: [(String, (EvalResult) -> Double)] =
            cutoffs.map { k in ("hit@\(k)", { $0.hitAt(k) ?? 0 }) } + [("MRR", { $0.mrr }), ("coverage", { $0.coverage })]
        var html = "<table>\n<tr><th>policy</th><th>evaluated</th>"
        html += columns.map { "<th>\($0.0)</th>" }.joined() + "</tr>\n"
        let best = columns.map { column in history.results.map { column.1($0) }.max() ?? 0 }
        for (index, result) in history.results.enumerated() {
            html += "<tr><td><span class=\"swatch\" style=\"background:\(palette[index % palette.count])\"></span>"
            html += "\(escape(result.policy))</td><td>\(DecimalFormat.grouped(result.evaluated))</td>"
            for (position, column) in columns.enumerated() {
                let value = column.1(result)
                let mark = value == best[position] ? " class=\"best\"" : ""
                html += "<td\(mark)>\(DecimalFormat.fixed(value, places: 3))</td>"
            }
            html += "</tr>\n"
        }
        return html + "</table>\n"
    }

    /// The figures per kind of target: hit@k at the largest cut-off and the MRR of each policy, the best of each
    /// column in bold.
    static func kindTable(_ history: History) -> String {
        guard let first = history.results.first, !first.byKind.isEmpty, let k = first.cutoffs.last else { return "" }
        var html = "<h3>By kind of target</h3>\n<table>\n<tr><th>policy</th>"
        for kind in TargetKind.allCases {
            let count = DecimalFormat.grouped(first.result(for: kind)?.evaluated ?? 0)
            html += "<th colspan=\"2\">\(escape(kind.title)) (\(count))</th>"
        }
        html += "</tr>\n<tr><th></th>" + String(repeating: "<th>hit@\(k)</th><th>MRR</th>", count: TargetKind.allCases.count)
        html += "</tr>\n"
        let columns: [(TargetKind, Bool)] = TargetKind.allCases.flatMap { [($0, true), ($0, false)] }
        func value(_ result: EvalResult, _ column: (TargetKind, Bool)) -> Double? {
            guard let part = result.result(for: column.0), part.evaluated > 0 else { return nil }
            return column.1 ? part.hitAt(k) : part.mrr
        }
        let best = columns.map { column in history.results.compactMap { value($0, column) }.max() }
        for (index, result) in history.results.enumerated() {
            html += "<tr><td><span class=\"swatch\" style=\"background:\(palette[index % palette.count])\"></span>"
            html += "\(escape(result.policy))</td>"
            for (position, column) in columns.enumerated() {
                guard let number = value(result, column) else {
                    html += "<td>-</td>"
                    continue
                }
                html += "<td\(number == best[position] ? " class=\"best\"" : "")>\(DecimalFormat.fixed(number, places: 3))</td>"
            }
            html += "</tr>\n"
        }
        return html + "</table>\n"
    }

    /// For each compared pair, the differences of hit@k (largest cut-off) and MRR, policy minus baseline, overall
    /// and per kind of target, each with its 95% interval: green where the policy is significantly ahead, red
    /// where it is significantly behind, grey where the interval holds 0.
    static func winsAndLosses(_ history: History) -> String {
        guard let first = history.comparisons.first, let k = first.cutoffs.last else { return "" }
        let kinds: [TargetKind?] = [nil] + TargetKind.allCases.map(Optional.some)
        // Under `--against NAME` every row is another policy against NAME: the heading names NAME.
        let onePolicy = history.comparisons.allSatisfy { $0.policy == first.policy }
        let heading = onePolicy
            ? "Where \(escape(first.policy)) wins and loses, send by send"
            : "Each policy against \(escape(first.baseline)), send by send"
        var html = "<h3>\(heading)</h3>\n"
        html += "<p class=\"note\">Mean difference (policy − baseline) over the sends both ranked, with its 95% interval "
        html += first.isClustered()
            ? "(standard errors clustered by account; a kind marked † over sends: fewer than "
                + "\(PairedComparison.minimumClusters) accounts had such a send)"
            : "(standard errors over sends)"
        html += ". Green: significantly ahead; red: significantly behind.</p>\n"
        for (label, measure) in [("hit@\(k)", true), ("MRR", false)] {
            html += "<table>\n<tr><th>\(escape(label)): policy − baseline</th>"
            for kind in kinds {
                let overSends = first.isClustered() && !first.isClustered(kind: kind)
                html += "<th>\(escape(kind?.title ?? "all sends"))\(overSends ? " †" : "")</th>"
            }
            html += "</tr>\n"
            for comparison in history.comparisons {
                html += "<tr><td>\(escape(comparison.policy)) − \(escape(comparison.baseline))</td>"
                for kind in kinds {
                    let difference = measure ? comparison.hitDifference(k, kind: kind) : comparison.mrrDifference(kind: kind)
                    guard let difference, comparison.pairs(kind: kind) > 0 else {
                        html += "<td>-</td>"
                        continue
                    }
                    let mark = difference.low > 0 ? "win" : difference.high < 0 ? "loss" : "even"
                    html += "<td class=\"\(mark)\">\(PairedComparison.signed(difference.mean)) "
                    html += "(\(PairedComparison.signed(difference.low)) … \(PairedComparison.signed(difference.high)))</td>"
                }
                html += "</tr>\n"
            }
            html += "</table>\n"
        }
        return html
    }

    /// Text made safe for HTML content and attribute values (`MarkupEscaping.html`): a file named with a quote
    /// and a combining accent put an `onmouseover` into the chart when this compared `Character`s.
    static func escape(_ text: String) -> String { MarkupEscaping.html.escape(text) }
}
