import SuggestCore

/// The tuning harness: replays a history under many candidate policies and reports each one's figures, so that
/// the default policy's constants are chosen by measurement (docs/ranking-quality.md records the grid and the
/// outcome).
///
///     let grid = PolicyTuner.grid(shortHalfLives: [3_600, 14_400], ...)
///     let trials = try await PolicyTuner.run(grid, on: history)
///     let best = trials.max { $0.result.mrr < $1.result.mrr }
public enum PolicyTuner {
    /// One candidate and what it scored.
    public struct Trial: Sendable {
        /// The candidate.
        public var policy: RankingPolicy
        /// Its figures on the history.
        public var result: EvalResult
    }

    /// Replays `history` under each candidate, `concurrency` at a time.
    /// - Parameters:
    ///   - candidates: the policies to try.
    ///   - history: the donations, in the order they happened.
    ///   - cutoffs: the k of hit@k.
    ///   - concurrency: replays at once (one core each).
    /// - Returns: one trial per candidate, in the order given.
    /// - Throws: `InputError` for invalid cut-offs.
    /// - Complexity: one full replay per candidate.
    public static func run(
        _ candidates: [RankingPolicy], on history: [Interaction], cutoffs: [Int] = EvalResult.defaultCutoffs,
        concurrency: Int = 2
    ) async throws -> [Trial] {
        var results: [EvalResult?] = Array(repeating: nil, count: candidates.count)
        try await withThrowingTaskGroup(of: (Int, EvalResult).self) { group in
            var next = 0
            func start() {
                let index = next
                let policy = candidates[index]
                group.addTask {
                    let evaluator = try Evaluator(policy: policy, cutoffs: cutoffs)
                    for interaction in history { try evaluator.consume(interaction) }
                    return (index, evaluator.result)
                }
                next += 1
            }
            while next < min(max(1, concurrency), candidates.count) { start() }
            while let (index, result) = try await group.next() {
                results[index] = result
                if next < candidates.count { start() }
            }
        }
        return zip(candidates, results).compactMap { policy, result in result.map { Trial(policy: policy, result: $0) } }
    }

    /// The two-speed family the default policy comes from: a short channel that follows the latest exchanges in
    /// either direction, and a long channel that remembers who one writes to, blended by `longWeights`. Every
    /// combination of the values given is one candidate, named by its constants.
    /// - Parameters:
    ///   - shortHalfLives, longHalfLives: seconds.
    ///   - shortIncoming, longIncoming: what an incoming donation weighs in each channel (an outgoing one weighs 1).
    ///   - longWeights: `β` of the long channel (the short one has 1).
    ///   - groupFactors: what a group conversation's score is multiplied by.
    /// - Returns: one candidate per combination, named by its constants.
    /// - Throws: `PolicyError` when a value of the grid is out of range (a half-life of 0, a negative weight).
    public static func grid(
        shortHalfLives: [Double], shortIncoming: [Double], longHalfLives: [Double], longIncoming: [Double],
        longWeights: [Double], groupFactors: [Double] = [1]
    ) throws(PolicyError) -> [RankingPolicy] {
        var candidates: [RankingPolicy] = []
        for shortHalfLife in shortHalfLives {
            for shortIn in shortIncoming {
                for longHalfLife in longHalfLives {
                    for longIn in longIncoming {
                        for longWeight in longWeights {
                            for groupFactor in groupFactors {
                                let policy = try FrecencyPolicy(
                                    channels: [
                                        .init(name: "short-term", halfLife: shortHalfLife, weight: 1, incoming: shortIn),
                                        .init(name: "long-term", halfLife: longHalfLife, weight: longWeight, incoming: longIn),
                                    ],
                                    groupFactor: groupFactor)
                                let name =
                                    "short \(duration(shortHalfLife)) in \(shortIn) · long \(duration(longHalfLife)) in \(longIn) β \(longWeight)"
                                    + (groupFactor == 1 ? "" : " · group \(groupFactor)")
                                candidates.append(.frecency(policy, name: name))
                            }
                        }
                    }
                }
            }
        }
        return candidates
    }

    /// A duration in its largest whole unit: `15m`, `4h`, `14d`.
    static func duration(_ seconds: Double) -> String {
        if seconds >= 86_400, seconds.truncatingRemainder(dividingBy: 86_400) == 0 { return "\(Int(seconds / 86_400))d" }
        if seconds >= 3_600, seconds.truncatingRemainder(dividingBy: 3_600) == 0 { return "\(Int(seconds / 3_600))h" }
        if seconds >= 60, seconds.truncatingRemainder(dividingBy: 60) == 0 { return "\(Int(seconds / 60))m" }
        return "\(seconds)s"
    }
}
