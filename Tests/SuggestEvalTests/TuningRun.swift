import SuggestCore
import Testing

@testable import SuggestEval

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
        let grid = try PolicyTuner.grid(
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
                grid.append(try Self.policy([(halfLife, 1, incoming)]))
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
                                grid.append(try Self.policy(channels))
                            }
                        }
                    }
                }
            }
        }
        try await Self.report("stage 2", grid)
    }

    /// Stage 3: a reply channel of minutes with a strong incoming weight (ranking is then nearly by the latest
    /// exchange, an incoming one counting as log2(w) half-lives more recent), alone or over a faint memory.
    @Test func stage3ReplyOverMemory() async throws {
        var grid: [RankingPolicy] = []
        for halfLife in [2 * Self.minute, 5 * Self.minute, 10 * Self.minute, 20 * Self.minute] {
            for incoming in [1.0, 2, 4, 8, 16, 64] { grid.append(try Self.policy([(halfLife, 1, incoming)])) }
        }
        for halfLife in [5 * Self.minute, 10 * Self.minute] {
            for incoming in [4.0, 16] {
                for memoryHalfLife in [Self.day, 7 * Self.day, 30 * Self.day] {
                    for memoryWeight in [1e-20, 1e-10, 1e-5] {
                        for memoryIncoming in [0.3, 1] {
                            grid.append(try Self.policy([(halfLife, 1, incoming), (memoryHalfLife, memoryWeight, memoryIncoming)]))
                        }
                    }
                }
            }
        }
        try await Self.report("stage 3", grid)
    }

    /// Stage 4: three speeds, each taking over where the faster one has faded: a reply channel (minutes), a
    /// recency channel (a day) below it, and a memory (weeks) below that for conversations silent for longer.
    @Test func stage4ThreeSpeeds() async throws {
        var grid: [RankingPolicy] = []
        for replyIncoming in [16.0, 64] {
            for dayIncoming in [0.1, 0.3, 1] {
                grid.append(try Self.policy([(5 * Self.minute, 1, replyIncoming), (Self.day, 1e-20, dayIncoming)]))
                for memoryHalfLife in [14 * Self.day, 60 * Self.day] {
                    for memoryWeight in [1e-22, 1e-24, 1e-27] {
                        grid.append(
                            try Self.policy([
                                (5 * Self.minute, 1, replyIncoming), (Self.day, 1e-20, dayIncoming),
                                (memoryHalfLife, memoryWeight, 0.3),
                            ]))
                    }
                }
            }
        }
        try await Self.report("stage 4", grid)
    }

    /// Stage 5: the three speeds with a memory that takes over after days of silence (a product requirement: a
    /// regular contact stays suggested after a quiet week), varied around stage 4.
    @Test func stage5MemoryRequired() async throws {
        var grid: [RankingPolicy] = []
        for replyIncoming in [16.0, 64] {
            for dayIncoming in [0.1, 0.3, 1] {
                for memoryHalfLife in [30 * Self.day, 60 * Self.day] {
                    for memoryWeight in [1e-21, 1e-22] {
                        for memoryIncoming in [0.1, 0.3] {
                            grid.append(
                                try Self.policy([
                                    (5 * Self.minute, 1, replyIncoming), (Self.day, 1e-20, dayIncoming),
                                    (memoryHalfLife, memoryWeight, memoryIncoming),
                                ]))
                        }
                    }
                }
            }
        }
        try await Self.report("stage 5", grid)
    }

    /// Stage 6: a `latest` channel (recency by direction: only the latest donation counts) between the reply
    /// channel and the memory, and per-channel group weights. Part a varies what CollegeMsg can measure (no groups
    /// there) with the memory of stage 5 kept; part b varies the group weights, which only Enron can measure, with
    /// the one-to-one constants of part a's choice. Every candidate is printed with both histories.
    @Test func stage6LatestAndGroups() async throws {
        var grid: [RankingPolicy] = []
        let memory = Spec(halfLife: 30 * Self.day, weight: 1e-21, outgoing: 1, incoming: 0.1)
        for replyIncoming in [16.0, 64] {
            for halfLife in [12 * Self.hour, Self.day, 3 * Self.day] {
                // 2^-56 … 2^-64; 1e-19 ≈ 2^-63.1 (memory takes over after log2 100 ≈ 6.6 days of silence).
                for latestWeight in [0x1p-56, 0x1p-58, 0x1p-60, 0x1p-62, 1e-19, 0x1p-64] {
                    for outgoing in [0.5, 1] {
                        grid.append(
                            try Self.policy([
                                Spec(halfLife: 5 * Self.minute, weight: 1, outgoing: 1, incoming: replyIncoming),
                                Spec(halfLife: halfLife, weight: latestWeight, outgoing: outgoing, incoming: 1, latest: true),
                                memory,
                            ]))
                    }
                }
            }
        }
        for replyGroup in [1.0, 0x1p-6, 0x1p-12, 0] {
            for latestGroup in [1.0, 0] {
                for memoryGroup in [1.0, 4] {
                    grid.append(
                        try Self.policy([
                            Spec(halfLife: 5 * Self.minute, weight: 1, outgoing: 1, incoming: 64, group: replyGroup),
                            Spec(halfLife: Self.day, weight: 1e-19, outgoing: 0.5, incoming: 1, group: latestGroup, latest: true),
                            Spec(halfLife: 30 * Self.day, weight: 1e-21, outgoing: 1, incoming: 0.1, group: memoryGroup),
                        ]))
                }
            }
        }
        try await Self.report("stage 6", grid)
    }

    /// One channel of a tuning candidate.
    struct Spec {
        var halfLife: Double
        var weight: Double
        var outgoing: Double
        var incoming: Double
        var group = 1.0
        var latest = false
    }

    static func policy(_ channels: [Spec]) throws -> RankingPolicy {
        let name = channels.map { spec in
            "\(spec.latest ? "latest " : "")\(PolicyTuner.duration(spec.halfLife)) β\(spec.weight) out\(spec.outgoing) in\(spec.incoming)"
                + (spec.group == 1 ? "" : " g\(spec.group)")
        }.joined(separator: " + ")
        return .frecency(
            try FrecencyPolicy(
                channels: channels.enumerated().map { index, spec in
                    .init(
                        name: "c\(index)", halfLife: spec.halfLife, weight: spec.weight, outgoing: spec.outgoing,
                        incoming: spec.incoming, group: spec.group, aggregation: spec.latest ? .latest : .sum)
                }),
            name: name)
    }

    /// A policy of channels given as (half-life, weight, incoming), outgoing weighing 1.
    static func policy(_ channels: [(Double, Double, Double)]) throws -> RankingPolicy {
        let name = channels.map { "\(PolicyTuner.duration($0.0)) β\($0.1) in\($0.2)" }.joined(separator: " + ")
        return .frecency(
            try FrecencyPolicy(
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
