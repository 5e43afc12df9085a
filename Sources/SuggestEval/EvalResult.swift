/// What a replay measured for one policy: how often, and how high, the conversation a person went on to send to
/// was ranked just before they sent.
///
/// Counts are kept exactly; rates and the MRR are derived from them. `hitAt`, `mrr` and `coverage` are 0 when
/// nothing was evaluated. Ranks are exact down to `depth`; a deeper one is counted in `beyondDepth` and adds 0 to
/// the MRR (the MRR is then the usual MRR@depth, at most `mrrBound − mrr` below the exact one).
public struct EvalResult: Sendable, Equatable {
    /// The cut-offs `suggest eval` reports when `--k` is not given.
    public static let defaultCutoffs = [1, 3, 8]
    /// How many ranks `curve` covers: enough for a hit@k chart up to k = 20.
    public static let curveDepth = 20
    /// The depth `suggest eval` ranks to when `--depth` is not given.
    public static let defaultDepth = 100

    /// The policy's name.
    public var policy: String
    /// The cut-offs k of `hitAt`, ascending and distinct.
    public var cutoffs: [Int]
    /// Donations replayed, in every direction and account; a repeated identifier in an account is not counted.
    public var donations = 0
    /// Outgoing donations among them.
    public var outgoing = 0
    /// Outgoing donations to a conversation that had an earlier donation: the ones that were ranked.
    public var evaluated = 0
    /// Distinct accounts seen.
    public var accounts = 0
    /// Donations skipped because their identifier had already been donated in the same account.
    public var duplicates = 0
    /// Evaluated donations whose conversation had a score above zero (see `coverage`).
    public var covered = 0
    /// Evaluated donations ranked at or above each cut-off, in the order of `cutoffs`.
    public var hitCounts: [Int]
    /// Evaluated donations by rank: `rankCounts[r - 1]` ranked exactly r, for r up to `curveDepth`.
    public var rankCounts: [Int]
    /// `Σ 1/rank` over evaluated donations, with the compensation term of Neumaier's summation.
    public private(set) var reciprocalRankSum = 0.0
    private var reciprocalRankCompensation = 0.0
    /// The deepest rank known exactly; a rank of `depth + 1` stands for any deeper one.
    public var depth: Int
    /// Evaluated donations whose conversation ranked deeper than `depth`.
    public var beyondDepth = 0
    /// The same figures for each kind of target (`TargetKind.allCases`, in that order); empty for a result that
    /// is itself one kind's.
    public var byKind: [EvalResult] = []

    /// An empty result for `policy` at these cut-offs (ascending, distinct, each at least 1), to be filled with
    /// `record(rank:covered:)`: an `Evaluator` fills its own; one built here measures a ranking made elsewhere with
    /// the same figures, JSON and tables.
    /// - Parameters:
    ///   - policy: the name the figures carry.
    ///   - cutoffs: the k of hit@k.
    ///   - depth: the deepest exact rank; `Int.max` keeps every rank exact.
    ///   - kinds: whether to keep the figures of each kind of target too.
    public init(policy: String, cutoffs: [Int], depth: Int = .max, kinds: Bool = false) {
        self.policy = policy
        self.cutoffs = cutoffs
        self.depth = depth
        hitCounts = Array(repeating: 0, count: cutoffs.count)
        rankCounts = Array(repeating: 0, count: Self.curveDepth)
        if kinds { byKind = TargetKind.allCases.map { _ in EvalResult(policy: policy, cutoffs: cutoffs, depth: depth) } }
    }

    /// Counts one evaluated donation whose conversation ranked `rank` (1 = top; `depth + 1` = deeper than
    /// `depth`), in the figures of each kind it is of too.
    /// - Complexity: O(c) for c cut-offs.
    public mutating func record(rank: Int, covered isCovered: Bool, kinds: TargetKinds) {
        record(rank: rank, covered: isCovered)
        guard !byKind.isEmpty else { return }
        for (position, kind) in TargetKind.allCases.enumerated() where kinds.includes(kind) {
            byKind[position].record(rank: rank, covered: isCovered)
        }
    }

    /// The figures of one kind of target, when they are kept.
    public func result(for kind: TargetKind) -> EvalResult? {
        guard let position = TargetKind.allCases.firstIndex(of: kind), position < byKind.count else { return nil }
        return byKind[position]
    }

    /// Counts one evaluated donation whose conversation ranked `rank` (1 = top; `depth + 1` = deeper than
    /// `depth`).
    /// - Complexity: O(c) for c cut-offs.
    public mutating func record(rank: Int, covered isCovered: Bool) {
        evaluated += 1
        if isCovered { covered += 1 }
        for (position, cutoff) in cutoffs.enumerated() where rank <= cutoff { hitCounts[position] += 1 }
        if rank <= Self.curveDepth { rankCounts[rank - 1] += 1 }
        guard rank <= depth else {
            beyondDepth += 1
            return
        }
        // Neumaier's compensated sum: the MRR stays exact to the last digit over millions of terms.
        let term = 1 / Double(rank)
        let sum = reciprocalRankSum + term
        if abs(reciprocalRankSum) >= abs(term) {
            reciprocalRankCompensation += (reciprocalRankSum - sum) + term
        } else {
            reciprocalRankCompensation += (term - sum) + reciprocalRankSum
        }
        reciprocalRankSum = sum
    }

    /// Outgoing donations to a conversation with no earlier donation: not evaluated, since no ranking could
    /// have offered it.
    public var new: Int { outgoing - evaluated }

    /// The share of evaluated donations whose conversation ranked k or better; `nil` when k is neither a
    /// cut-off nor within `curveDepth`.
    public func hitAt(_ k: Int) -> Double? {
        let hits: Int
        if let position = cutoffs.firstIndex(of: k) {
            hits = hitCounts[position]
        } else if k >= 1, k <= Self.curveDepth {
            hits = rankCounts.prefix(k).reduce(0, +)
        } else {
            return nil
        }
        return rate(hits)
    }

    /// `(k, hit@k)` for each cut-off, in order.
    var hitRates: [(cutoff: Int, rate: Double)] {
        zip(cutoffs, hitCounts).map { ($0, rate($1)) }
    }

    /// hit@k for k = 1 … `curveDepth`.
    public var curve: [Double] {
        var hits = 0
        return rankCounts.map { count in
            hits += count
            return rate(hits)
        }
    }

    /// The mean reciprocal rank: the mean of 1/rank over evaluated donations, a rank deeper than `depth` counting
    /// 0 (MRR@depth; exact when `beyondDepth` is 0).
    public var mrr: Double { evaluated > 0 ? (reciprocalRankSum + reciprocalRankCompensation) / Double(evaluated) : 0 }

    /// The most the exact MRR can be: `mrr` with every rank deeper than `depth` counted as `depth + 1`. The exact
    /// MRR lies in `mrr...mrrBound`.
    public var mrrBound: Double {
        guard evaluated > 0, beyondDepth > 0 else { return mrr }
        return mrr + Double(beyondDepth) / (Double(depth) + 1) / Double(evaluated)
    }

    /// The share of evaluated donations for which the policy had evidence: the conversation's score was above
    /// zero, so the policy itself, not the tie-breakers alone, placed it. `recency` always has evidence; policies
    /// that count only outgoing donations have none for a conversation that only ever wrote to the person.
    public var coverage: Double { rate(covered) }

    private func rate(_ count: Int) -> Double { evaluated > 0 ? Double(count) / Double(evaluated) : 0 }
}
