import SuggestCore

/// Replay evaluation, as `suggest eval` defines it: donations are applied in the order given, per account, and at
/// each outgoing donation the account's conversations that already have a donation are ranked as of its date,
/// from earlier donations only, before it is applied.
///
/// Equal scores rank the conversation with the more recent donation (either direction) first, then the smaller
/// `conversationIdentifier` byte-wise: the order `suggest list` uses. A donation whose identifier was already
/// donated in its account is skipped, as the store would skip it.
///
/// A class, not a struct: each account's replay state is an `InMemoryRankingIndex`, which is a reference type, so
/// a copy could not be independent. Not `Sendable`; one owner at a time.
///
///     let evaluator = try Evaluator(policy: try RankingPolicy.named("default"))
///     for interaction in history { try evaluator.consume(interaction) }
///     print(evaluator.result.mrr)
public final class Evaluator {
    public let policy: RankingPolicy
    /// Ascending, distinct, each at least 1.
    public let cutoffs: [Int]
    /// The result so far.
    public private(set) var result: EvalResult
    private var accountSlots: [String: Int] = [:]
    private var replays: [any AccountReplay] = []
    private var donatedIdentifiers: [IdentifierSet] = []

    /// - Parameters:
    ///   - policy: how to rank.
    ///   - cutoffs: the k of hit@k; sorted and made distinct here. The largest is the depth of each top-K query.
    /// - Throws: `InputError` when `cutoffs` is empty or holds a number below 1.
    public init(policy: RankingPolicy, cutoffs: [Int] = EvalResult.defaultCutoffs) throws(InputError) {
        let normalized = Array(Set(cutoffs)).sorted()
        guard let first = normalized.first, first >= 1 else {
            throw InputError(
                field: nil, message: "cut-offs must be whole numbers of at least 1, such as 1,3,8")
        }
        self.policy = policy
        self.cutoffs = normalized
        result = EvalResult(policy: policy.name, cutoffs: normalized)
    }

    /// Parses cut-offs written as `--k` takes them: whole numbers separated by commas (`1,3,8`).
    /// - Throws: `InputError` naming the part that is not a whole number of at least 1.
    public static func parseCutoffs(_ text: String) throws(InputError) -> [Int] {
        var cutoffs: [Int] = []
        for part in text.split(separator: ",", omittingEmptySubsequences: false) {
            let trimmed = part.trimmingPrefix(while: { $0 == " " })
            guard let value = Int(trimmed), value >= 1 else {
                throw InputError(
                    field: nil,
                    message: "cut-off \"\(part.prefix(20))\" is not a whole number of at least 1; write them like 1,3,8")
            }
            cutoffs.append(value)
        }
        return Array(Set(cutoffs)).sorted()
    }

    /// Replays one donation: ranks its conversation first when it is outgoing, then applies it.
    /// - Returns: what happened to it, with the rank when it was evaluated.
    /// - Throws: only what the ranking source throws; the in-memory source does not.
    /// - Complexity: O(1) for a donation that is not outgoing; for an outgoing one, one top-K query (and, when the
    ///   conversation is outside the top K, a walk over the conversations that could rank before it) for a
    ///   decayed policy, or O(n) over the account's n conversations for the other anchors.
    @discardableResult
    public func consume(_ interaction: Interaction) throws -> ReplayOutcome {
        try consume(ReplayDonation(interaction))
    }

    @discardableResult
    func consume(_ donation: ReplayDonation) throws -> ReplayOutcome {
        let account: Int
        if let known = accountSlots[donation.account] {
            account = known
        } else {
            account = replays.count
            accountSlots[donation.account] = account
            replays.append(makeReplay())
            donatedIdentifiers.append(IdentifierSet())
            result.accounts += 1
        }
        if let identifier = donation.identifier, !donatedIdentifiers[account].insert(identifier) {
            result.duplicates += 1
            return .duplicate
        }
        result.donations += 1
        let replay = replays[account]
        var outcome = ReplayOutcome.applied
        if donation.event.direction == .outgoing {
            result.outgoing += 1
            if let ranked = try replay.rank(of: donation.conversation, at: donation.event.date) {
                result.record(rank: ranked.rank, covered: ranked.covered)
                outcome = .ranked(rank: ranked.rank, covered: ranked.covered)
            } else {
                outcome = .new
            }
        }
        replay.apply(donation)
        return outcome
    }

    private func makeReplay() -> any AccountReplay {
        switch policy.rule {
        case .frecency(let frecency): return FrecencyReplay(policy: frecency)
        case .recency: return AnchorReplay(rule: .recency)
        case .frequency: return AnchorReplay(rule: .frequency)
        case .zoxide: return AnchorReplay(rule: .zoxide)
        case .android: return AnchorReplay(rule: .android)
        }
    }
}
