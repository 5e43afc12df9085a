import SuggestCore
import SuggestEval
import Testing

/// The grid search behind `FrecencyPolicy.default`: candidates are chosen on CollegeMsg and confirmed on Enron.
/// Off by default (minutes of work); run with `SUGGEST_TUNE=1 swift test -c release --filter TuningRun`.
/// Each stage prints one line per candidate: its name, then hit@1, hit@3, hit@8 and MRR on CollegeMsg, then the
/// same on Enron.
@Suite(.enabled(if: SharedData.isSet("SUGGEST_TUNE") && SharedData.isPresent), .serialized)
struct TuningRun {
    static let minute = 60.0
    static let hour = 3_600.0
    static let day = 86_400.0

    /// Stage 1: two channels (short and long) blended.
    @Test func stage1TwoSpeed() async throws {
        let grid = PolicyTuner.grid(
            shortHalfLives: [15 * Self.minute, Self.hour, 4 * Self.hour, 12 * Self.hour],
            shortIncoming: [0.5, 1, 2],
            longHalfLives: [3 * Self.day, 14 * Self.day, 60 * Self.day],
            longIncoming: [0.3, 1],
            longWeights: [0.01, 0.1, 1])
        try await Self.report("stage 1", grid)
    }

    /// Stage 2: one channel alone, and three channels: a reply channel (minutes, incoming-heavy), a recency
    /// channel (days) and a long memory (weeks).
    @Test func stage2ReplyRecencyMemory() async throws {
        var grid: [RankingPolicy] = []
        for halfLife in [Self.hour, 6 * Self.hour, Self.day, 3 * Self.day] {
            for incoming in [1.0, 2, 4] {
                grid.append(Self.policy([(halfLife, 1, incoming)]))
            }
        }
        for replyHalfLife in [10 * Self.minute, 30 * Self.minute, Self.hour] {
            for replyIncoming in [2.0, 4] {
                for recencyHalfLife in [Self.day, 3 * Self.day] {
                    for recencyWeight in [0.01, 0.001] {
                        for memoryWeight in [0, 0.1] {
                            for memoryHalfLife in [14 * Self.day, 60 * Self.day] where memoryWeight > 0 || memoryHalfLife == 14 * Self.day {
                                var channels = [(replyHalfLife, 1.0, replyIncoming), (recencyHalfLife, recencyWeight, 1.0)]
                                if memoryWeight > 0 { channels.append((memoryHalfLife, recencyWeight * memoryWeight, 0.3)) }
                                grid.append(Self.policy(channels))
                            }
                        }
                    }
                }
            }
        }
        try await Self.report("stage 2", grid)
    }

    /// A policy of channels given as (half-life, weight, incoming), outgoing weighing 1.
    static func policy(_ channels: [(Double, Double, Double)]) -> RankingPolicy {
        let name = channels.map { "\(PolicyTuner.duration($0.0)) β\($0.1) in\($0.2)" }.joined(separator: " + ")
        return .frecency(
            FrecencyPolicy(
                channels: channels.enumerated().map { index, channel in
                    .init(name: "c\(index)", halfLife: channel.0, weight: channel.1, incoming: channel.2)
                }),
            name: name)
    }

    static func report(_ stage: String, _ grid: [RankingPolicy]) async throws {
        let college = try await PolicyTuner.run(grid, on: try SharedData.collegeMsgHistory())
        let enron = try await PolicyTuner.run(grid, on: try SharedData.enronHistory())
        print("\(stage): \(grid.count) candidates, sorted by MRR on CollegeMsg")
        for (c, e) in zip(college, enron).sorted(by: { $0.0.result.mrr > $1.0.result.mrr }) {
            print("\(c.policy.name) | CollegeMsg \(figures(c.result)) | Enron \(figures(e.result))")
        }
    }

    static func figures(_ r: EvalResult) -> String {
        [r.hitAt(1) ?? 0, r.hitAt(3) ?? 0, r.hitAt(8) ?? 0, r.mrr].map { String(Int(($0 * 10_000).rounded())) }
            .joined(separator: " ")
    }
}
