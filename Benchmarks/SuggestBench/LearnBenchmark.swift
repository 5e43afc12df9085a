import SuggestCore

/// `suggest-bench learn`: what the learner adds to one donation, beside `suggest-bench apply`'s hot path.
///
/// The same synthetic history as `apply` (default 10M donations over 100k conversations, one account), generated
/// up front into flat arrays; each run times, on new indexes with their slots resolved before the clock starts:
/// the fixed policy's `apply(_:to:)`, the learned policy's (four channels), and the learned policy's with
/// `LearnedWeights.record` after each donation, as a store applying donations would call it.
enum LearnBenchmark {
    static let usage = """
        usage: suggest-bench learn [--donations N] [--conversations C] [--seed S] [--runs R] [HISTORY OPTIONS]

        Times per donation, R times (default 5), median (min–max):
          fixed apply            InMemoryRankingIndex.apply(_:to:) with FrecencyPolicy.default (three channels)
          learned apply          the same with LearnedPolicy.default's four channels
          learned apply + record the same, then LearnedWeights.record(_:before:after:policy:) for the account
        and prints the learned weights' checksum (the same for every run: the fold is deterministic).

        history options:
        \(HistoryOptions.help)
        """

    static func run(_ arguments: [String]) throws -> Int32 {
        let parsed = try BenchArguments(arguments, flags: [], options: HistoryOptions.names.union(["--runs"]))
        var defaults = SyntheticHistory.Parameters()
        defaults.donations = 10_000_000
        defaults.conversations = 100_000
        let parameters = try HistoryOptions.parameters(parsed, defaults: defaults)
        let runs = try parsed.integer("--runs", default: 5, range: 1...100)
        let history = SyntheticHistory(parameters)
        Log.note("learn: generating \(HistoryOptions.describe(parameters))")
        let (events, conversations) = history.rankerEvents()
        let identifiers = (0..<Int32(parameters.conversations)).map(SyntheticHistory.conversationIdentifier)
        let count = Double(events.count)
        let learned = LearnedPolicy.default
        var fixedTimes: [Double] = []
        var learnedTimes: [Double] = []
        var recordTimes: [Double] = []
        var checksums: Set<String> = []
        for run in 1...runs {
            for (policy, isRecording) in [(FrecencyPolicy.default, false), (learned.base, false), (learned.base, true)]
            {
                let index = InMemoryRankingIndex(policy: policy)
                for identifier in identifiers { _ = index.slot(for: identifier) }
                var weights = LearnedWeights.empty
                let elapsed = events.withUnsafeBufferPointer { events in
                    conversations.withUnsafeBufferPointer { slots in
                        MonotonicClock.time {
                            if isRecording {
                                for offset in 0..<events.count {
                                    let slot = slots[offset]
                                    let before = index.states[Int(slot)]
                                    index.apply(events[offset], to: slot)
                                    weights.record(
                                        events[offset], before: before, after: index.states[Int(slot)], policy: learned)
                                }
                            } else {
                                for offset in 0..<events.count { index.apply(events[offset], to: slots[offset]) }
                            }
                        }
                    }
                }
                let perDonation = elapsed.nanoseconds / count
                if isRecording {
                    recordTimes.append(perDonation)
                    var checksum = Checksum()
                    for index in 0..<4 {
                        checksum.add(weights.personTotals[index])
                        checksum.add(weights.groupTotals[index])
                        checksum.add(weights.personShares[index])
                        checksum.add(weights.groupShares[index])
                    }
                    checksum.add(UInt64(weights.targets))
                    checksums.insert(checksum.hex)
                } else if policy == FrecencyPolicy.default {
                    fixedTimes.append(perDonation)
                } else {
                    learnedTimes.append(perDonation)
                }
            }
            Log.note(
                "learn: run \(run)/\(runs): fixed \(Format.fixed(fixedTimes.last ?? 0, 1)) ns, learned "
                    + "\(Format.fixed(learnedTimes.last ?? 0, 1)) ns, + record \(Format.fixed(recordTimes.last ?? 0, 1)) ns"
            )
        }
        let nanoseconds = { (value: Double) in Format.fixed(value, 1) + " ns" }
        print("## learn: \(HistoryOptions.describe(parameters)); \(runs) runs, median (min–max)")
        print("")
        print("| measure | per donation |")
        print("|---|---|")
        print("| apply(_:to:), FrecencyPolicy.default (3 channels) | \(Summary(fixedTimes).formatted(nanoseconds)) |")
        print("| apply(_:to:), LearnedPolicy.default's 4 channels | \(Summary(learnedTimes).formatted(nanoseconds)) |")
        print("| the same + LearnedWeights.record | \(Summary(recordTimes).formatted(nanoseconds)) |")
        print("")
        print(
            "learned weights checksum \(checksums.sorted().joined(separator: ", ")) (\(checksums.count == 1 ? "the same in every run" : "DIFFERENT between runs"))"
        )
        return checksums.count == 1 ? 0 : 1
    }
}
