/// Two policies ranked on the same sends, side by side: the mean difference of hit@k and of the reciprocal rank
/// (`policy` minus `baseline`), with a 95% confidence interval, overall and for each kind of target.
///
/// The sends of one account are not independent (one person, one habit), so with enough accounts (at least
/// `minimumClusters`) the standard error is clustered by account: the variance of the accounts' sums of
/// differences, scaled by `G / (G − 1)` for G accounts (the usual sandwich estimator). With fewer accounts it is
/// taken over sends, which understates it when an account's sends move together. The interval is the mean ± 1.96
/// standard errors. For hit@k it also keeps the discordant pairs (McNemar's counts): the sends only one of the two
/// has in its first k.
public struct PairedComparison: Sendable, Equatable {
    /// The policy whose figures are compared.
    public let policy: String
    /// The policy it is compared with.
    public let baseline: String
    /// The cut-offs of hit@k.
    public let cutoffs: [Int]
    /// With this many accounts or more, standard errors are clustered by account.
    public static let minimumClusters = 20

    /// The sums for one account and one kind (or all kinds).
    struct Sums: Sendable, Equatable {
        var count = 0
        var reciprocal = 0.0
        var hits: [Int]
        var onlyPolicy: [Int]
        var onlyBaseline: [Int]

        init(cutoffs: Int) {
            hits = Array(repeating: 0, count: cutoffs)
            onlyPolicy = hits
            onlyBaseline = hits
        }
    }

    /// Per account, per kind (`all` first, then `TargetKind.allCases`).
    private var accounts: [[Sums]] = []
    /// Sums of squared differences over sends, per kind: `[kind][0]` for the reciprocal rank, then one per cut-off.
    private var squares: [[Double]]

    /// An empty comparison, to be filled with `add(account:kinds:policyRank:baselineRank:depth:)`: `EvalSession`
    /// fills its own; one built here compares rankings made elsewhere with the same figures.
    public init(policy: String, baseline: String, cutoffs: [Int]) {
        self.policy = policy
        self.baseline = baseline
        self.cutoffs = cutoffs
        squares = Array(repeating: Array(repeating: 0, count: cutoffs.count + 1), count: TargetKind.allCases.count + 1)
    }

    /// Counts one send both policies ranked, in account `account` (dense, from 0), of kinds `kinds`; ranks as
    /// `EvalResult.record` takes them (`depth + 1` for deeper), `depth` the replay's.
    public mutating func add(account: Int, kinds: TargetKinds, policyRank: Int, baselineRank: Int, depth: Int) {
        while accounts.count <= account {
            accounts.append(Array(repeating: Sums(cutoffs: cutoffs.count), count: TargetKind.allCases.count + 1))
        }
        let reciprocal =
            (policyRank <= depth ? 1 / Double(policyRank) : 0) - (baselineRank <= depth ? 1 / Double(baselineRank) : 0)
        for (slot, kind) in ([nil] + TargetKind.allCases.map(Optional.some)).enumerated() {
            if let kind, !kinds.includes(kind) { continue }
            accounts[account][slot].count += 1
            accounts[account][slot].reciprocal += reciprocal
            squares[slot][0] += reciprocal * reciprocal
            for (position, cutoff) in cutoffs.enumerated() {
                let policyHit = policyRank <= cutoff
                let baselineHit = baselineRank <= cutoff
                guard policyHit != baselineHit else { continue }
                if policyHit {
                    accounts[account][slot].hits[position] += 1
                    accounts[account][slot].onlyPolicy[position] += 1
                } else {
                    accounts[account][slot].hits[position] -= 1
                    accounts[account][slot].onlyBaseline[position] += 1
                }
                squares[slot][position + 1] += 1
            }
        }
    }

    /// A mean difference and its 95% confidence interval.
    public struct Difference: Sendable, Equatable {
        /// `policy − baseline`, averaged over the sends.
        public var mean: Double
        /// The standard error of `mean`.
        public var standardError: Double

        /// A difference and its standard error.
        public init(mean: Double, standardError: Double) {
            self.mean = mean
            self.standardError = standardError
        }
        /// `mean − 1.96 · standardError`, no lower than −1: a difference of hits or of reciprocal ranks never is.
        public var low: Double { max(-1, mean - 1.96 * standardError) }
        /// `mean + 1.96 · standardError`, no higher than 1.
        public var high: Double { min(1, mean + 1.96 * standardError) }
        /// Whether the interval leaves out 0: the difference is significant at 5%.
        public var isSignificant: Bool { low > 0 || high < 0 }
    }

    /// How many sends were compared, of `kind` or of every kind.
    /// - Complexity: O(a) for a accounts, as every figure of a comparison.
    public func pairs(kind: TargetKind? = nil) -> Int {
        accounts.reduce(0) { $0 + $1[slot(kind)].count }
    }

    /// How many accounts had a send of `kind` compared.
    public func accountCount(kind: TargetKind? = nil) -> Int {
        accounts.filter { $0[slot(kind)].count > 0 }.count
    }

    /// Whether the standard errors of `kind` are clustered by account (enough accounts) or taken over sends.
    public func isClustered(kind: TargetKind? = nil) -> Bool { accountCount(kind: kind) >= Self.minimumClusters }

    /// The difference of the reciprocal ranks (the MRR's difference).
    public func mrrDifference(kind: TargetKind? = nil) -> Difference {
        difference(kind: kind, column: 0) { $0.reciprocal }
    }

    /// The difference of hit@k, for one of the cut-offs; `nil` for another k.
    public func hitDifference(_ k: Int, kind: TargetKind? = nil) -> Difference? {
        guard let position = cutoffs.firstIndex(of: k) else { return nil }
        return difference(kind: kind, column: position + 1) { Double($0.hits[position]) }
    }

    /// McNemar's counts for one cut-off k: the sends that only one of the two policies has in its first k.
    public struct Discordance: Sendable, Hashable {
        /// Sends in the policy's first k and not in the baseline's.
        public var onlyPolicy: Int
        /// Sends in the baseline's first k and not in the policy's.
        public var onlyBaseline: Int
    }

    /// McNemar's counts for hit@k, of `kind` or of every kind; `nil` when k is not one of the cut-offs.
    /// - Complexity: O(a) for a accounts.
    public func discordant(_ k: Int, kind: TargetKind? = nil) -> Discordance? {
        guard let position = cutoffs.firstIndex(of: k) else { return nil }
        let index = slot(kind)
        return accounts.reduce(Discordance(onlyPolicy: 0, onlyBaseline: 0)) {
            Discordance(
                onlyPolicy: $0.onlyPolicy + $1[index].onlyPolicy[position],
                onlyBaseline: $0.onlyBaseline + $1[index].onlyBaseline[position])
        }
    }

    private func slot(_ kind: TargetKind?) -> Int {
        guard let kind, let position = TargetKind.allCases.firstIndex(of: kind) else { return 0 }
        return position + 1
    }

    private func difference(kind: TargetKind?, column: Int, sum: (Sums) -> Double) -> Difference {
        let index = slot(kind)
        let count = Double(pairs(kind: kind))
        guard count > 0 else { return Difference(mean: 0, standardError: 0) }
        let total = accounts.reduce(0.0) { $0 + sum($1[index]) }
        let mean = total / count
        // One send gives no spread to estimate: its interval is every possible difference, never significant (a
        // single group send read "+0.6667 (+0.6667 … +0.6667) *"; found by a probe).
        guard count > 1 else { return Difference(mean: mean, standardError: 2) }
        var variance: Double
        if isClustered(kind: kind) {
            var spread = 0.0
            var clusters = 0.0
            for account in accounts where account[index].count > 0 {
                let deviation = sum(account[index]) - Double(account[index].count) * mean
                spread += deviation * deviation
                clusters += 1
            }
            variance = spread / (count * count) * clusters / (clusters - 1)
        } else {
            // Over sends: (Σd² − n·mean²) / (n − 1), divided by n.
            variance = count > 1 ? max(0, squares[index][column] - count * mean * mean) / (count - 1) / count : 0
        }
        if !variance.isFinite { variance = 0 }
        return Difference(mean: mean, standardError: variance.squareRoot())
    }
}
