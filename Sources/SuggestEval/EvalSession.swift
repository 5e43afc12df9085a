import Dispatch
import SuggestCore

/// Several policies replayed on one history at once, and some of them compared send by send: what
/// `suggest eval` runs. Each policy has its own `Evaluator`; for each comparison `(policy, baseline)`, every
/// send both ranked goes into a `PairedComparison`.
///
///     let policies = RankingPolicy.all
///     let pairs = EvalSession.pairs(names: policies.map(\.name), baseline: "recency") ?? []
///     let session = try EvalSession(policies: policies, pairs: pairs)
///     try session.consumeJSONLines(from: .file("college.jsonl"))
///     print(session.comparisons[0].mrrDifference())
///
/// Not `Sendable`; one owner at a time.
public final class EvalSession {
    /// One evaluator per policy, in the order given. Not public: they replay what the session books for them
    /// (`AccountBook`), and one fed directly would number its accounts afresh, so that one account's conversations
    /// could be ranked as another's; `results` gives their figures.
    let evaluators: [Evaluator]
    /// One comparison per pair, in the order `pairs` lists them.
    public private(set) var comparisons: [PairedComparison]
    /// The pairs compared, as indexes into `evaluators`.
    public let pairs: [Pair]
    /// Accounts, identifiers and latest incoming donations, booked once for every policy.
    private let book = AccountBook()

    /// Two of the session's policies compared send by send.
    public struct Pair: Sendable, Hashable {
        /// The index of the policy whose figures are compared.
        public var policy: Int
        /// The index of the policy it is compared with.
        public var baseline: Int

        /// `policy` against `baseline`, both indexes into the session's policies.
        public init(policy: Int, baseline: Int) {
            self.policy = policy
            self.baseline = baseline
        }
    }

    /// - Parameters:
    ///   - policies: the policies to replay; names must be distinct.
    ///   - pairs: which to compare, as indexes into `policies`; each must be one.
    ///   - cutoffs: the k of hit@k, as `Evaluator` takes them.
    ///   - depth: the deepest exact rank, as `Evaluator` takes it.
    /// - Throws: `InputError` for invalid cut-offs or depth, or a pair that is not two indexes into `policies`.
    public init(
        policies: [RankingPolicy], pairs: [Pair] = [],
        cutoffs: [Int] = EvalResult.defaultCutoffs,
        depth: Int = EvalResult.defaultDepth
    ) throws(InputError) {
        for pair in pairs where !policies.indices.contains(pair.policy) || !policies.indices.contains(pair.baseline) {
            throw InputError(
                field: nil,
                message: "the pair (\(pair.policy), \(pair.baseline)) does not name two of the "
                    + "\(policies.count) policies; give indexes from 0 to \(policies.count - 1)")
        }
        var evaluators: [Evaluator] = []
        for policy in policies { evaluators.append(try Evaluator(policy: policy, cutoffs: cutoffs, depth: depth)) }
        self.evaluators = evaluators
        self.pairs = pairs
        comparisons = pairs.map { pair in
            PairedComparison(
                policy: policies[pair.policy].name, baseline: policies[pair.baseline].name,
                cutoffs: evaluators.first?.cutoffs ?? cutoffs)
        }
    }

    /// The pairs `suggest eval` compares: with `baseline`, every other policy against it; without, the first
    /// policy against every other (so `--policy all` compares `default` with each anchor).
    /// - Returns: `nil` when `baseline` is not one of `names`.
    public static func pairs(names: [String], baseline: String?) -> [Pair]? {
        if let baseline {
            guard let base = names.firstIndex(of: baseline) else { return nil }
            return names.indices.filter { $0 != base }.map { Pair(policy: $0, baseline: base) }
        }
        return names.indices.dropFirst().map { Pair(policy: 0, baseline: $0) }
    }

    /// The results so far, one per policy.
    public var results: [EvalResult] { evaluators.map(\.result) }

    /// Replays one donation under every policy, then counts the sends that every compared pair ranked.
    /// - Throws: only what the ranking sources throw; the in-memory sources do not.
    public func consume(_ interaction: Interaction) throws { try consume(ReplayDonation(interaction)) }

    func consume(_ donation: ReplayDonation) throws {
        var outcomes: [ReplayOutcome] = []
        outcomes.reserveCapacity(evaluators.count)
        let admission = book.admit(donation)
        for evaluator in evaluators { outcomes.append(try evaluator.consume(donation, admitted: admission)) }
        for (position, pair) in pairs.enumerated() {
            guard case .ranked(let policyRank, _) = outcomes[pair.policy],
                case .ranked(let baselineRank, _) = outcomes[pair.baseline]
            else { continue }
            let evaluated = evaluators[pair.policy].lastEvaluated
            comparisons[position].add(
                account: evaluated.account, kinds: evaluated.kinds, policyRank: policyRank, baselineRank: baselineRank,
                depth: evaluators[pair.policy].depth)
        }
    }

    /// Replays a JSON Lines source with two cores, as `Evaluator.evaluatePipelined` does: a second thread reads
    /// and parses the next batches of lines while this one replays, in bounded memory.
    /// - Throws: `FileError` when the source cannot be read; `InputError` with the line number for the first line
    ///   that is not a valid donation or is longer than the line limit (the session then holds the lines before
    ///   it).
    public func consumeJSONLines(from source: LineReader.Source) throws {
        try Evaluator.forEachDonationPipelined(in: source) { try consume($0) }
    }
}
