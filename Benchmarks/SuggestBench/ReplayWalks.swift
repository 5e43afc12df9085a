import SuggestCore
import SuggestEval

/// `suggest-bench replay --walks`: how far each exact-rank query of a replay walks, for the policies ranked by
/// `TopKRanker` (the decayed anchors, the fixed and the learned policy), in one process.
///
/// Donations are parsed up front, so the timed loop is the replay alone: per outgoing donation one depth-limited
/// rank (`InMemoryRankingIndex.rank(of:using:depth:witnesses:statistics:)`, each account's `DeepRankWitnesses`
/// carried from rank to rank as the replay carries them), then the donation applied. Prints, per policy, the time
/// per donation, the sorted and random accesses per query (mean, median, 99th percentile, maximum; the witnesses'
/// look-ups count as random accesses), the ranks deeper than the depth, and how many of those the witnesses
/// proved without a walk.
enum ReplayWalks {
    struct Donation {
        var account: String
        var conversation: String
        var event: ConversationState.Event
    }

    static func load(_ path: String) throws -> [Donation] {
        let lines = try LineStream(path: path)
        var donations: [Donation] = []
        while let line = try lines.nextLine() {
            guard !LineStream.isBlank(line) else { continue }
            let interaction = try Interaction(jsonBytes: line)
            donations.append(
                Donation(
                    account: interaction.account, conversation: interaction.conversationIdentifier,
                    event: ConversationState.Event(interaction)))
        }
        return donations
    }

    static func run(_ path: String, policies: [RankingPolicy], depth: Int) throws -> Int32 {
        Log.note("replay --walks: reading \(path)")
        let donations = try load(path)
        print("## replay walks: \(Format.count(donations.count)) donations of \(path), depth \(depth)")
        print("")
        print(
            "| policy | per donation | queries | sorted accesses mean / median / p99 / max | random accesses mean / median / p99 / max | beyond depth | proved by witnesses |"
        )
        print("|---|---|---|---|---|---|---|")
        var checksum = Checksum()
        for policy in policies {
            var sorted: [Int] = []
            var random: [Int] = []
            var beyond = 0
            var proved = 0
            var witnesses: [String: DeepRankWitnesses] = [:]
            var indexes: [String: InMemoryRankingIndex] = [:]
            var weights: [String: LearnedWeights] = [:]
            let learned = policy.learnedPolicy
            guard let base = learned?.base ?? policy.frecencyPolicy else {
                Log.note("replay --walks: \(policy.name) is not ranked by TopKRanker; skipped")
                continue
            }
            let elapsed = try MonotonicClock.time {
                for donation in donations {
                    let index: InMemoryRankingIndex
                    if let known = indexes[donation.account] {
                        index = known
                    } else {
                        index = InMemoryRankingIndex(policy: base)
                        indexes[donation.account] = index
                    }
                    let slot = index.slot(for: donation.conversation)
                    let before = index.states[Int(slot)]
                    if donation.event.direction == .outgoing, before.hasDonations {
                        let context = RankingContext(at: donation.event.date)
                        let scorer =
                            learned.map { learned in
                                Scorer(
                                    policy: base, context: context,
                                    channelOffsets: (weights[donation.account] ?? .empty).channelOffsets(
                                        at: context.at, policy: learned))
                            } ?? Scorer(policy: base, context: context)
                        var statistics = TopKRanker.Statistics()
                        if let rank = try index.rank(
                            of: slot, using: TopKRanker(scorer: scorer), depth: depth,
                            witnesses: &witnesses[donation.account, default: DeepRankWitnesses()],
                            statistics: &statistics)?.rank
                        {
                            if rank > depth { beyond += 1 }
                            // A walk reads each list's head at least: none read, in an account large enough to be
                            // walked rather than scanned, means the witnesses proved it.
                            if rank > depth && statistics.sortedAccesses == 0 && index.count > TopKRanker.scanLimit {
                                proved += 1
                            }
                            checksum.add(UInt64(rank))
                        }
                        sorted.append(statistics.sortedAccesses)
                        random.append(statistics.randomAccesses)
                    }
                    index.apply(donation.event, to: slot)
                    if let learned {
                        weights[donation.account, default: .empty].record(
                            donation.event, before: before, after: index.states[Int(slot)], policy: learned)
                    }
                }
            }
            print(
                "| \(policy.name) | \(Format.duration(elapsed.nanoseconds / Double(donations.count))) | "
                    + "\(Format.count(sorted.count)) | \(describe(sorted)) | \(describe(random)) | \(Format.count(beyond)) | \(Format.count(proved)) |"
            )
        }
        print("")
        print("checksum \(checksum.hex)")
        return 0
    }

    /// `mean / median / p99 / max` of counts.
    static func describe(_ counts: [Int]) -> String {
        guard !counts.isEmpty else { return "-" }
        let sorted = counts.sorted()
        let mean = Double(sorted.reduce(0, +)) / Double(sorted.count)
        let p99 = sorted[min(sorted.count - 1, sorted.count * 99 / 100)]
        return "\(Format.fixed(mean, 1)) / \(sorted[sorted.count / 2]) / \(p99) / \(sorted[sorted.count - 1])"
    }
}
