import SuggestCore

/// `suggest-bench topk`: the exact top 8 under the two-speed blend over a large in-memory index, by the
/// threshold algorithm (`TopKRanker.top`) and by scoring everything (`bruteForce`), on the same index.
enum TopKBenchmark {
    static let usage = """
        usage: suggest-bench topk [--conversations C] [--donations N] [--queries Q] [--brute B] [--limit K] [HISTORY OPTIONS]

        Builds an InMemoryRankingIndex from a synthetic history (default 1M conversations, 5M donations), then
        runs Q queries (default 1000) for each context, at times from one minute to 60 days after the last
        donation:
          plain      no context
          context    sharing a public.jpeg with one person named (a different person per query)
        Every Q/B-th query (B = 20 by default) also runs bruteForce (scores and sorts everything) and a lean
        linear scan (the same Scorer on every conversation, only the best K kept), and the three rankings must be
        identical (identifiers and scores, bit for bit); a difference is reported and the exit status is 1.
        Prints the median (min–max) query time of each, the ratio, and the median sorted and random accesses.

        history options:
        \(HistoryOptions.help)
        """

    static func run(_ arguments: [String]) throws -> Int32 {
        let parsed = try BenchArguments(
            arguments, flags: [], options: HistoryOptions.names.union(["--queries", "--brute", "--limit"]))
        var defaults = SyntheticHistory.Parameters()
        defaults.donations = 5_000_000
        defaults.conversations = 1_000_000
        let parameters = try HistoryOptions.parameters(parsed, defaults: defaults)
        let queries = try parsed.integer("--queries", default: 1_000, range: 1...1_000_000)
        let bruteCount = try parsed.integer("--brute", default: 20, range: 0...queries)
        let limit = try parsed.integer("--limit", default: 8, range: 1...1_000)
        let history = SyntheticHistory(parameters)

        Log.note("topk: building the index: \(HistoryOptions.describe(parameters))")
        let index = InMemoryRankingIndex()
        let built = MonotonicClock.time { build(index, from: history) }
        let settled = MonotonicClock.time { index.settle() }
        Log.note(
            "topk: \(Format.count(index.count)) conversations in \(Format.duration(built.nanoseconds)), settled in "
                + "\(Format.duration(settled.nanoseconds))")

        let end = parameters.end.seconds
        // A few untimed queries first: the first walk of each list faults its pages in.
        for warm in 0..<3 {
            var context = RankingContext(at: Timestamp(seconds: end + Double(warm) * 3_600), limit: limit)
            _ = try TopKRanker(policy: index.policy, context: context, tree: index.types).top(in: index)
            context.contentTypes = ["public.jpeg"]
            _ = try TopKRanker(policy: index.policy, context: context, tree: index.types).top(in: index)
        }
        var mismatches = 0
        var checksum = Checksum()
        var rows: [String] = []
        for variant in ["plain", "context"] {
            var topTimes: [Double] = []
            var bruteTimes: [Double] = []
            var scanTimes: [Double] = []
            var sorted: [Double] = []
            var random: [Double] = []
            let mismatchesBefore = mismatches
            let bruteEvery = bruteCount > 0 ? max(1, queries / bruteCount) : Int.max
            for query in 0..<queries {
                // Log-spaced from one minute to 60 days after the last donation.
                let fraction = Double(query) / Double(max(queries - 1, 1))
                let at = Timestamp(seconds: end + 60 * exp(fraction * log(60 * 86_400 / 60)))
                var context = RankingContext(at: at, limit: limit)
                if variant == "context" {
                    context.contentTypes = ["public.jpeg"]
                    context.people = [SyntheticHistory.personIdentifier(history.conversation(ofRank: query % 200))]
                }
                let timed = try MonotonicClock.time {
                    try TopKRanker(policy: index.policy, context: context, tree: index.types).top(in: index)
                }
                topTimes.append(timed.nanoseconds)
                // The same query again, untimed, counting the accesses.
                var statistics = TopKRanker.Statistics()
                _ = try TopKRanker(policy: index.policy, context: context, tree: index.types)
                    .top(in: index, statistics: &statistics)
                sorted.append(Double(statistics.sortedAccesses))
                random.append(Double(statistics.randomAccesses))
                for ranked in timed.result { checksum.add(ranked.logScore) }
                if query % bruteEvery == 0 {
                    let brute = try MonotonicClock.time {
                        try TopKRanker(policy: index.policy, context: context, tree: index.types).bruteForce(in: index)
                    }
                    bruteTimes.append(brute.nanoseconds)
                    let scan = MonotonicClock.time {
                        LinearScan.top(in: index, ranker: TopKRanker(policy: index.policy, context: context, tree: index.types))
                    }
                    scanTimes.append(scan.nanoseconds)
                    let fast = timed.result.map { "\($0.conversationIdentifier) \($0.logScore.bitPattern)" }
                    let slow = brute.result.map { "\($0.conversationIdentifier) \($0.logScore.bitPattern)" }
                    let lean = scan.result.map { "\($0.conversationIdentifier) \($0.logScore.bitPattern)" }
                    if fast != slow || lean != slow {
                        mismatches += 1
                        Log.note(
                            "topk: MISMATCH (\(variant), at \(at.rfc3339)):\n  top:   \(fast)\n  brute: \(slow)\n  scan:  \(lean)")
                    }
                }
            }
            let top = Summary(topTimes)
            var row = "| \(variant) | \(top.formatted(Format.duration)) | "
            if bruteTimes.isEmpty {
                row += "– | – | – | – | "
            } else {
                let brute = Summary(bruteTimes)
                let scan = Summary(scanTimes)
                row += "\(brute.formatted(Format.duration)) | \(Format.count(Int(brute.median / top.median)))× | "
                row += "\(scan.formatted(Format.duration)) | \(Format.count(Int(scan.median / top.median)))× | "
            }
            row += "\(Format.fixed(Summary(sorted).median, 0)) (\(Format.fixed(Summary(sorted).maximum, 0))) | "
            row += "\(Format.fixed(Summary(random).median, 0)) (\(Format.fixed(Summary(random).maximum, 0))) | "
            let equal = bruteTimes.count - (mismatches - mismatchesBefore)
            row += "\(equal) of \(bruteTimes.count)\(equal == bruteTimes.count ? "" : " (MISMATCH: see standard error)") |"
            rows.append(row)
        }

        print(
            "## topk: exact top \(limit) over \(Format.count(index.count)) conversations "
                + "(\(HistoryOptions.describe(parameters))); \(queries) queries per context, brute force on every "
                + "\(queries / max(bruteCount, 1))th")
        print("")
        print(
            "| context | TopKRanker.top median (min–max) | bruteForce median (min–max) | speed-up | "
                + "linear scan, top K kept, median (min–max) | speed-up | sorted accesses median (max) | "
                + "random accesses median (max) | equal to both references |")
        print("|---|---|---|---|---|---|---|---|---|")
        for row in rows { print(row) }
        print("")
        print("index built in \(Format.duration(built.nanoseconds)); settle() after building: \(Format.duration(settled.nanoseconds))")
        print("checksum \(checksum.hex)")
        return mismatches == 0 ? 0 : 1
    }

    /// Applies the history: a conversation's first donation through the whole-donation path (which records its
    /// people and service), the others through the hot path plus their content kind, which gives the same state.
    static func build(_ index: InMemoryRankingIndex, from history: SyntheticHistory) {
        var slots = [Int32](repeating: -1, count: history.parameters.conversations)
        var stream = history.makeIterator()
        let kinds = SyntheticHistory.contentTypes.map { index.types.contentKind(of: "\($0)") }
        while let donation = stream.next() {
            let conversation = Int(donation.conversation)
            let slot = slots[conversation]
            if slot < 0 {
                let interaction = history.interaction(donation)
                index.apply(interaction)
                slots[conversation] = index.slot(for: interaction.conversationIdentifier)
                continue
            }
            index.apply(
                ConversationState.Event(
                    date: Timestamp(seconds: Double(donation.date)), direction: donation.direction,
                    isEngagedSuggestion: donation.engaged, isGroup: history.isGroup(donation.conversation)),
                to: slot)
            if donation.contentType >= 0 {
                index.applyContent(
                    kinds: [kinds[Int(donation.contentType)]], at: Timestamp(seconds: Double(donation.date)), to: slot)
            }
        }
    }
}

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif
