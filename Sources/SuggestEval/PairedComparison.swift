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

    /// The kinds sums are kept for: every kind together first, then `TargetKind.allCases`.
    private static let kindSlots = TargetKind.allCases.count + 1

    /// Each account's row of sums, by the account's dense number; -1 for an account with no send compared yet. Rows
    /// are made at an account's first compared send, so that a history of many accounts pays only for those the
    /// comparison met (a row of arrays for every account took `eval --policy all` to 7 GB on 500,000 accounts).
    private var rowOfAccount: [Int32] = []
    /// Per row and kind: the sends compared, and the sum of their differences of reciprocal rank.
    private var counts: [Int] = []
    private var reciprocals: [Double] = []
    /// Per row, kind and cut-off: the sends in the policy's first k less those in the baseline's.
    private var hitDifferences: [Int] = []
    /// Per kind and cut-off, over every account: McNemar's counts.
    private var onlyPolicy: [Int]
    private var onlyBaseline: [Int]
    /// Sums of squared differences over sends, per kind: `[kind][0]` for the reciprocal rank, then one per cut-off.
    private var squares: [[Double]]

    /// An empty comparison, to be filled with `add(account:kinds:policyRank:baselineRank:depth:)`: `EvalSession`
    /// fills its own; one built here compares rankings made elsewhere with the same figures.
    public init(policy: String, baseline: String, cutoffs: [Int]) {
        self.policy = policy
        self.baseline = baseline
        self.cutoffs = cutoffs
        squares = Array(repeating: Array(repeating: 0, count: cutoffs.count + 1), count: Self.kindSlots)
        onlyPolicy = Array(repeating: 0, count: Self.kindSlots * cutoffs.count)
        onlyBaseline = onlyPolicy
    }

    /// Counts one send both policies ranked, in account `account` (dense, from 0), of kinds `kinds`; ranks as
    /// `EvalResult.record` takes them (`depth + 1` for deeper), `depth` the replay's.
    public mutating func add(account: Int, kinds: TargetKinds, policyRank: Int, baselineRank: Int, depth: Int) {
        let row = row(of: account)
        let reciprocal =
            (policyRank <= depth ? 1 / Double(policyRank) : 0) - (baselineRank <= depth ? 1 / Double(baselineRank) : 0)
        for (slot, kind) in ([nil] + TargetKind.allCases.map(Optional.some)).enumerated() {
            if let kind, !kinds.includes(kind) { continue }
            let cell = row * Self.kindSlots + slot
            counts[cell] += 1
            reciprocals[cell] += reciprocal
            squares[slot][0] += reciprocal * reciprocal
            for (position, cutoff) in cutoffs.enumerated() {
                let policyHit = policyRank <= cutoff
                let baselineHit = baselineRank <= cutoff
                guard policyHit != baselineHit else { continue }
                if policyHit {
                    hitDifferences[cell * cutoffs.count + position] += 1
                    onlyPolicy[slot * cutoffs.count + position] += 1
                } else {
                    hitDifferences[cell * cutoffs.count + position] -= 1
                    onlyBaseline[slot * cutoffs.count + position] += 1
                }
                squares[slot][position + 1] += 1
            }
        }
    }

    /// The account's row of sums, made empty at its first compared send.
    private mutating func row(of account: Int) -> Int {
        if account >= rowOfAccount.count {
            rowOfAccount.append(contentsOf: repeatElement(-1, count: account + 1 - rowOfAccount.count))
        }
        if rowOfAccount[account] >= 0 { return Int(rowOfAccount[account]) }
        let row = counts.count / Self.kindSlots
        rowOfAccount[account] = Int32(row)
        counts.append(contentsOf: repeatElement(0, count: Self.kindSlots))
        reciprocals.append(contentsOf: repeatElement(0, count: Self.kindSlots))
        hitDifferences.append(contentsOf: repeatElement(0, count: Self.kindSlots * cutoffs.count))
        return row
    }

    /// How many rows (accounts with a compared send) there are.
    var rowCount: Int { counts.count / Self.kindSlots }

    /// A mean difference and its 95% confidence interval.
    public struct Difference: Sendable, Equatable {
        /// `policy − baseline`, averaged over the sends.
        public var mean: Double
        /// The standard error of `mean`.
        public var standardError: Double
        /// How many standard errors the interval spans on each side: 1.96, the normal's 97.5% point, or Student's
        /// t for fewer degrees of freedom than `PairedComparison.largeSample`.
        public var criticalValue: Double

        /// A difference and its standard error.
        public init(mean: Double, standardError: Double, criticalValue: Double = 1.96) {
            self.mean = mean
            self.standardError = standardError
            self.criticalValue = criticalValue
        }
        /// `mean − criticalValue · standardError`, no lower than −1: a difference of hits or of reciprocal ranks
        /// never is.
        public var low: Double { max(-1, mean - criticalValue * standardError) }
        /// `mean + criticalValue · standardError`, no higher than 1.
        public var high: Double { min(1, mean + criticalValue * standardError) }
        /// Whether the interval leaves out 0: the difference is significant at 5%.
        public var isSignificant: Bool { low > 0 || high < 0 }
    }

    /// How many sends were compared, of `kind` or of every kind.
    /// - Complexity: O(a) for a accounts, as every figure of a comparison.
    public func pairs(kind: TargetKind? = nil) -> Int {
        let index = slot(kind)
        return (0..<rowCount).reduce(0) { $0 + counts[$1 * Self.kindSlots + index] }
    }

    /// How many accounts had a send of `kind` compared.
    public func accountCount(kind: TargetKind? = nil) -> Int {
        let index = slot(kind)
        return (0..<rowCount).filter { counts[$0 * Self.kindSlots + index] > 0 }.count
    }

    /// Whether the standard errors of `kind` are clustered by account (enough accounts) or taken over sends.
    public func isClustered(kind: TargetKind? = nil) -> Bool { accountCount(kind: kind) >= Self.minimumClusters }

    /// The difference of the reciprocal ranks (the MRR's difference).
    public func mrrDifference(kind: TargetKind? = nil) -> Difference {
        difference(kind: kind, column: 0) { reciprocals[$0] }
    }

    /// The difference of hit@k, for one of the cut-offs; `nil` for another k.
    public func hitDifference(_ k: Int, kind: TargetKind? = nil) -> Difference? {
        guard let position = cutoffs.firstIndex(of: k) else { return nil }
        return difference(kind: kind, column: position + 1) { Double(hitDifferences[$0 * cutoffs.count + position]) }
    }

    /// McNemar's counts for one cut-off k: the sends that only one of the two policies has in its first k.
    public struct Discordance: Sendable, Hashable {
        /// Sends in the policy's first k and not in the baseline's.
        public var onlyPolicy: Int
        /// Sends in the baseline's first k and not in the policy's.
        public var onlyBaseline: Int
    }

    /// McNemar's counts for hit@k, of `kind` or of every kind; `nil` when k is not one of the cut-offs.
    public func discordant(_ k: Int, kind: TargetKind? = nil) -> Discordance? {
        guard let position = cutoffs.firstIndex(of: k) else { return nil }
        let cell = slot(kind) * cutoffs.count + position
        return Discordance(onlyPolicy: onlyPolicy[cell], onlyBaseline: onlyBaseline[cell])
    }

    private func slot(_ kind: TargetKind?) -> Int {
        guard let kind, let position = TargetKind.allCases.firstIndex(of: kind) else { return 0 }
        return position + 1
    }

    /// From this many degrees of freedom on, the interval is the normal's (1.96 standard errors); below, Student's
    /// t's: 2 sends 12.7, 10 sends 2.26.
    public static let largeSample = 30

    /// Student's t at 97.5% for 1 to 29 degrees of freedom.
    private static let studentT: [Double] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
        2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045,
    ]

    /// The fewest sends (or accounts) that, all differing the same way, a sign test finds significant at 5%.
    static let leastUnanimous = 6

    /// The interval's half-width in standard errors for `degreesOfFreedom`.
    static func criticalValue(degreesOfFreedom: Int) -> Double {
        guard degreesOfFreedom < largeSample else { return 1.96 }
        return studentT[max(1, degreesOfFreedom) - 1]
    }

    /// - Parameter sum: an account's sum of differences for one kind, by its cell (row × kinds + kind).
    private func difference(kind: TargetKind?, column: Int, sum: (Int) -> Double) -> Difference {
        let index = slot(kind)
        let count = Double(pairs(kind: kind))
        guard count > 0 else { return Difference(mean: 0, standardError: 0) }
        // In the accounts' order, as the sums always were taken: the same bits whatever order rows were made in.
        let cells = rowOfAccount.filter { $0 >= 0 }.map { Int($0) * Self.kindSlots + index }
        let total = cells.reduce(0.0) { $0 + sum($1) }
        let mean = total / count
        // One send gives no spread to estimate: its interval is every possible difference, never significant (not
        // "+0.6667 (+0.6667 … +0.6667) *" for a single group send).
        guard count > 1 else { return Difference(mean: mean, standardError: 2) }
        var variance: Double
        let degreesOfFreedom: Int
        if isClustered(kind: kind) {
            var spread = 0.0
            var clusters = 0.0
            for cell in cells where counts[cell] > 0 {
                let deviation = sum(cell) - Double(counts[cell]) * mean
                spread += deviation * deviation
                clusters += 1
            }
            variance = spread / (count * count) * clusters / (clusters - 1)
            degreesOfFreedom = Int(clusters) - 1
        } else {
            // Over sends: (Σd² − n·mean²) / (n − 1), divided by n.
            variance = count > 1 ? max(0, squares[index][column] - count * mean * mean) / (count - 1) / count : 0
            degreesOfFreedom = Int(count) - 1
        }
        if !variance.isFinite { variance = 0 }
        // Sends (or accounts) that all differ by the same nonzero amount show no spread to estimate. Too few of them
        // to be significant by a sign test (2 · 2⁻ⁿ ≥ 5% below 6) get the whole range, as a single send: a
        // zero-width interval marked two sends significant ("+1.0000 (+1.0000 … +1.0000) *").
        // Alike to rounding: Σd² − n·mean² of three sends of 2/3 is 3.7e-17, not 0.
        let noSpread = variance <= 1e-12 * mean * mean
        guard !noSpread || mean == 0 || degreesOfFreedom + 1 >= Self.leastUnanimous else {
            return Difference(mean: mean, standardError: 2)
        }
        return Difference(
            mean: mean, standardError: variance.squareRoot(),
            criticalValue: Self.criticalValue(degreesOfFreedom: degreesOfFreedom))
    }
}
