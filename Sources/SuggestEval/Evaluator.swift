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
    /// How the conversations are ranked.
    public let policy: RankingPolicy
    /// Ascending, distinct, each at least 1.
    public let cutoffs: [Int]
    /// The deepest rank measured exactly.
    public let depth: Int
    /// The result so far.
    public private(set) var result: EvalResult
    /// The account (its position in the order accounts were first seen) and the kinds of the last evaluated
    /// donation, for comparing two policies donation by donation.
    private(set) var lastEvaluated: (account: Int, kinds: TargetKinds) = (0, [])
    /// Accounts, identifiers and latest incoming donations, for `consume(_:)`. A session books each donation once
    /// for all its policies and hands the admission to `consume(_:admitted:)`, leaving this one empty.
    private let book = AccountBook()
    /// Each account's ranking state under this policy, by the account's number.
    private var replays: [any AccountReplay] = []

    /// - Parameters:
    ///   - policy: how to rank.
    ///   - cutoffs: the k of hit@k; sorted and made distinct here.
    ///   - depth: ranks are exact down to this one; a deeper rank counts as `depth + 1` (`EvalResult`). At least
    ///     the largest cut-off and `EvalResult.curveDepth`; `Int.max` for exact ranks always, whatever they cost.
    /// - Throws: `InputError` when `cutoffs` is empty or holds a number below 1, or `depth` is too small.
    public init(policy: RankingPolicy, cutoffs: [Int] = EvalResult.defaultCutoffs, depth: Int = EvalResult.defaultDepth)
        throws(InputError)
    {
        let normalized = Array(Set(cutoffs)).sorted()
        guard let first = normalized.first, first >= 1, let last = normalized.last else {
            throw InputError(
                field: nil, message: "cut-offs must be whole numbers of at least 1, such as 1,3,8")
        }
        guard depth >= max(last, EvalResult.curveDepth) else {
            throw InputError(
                field: nil,
                message: "the depth (\(depth)) must be at least \(max(last, EvalResult.curveDepth)), the largest cut-off or the curve's 20")
        }
        self.policy = policy
        self.cutoffs = normalized
        self.depth = depth
        result = EvalResult(policy: policy.name, cutoffs: normalized, depth: depth, kinds: true)
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
        let distinct = Array(Set(cutoffs)).sorted()
        // Each cut-off is a column of every account's sums in every comparison: `--k` of 1,000 values took
        // CollegeMsg's replay from 90 MB to 425 MB and ten times as long.
        guard distinct.count <= maximumCutoffs else {
            throw InputError(
                field: nil,
                message: "\(distinct.count) cut-offs; give at most \(maximumCutoffs) (each costs memory for every "
                    + "account); --html draws hit@k for every k up to 20")
        }
        return distinct
    }

    /// The most distinct cut-offs `parseCutoffs` takes.
    public static let maximumCutoffs = 20

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
        try consume(donation, admitted: book.admit(donation))
    }

    /// Replays one donation that an `AccountBook` has booked (the session's, for every policy alike).
    @discardableResult
    func consume(_ donation: ReplayDonation, admitted admission: AccountBook.Admission) throws -> ReplayOutcome {
        let account = admission.account
        if admission.isNewAccount {
            replays.append(makeReplay())
            result.accounts += 1
        }
        if admission.isDuplicate {
            result.duplicates += 1
            return .duplicate
        }
        result.donations += 1
        let replay = replays[account]
        var outcome = ReplayOutcome.applied
        if donation.event.direction == .outgoing {
            result.outgoing += 1
            if let ranked = try replay.rank(of: donation.conversation, at: donation.event.date) {
                var kinds: TargetKinds = []
                if admission.answersLatestIncoming { kinds.insert(.reply) }
                if donation.event.date.seconds - ranked.lastDate.seconds >= TargetKinds.idleAfter { kinds.insert(.idle) }
                if donation.event.isGroup { kinds.insert(.group) }
                result.record(rank: ranked.rank, covered: ranked.covered, kinds: kinds)
                lastEvaluated = (account, kinds)
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
        case .frecency(let frecency): return FrecencyReplay(policy: frecency, depth: depth)
        case .learned(let learned): return LearnedReplay(policy: learned, depth: depth)
        case .recency: return RecencyReplay(depth: depth)
        case .frequency: return FrequencyReplay(depth: depth)
        case .zoxide: return ZoxideReplay(depth: depth)
        case .android: return SharesheetReplay(depth: depth)
        }
    }
}
