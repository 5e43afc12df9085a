import SuggestCore

extension EvalResult {
    /// Writes the result as `suggest eval --json` prints it: the contract's fields first (`policy`, `donations`,
    /// `outgoing`, `evaluated`, `hitAt` keyed by the cut-off as a string, `mrr`), then `new`, `coverage`,
    /// `accounts`, `duplicates`, the depth of exact ranks (`depth`, `beyondDepth`, `mrrBound`), the figures per
    /// kind of target (`byKind`) and the comparisons whose policy this is (`comparisons`), when there are any.
    public func write(to writer: inout JSONWriter, comparisons: [PairedComparison] = []) {
        writer.beginObject()
        writer.key("policy")
        writer.string(policy)
        writeFigures(to: &writer)
        writer.key("new")
        writer.integer(new)
        writer.key("coverage")
        writer.number(coverage)
        writer.key("accounts")
        writer.integer(accounts)
        writer.key("duplicates")
        writer.integer(duplicates)
        writeDepth(to: &writer)
        if !byKind.isEmpty {
            writer.key("byKind")
            writer.beginObject()
            for kind in TargetKind.allCases {
                guard let result = result(for: kind) else { continue }
                writer.key(kind.rawValue)
                writer.beginObject()
                result.writeFigures(to: &writer, counts: false)
                result.writeDepth(to: &writer)
                writer.endObject()
            }
            writer.endObject()
        }
        if !comparisons.isEmpty {
            writer.key("comparisons")
            writer.beginArray()
            for comparison in comparisons { comparison.write(to: &writer) }
            writer.endArray()
        }
        writer.endObject()
    }

    /// `donations`, `outgoing` (unless `counts` is false), `evaluated`, `hitAt`, `mrr`.
    private func writeFigures(to writer: inout JSONWriter, counts: Bool = true) {
        if counts {
            writer.key("donations")
            writer.integer(donations)
            writer.key("outgoing")
            writer.integer(outgoing)
        }
        writer.key("evaluated")
        writer.integer(evaluated)
        writer.key("hitAt")
        writer.beginObject()
        for (cutoff, rate) in hitRates {
            writer.key(String(cutoff))
            writer.number(rate)
        }
        writer.endObject()
        writer.key("mrr")
        writer.number(mrr)
    }

    /// `depth` (omitted when every rank is exact), `beyondDepth`, `mrrBound`.
    private func writeDepth(to writer: inout JSONWriter) {
        guard depth < .max else { return }
        writer.key("depth")
        writer.integer(depth)
        writer.key("beyondDepth")
        writer.integer(beyondDepth)
        writer.key("mrrBound")
        writer.number(mrrBound)
    }

    /// The result as one line of JSON, without a line break.
    public var jsonText: String { jsonText(comparisons: []) }

    /// The result and the comparisons whose policy it is, as one line of JSON.
    public func jsonText(comparisons: [PairedComparison]) -> String {
        var writer = JSONWriter()
        write(to: &writer, comparisons: comparisons)
        return writer.text
    }
}

extension PairedComparison {
    /// `{"baseline": …, "pairs": …, "accounts": …, "clustered": …, "mrr": {difference}, "hitAt": {"8": {difference,
    /// "onlyPolicy", "onlyBaseline"}}, "byKind": {kind: {"pairs", "mrr", "hitAt"}}}`, each difference as
    /// `{"difference", "low", "high"}` (policy minus baseline, 95% interval). Where no send was compared, `"mrr"`
    /// is `null` and `"hitAt"` empty.
    public func write(to writer: inout JSONWriter) {
        writer.beginObject()
        writer.key("baseline")
        writer.string(baseline)
        writer.key("accounts")
        writer.integer(accountCount())
        writer.key("clustered")
        writer.bool(isClustered())
        writeDifferences(to: &writer, kind: nil)
        writer.key("byKind")
        writer.beginObject()
        for kind in TargetKind.allCases {
            writer.key(kind.rawValue)
            writer.beginObject()
            writeDifferences(to: &writer, kind: kind)
            writer.endObject()
        }
        writer.endObject()
        writer.endObject()
    }

    private func writeDifferences(to writer: inout JSONWriter, kind: TargetKind?) {
        let pairs = pairs(kind: kind)
        writer.key("pairs")
        writer.integer(pairs)
        writer.key("mrr")
        // No send compared: no difference, not one of 0 with an interval of width 0.
        if pairs == 0 { writer.null() } else { Self.write(mrrDifference(kind: kind), to: &writer) }
        writer.key("hitAt")
        writer.beginObject()
        for cutoff in cutoffs where pairs > 0 {
            guard let difference = hitDifference(cutoff, kind: kind), let counts = discordant(cutoff, kind: kind) else {
                continue
            }
            writer.key(String(cutoff))
            Self.write(difference, to: &writer, discordant: counts)
        }
        writer.endObject()
    }

    private static func write(
        _ difference: Difference, to writer: inout JSONWriter, discordant: Discordance? = nil
    ) {
        writer.beginObject()
        writer.key("difference")
        writer.number(difference.mean)
        writer.key("low")
        writer.number(difference.low)
        writer.key("high")
        writer.number(difference.high)
        if let discordant {
            writer.key("onlyPolicy")
            writer.integer(discordant.onlyPolicy)
            writer.key("onlyBaseline")
            writer.integer(discordant.onlyBaseline)
        }
        writer.endObject()
    }
}
