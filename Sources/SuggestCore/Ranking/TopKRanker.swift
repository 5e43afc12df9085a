/// Finds the exact top K conversations without scoring every one: Fagin's threshold algorithm over one sorted
/// list per decay channel, with random access for the exact score.
///
/// A blend of several half-lives changes order as time passes, so no single stored order is right at every
/// moment; each channel's own order is (its key `A_m` is time-invariant). The walk goes down the lists best first,
/// always advancing the list whose next key could still add the most, scores each new conversation exactly, and
/// stops once the K-th best score is strictly above the threshold, the most an unseen conversation could score.
/// Because the stop is strict, an unseen conversation can neither beat nor tie the K-th, so ties are broken
/// exactly as the brute-force ranking breaks them. Conversations with people of the context are scored up front:
/// their term comes from a look-up, not from a sorted list.
public struct TopKRanker {
    public let scorer: Scorer

    public init(policy: FrecencyPolicy, context: RankingContext, tree: UniformTypeTree = .standard) {
        scorer = Scorer(policy: policy, context: context, tree: tree)
    }

    /// A ranker that scores with `scorer`: for channel weights of the query's own, such as an account's learned
    /// weights (`Scorer.init(policy:context:channelWeights:tree:)`).
    public init(scorer: Scorer) {
        self.scorer = scorer
    }

    /// Statistics of one query, for benchmarks.
    public struct Statistics: Sendable, Equatable {
        public var sortedAccesses = 0
        public var randomAccesses = 0
        public init() {}
    }

    /// The top `context.limit` conversations in rank order.
    /// - Complexity: O((s + r) log K) for s sorted and r random accesses; on real histories s and r stay small
    ///   and do not grow with the length of the history.
    public func top(in source: some RankingSource, explain: Bool = false) throws -> [RankedConversation] {
        var statistics = Statistics()
        return try top(in: source, explain: explain, statistics: &statistics)
    }

    public func top(
        in source: some RankingSource, explain: Bool = false, statistics: inout Statistics
    ) throws -> [RankedConversation] {
        let limit = scorer.context.limit
        guard limit > 0 else { return [] }
        var best = BoundedRanking(capacity: limit)
        var seen = Self.seenTable()
        for (reference, count) in try peopleMatches(in: source).sorted(by: { $0.key < $1.key }) {
            seen.set(1, for: reference)
            statistics.randomAccesses += 1
            if let ranked = try rank(reference, in: source, matchedPeople: count, explain: explain) { best.insert(ranked) }
        }
        try walk(source, seen: &seen, statistics: &statistics) { threshold in
            best.isFull && (best.last.map { $0.logScore > threshold } ?? false)
        } visit: { reference in
            if let ranked = try rank(reference, in: source, matchedPeople: 0, explain: explain) { best.insert(ranked) }
        }
        return best.elements
    }

    /// The exact rank (1 = first) of one conversation among those the context admits, and its ranked form; `nil`
    /// when the context does not admit it. Replay evaluation asks this at every outgoing donation.
    ///
    /// A small source is scanned: scoring a few dozen conversations costs less than opening the sorted lists.
    /// A larger one is walked only as far as a conversation could still rank before the target, and never past
    /// `depth` conversations that do: a rank of `depth + 1` means "deeper than `depth`", so that the cost of a
    /// target in the tail of a large account stays bounded by the depth instead of growing with its rank.
    /// - Parameter depth: the deepest rank reported exactly (at least 1); `Int.max` for the exact rank always.
    /// - Complexity: O(n) for n ≤ `scanLimit` conversations; otherwise like `countRankingBefore`.
    public func rank(of reference: Int64, in source: some RankingSource, depth: Int = .max) throws -> (Int, RankedConversation)? {
        var statistics = Statistics()
        return try rank(of: reference, in: source, depth: depth, statistics: &statistics)
    }

    /// `rank(of:in:depth:)`, counting the walk's accesses into `statistics` (a scan counts none), for benchmarks.
    public func rank(of reference: Int64, in source: some RankingSource, depth: Int = .max, statistics: inout Statistics)
        throws -> (Int, RankedConversation)?
    {
        precondition(depth >= 1, "a depth of at least 1")
        guard let target = try rank(reference, in: source, matchedPeople: 0, explain: false) else { return nil }
        guard try source.conversationCount() <= Self.scanLimit else {
            return (try countRankingBefore(target, in: source, limit: depth, statistics: &statistics) + 1, target)
        }
        var before = 0
        for other in try source.allReferences() where other != reference {
            if let ranked = try rank(other, in: source, matchedPeople: 0, explain: false),
                RankedConversation.ranksBefore(ranked, target)
            {
                before += 1
            }
        }
        return (min(before, depth) + 1, target)
    }

    /// Up to this many conversations, `rank(of:in:)` scans rather than walks (measured on CollegeMsg replay).
    public static let scanLimit = 64

    /// How many admitted conversations rank before `target` (so its rank is this plus one), walking the sorted
    /// lists only as far as a conversation could still beat it, and stopping once `limit` of them are found.
    /// Replay evaluation uses it for targets outside the top K. The context must have no people: their term is
    /// not in the lists.
    /// - Parameter limit: the most that are counted; the result is `min(count, limit)`.
    /// - Complexity: like `top`, with K the smaller of `limit` and the number of conversations that rank before
    ///   the target.
    public func countRankingBefore(_ target: RankedConversation, in source: some RankingSource, limit: Int = .max) throws
        -> Int
    {
        var statistics = Statistics()
        return try countRankingBefore(target, in: source, limit: limit, statistics: &statistics)
    }

    /// `countRankingBefore(_:in:limit:)`, counting the walk's accesses into `statistics`.
    ///
    /// The threshold algorithm's walk, with the threshold kept relative to the target's score in linear space:
    /// each channel's bound is `e^(bound − score)`, computed once when its list advances, and the walk stops when
    /// their sum is below 1 (by a relative slack of 1e-6, so that rounding can never stop it early). A top-K
    /// query sums the bounds in log space at every step; a rank deep in a large account takes thousands of steps,
    /// and there that sum was most of the cost.
    public func countRankingBefore(
        _ target: RankedConversation, in source: some RankingSource, limit: Int = .max, statistics: inout Statistics
    ) throws -> Int {
        precondition(scorer.context.people.isEmpty, "people terms are not bounded by the sorted lists")
        var seen = Self.seenTable()
        seen.set(1, for: target.reference)
        var count = 0
        let isBefore = { (reference: Int64) throws -> Bool in
            guard let ranked = try self.rank(reference, in: source, matchedPeople: 0, explain: false) else { return false }
            return RankedConversation.ranksBefore(ranked, target)
        }
        guard target.logScore > LogSpace.zero else {
            // A target that scores 0 ties with every conversation the lists hold nothing for: only the
            // tie-breakers tell them apart, so every conversation is met.
            try walk(source, seen: &seen, statistics: &statistics) { _ in count >= limit } visit: { reference in
                if try isBefore(reference) { count += 1 }
            }
            return min(count, limit)
        }
        let channels = scorer.policy.channels.count
        let offset = scorer.logMaximumFactor - target.logScore
        var cursors: [any SortedAccessCursor] = []
        var heads: [(key: Double, reference: Int64)?] = []
        var relative: [Double] = []
        cursors.reserveCapacity(channels)
        heads.reserveCapacity(channels)
        relative.reserveCapacity(channels)
        for channel in 0..<channels {
            var cursor = try source.sortedAccess(channel: channel)
            // A channel whose weight is 0 for every conversation (a learned channel with no mass yet) bounds
            // nothing: its list is not walked.
            let head = scorer.channelBound(channel, key: 0) == LogSpace.zero ? nil : try cursor.next()
            heads.append(head)
            relative.append(head.map { LogSpace.value(scorer.channelBound(channel, key: $0.key) + offset) } ?? 0)
            cursors.append(cursor)
            statistics.sortedAccesses += 1
        }
        let stopBelow = 1 - 1e-6
        while count < limit {
            var sum = 0.0
            var widest = -1
            for channel in 0..<channels where heads[channel] != nil {
                sum += relative[channel]
                if widest < 0 || relative[channel] > relative[widest] { widest = channel }
            }
            guard widest >= 0, let head = heads[widest], !(sum < stopBelow) else { break }
            let next = try cursors[widest].next()
            heads[widest] = next
            relative[widest] = next.map { LogSpace.value(scorer.channelBound(widest, key: $0.key) + offset) } ?? 0
            statistics.sortedAccesses += 1
            guard seen.set(1, for: head.reference) else { continue }  // met before
            statistics.randomAccesses += 1
            if try isBefore(head.reference) { count += 1 }
        }
        return min(count, limit)
    }

    /// The conversations a walk has met: keys of a table whose values are all 1 (`Int64KeyTable` says why not a
    /// `Set`), with room for the few dozen most walks meet.
    private static func seenTable() -> Int64KeyTable { Int64KeyTable(capacity: 24) }

    /// The threshold algorithm's walk: sorted access over every channel, the list with the widest bound first,
    /// each conversation visited once, until `done(threshold)` or every list is exhausted.
    private func walk(
        _ source: some RankingSource, seen: inout Int64KeyTable, statistics: inout Statistics,
        done: (Double) -> Bool, visit: (Int64) throws -> Void
    ) throws {
        let channels = scorer.policy.channels.count
        var cursors: [any SortedAccessCursor] = []
        var heads: [(key: Double, reference: Int64)?] = []
        cursors.reserveCapacity(channels)
        heads.reserveCapacity(channels)
        for channel in 0..<channels {
            var cursor = try source.sortedAccess(channel: channel)
            heads.append(try cursor.next())
            cursors.append(cursor)
            statistics.sortedAccesses += 1
        }
        let logFactor = scorer.logMaximumFactor
        while true {
            var threshold = LogSpace.zero
            var widest = -1
            var widestBound = LogSpace.zero
            for channel in 0..<channels {
                guard let head = heads[channel] else { continue }
                let bound = scorer.channelBound(channel, key: head.key)
                threshold = LogSpace.addExp(threshold, bound)
                if widest < 0 || bound > widestBound {
                    widest = channel
                    widestBound = bound
                }
            }
            guard widest >= 0, let head = heads[widest] else { return }  // every list is exhausted
            if done(threshold + logFactor) { return }
            heads[widest] = try cursors[widest].next()
            statistics.sortedAccesses += 1
            guard seen.set(1, for: head.reference) else { continue }  // met before
            statistics.randomAccesses += 1
            try visit(head.reference)
        }
    }

    /// The exact ranked form of one conversation, or `nil` if it is gone or the context does not admit it.
    private func rank(_ reference: Int64, in source: some RankingSource, matchedPeople: Int, explain: Bool) throws
        -> RankedConversation?
    {
        guard let candidate = try source.candidate(reference, contentKinds: scorer.contentKinds),
            scorer.admits(candidate)
        else { return nil }
        return scorer.rank(candidate, matchedPeople: matchedPeople, explain: explain)
    }

    /// How many of the context's people take part in each conversation that has any of them.
    func peopleMatches(in source: some RankingSource) throws -> [Int64: Int] {
        var counts: [Int64: Int] = [:]
        guard scorer.policy.peopleWeight > 0 else { return counts }
        for person in scorer.context.distinctPeople {
            for reference in Set(try source.conversations(withPerson: person)) { counts[reference, default: 0] += 1 }
        }
        return counts
    }

    /// The reference ranking: every conversation scored, sorted, cut to the limit. O(n log n); for tests,
    /// benchmarks and evaluation of policies that have no sorted lists.
    public func bruteForce(in source: some RankingSource, explain: Bool = false) throws -> [RankedConversation] {
        let matches = try peopleMatches(in: source)
        var all: [RankedConversation] = []
        for reference in try source.allReferences() {
            if let ranked = try rank(reference, in: source, matchedPeople: matches[reference] ?? 0, explain: explain) {
                all.append(ranked)
            }
        }
        all.sort(by: RankedConversation.ranksBefore)
        return Array(all.prefix(scorer.context.limit))
    }
}

/// The best K seen so far, in rank order. K is small (8 by default), so a sorted array beats a heap.
struct BoundedRanking {
    let capacity: Int
    private(set) var elements: [RankedConversation] = []

    init(capacity: Int) {
        self.capacity = capacity
        elements.reserveCapacity(min(capacity, 1024) + 1)
    }

    var isFull: Bool { elements.count >= capacity }
    var last: RankedConversation? { elements.last }

    mutating func insert(_ item: RankedConversation) {
        if isFull, let last = elements.last, !RankedConversation.ranksBefore(item, last) { return }
        var low = 0
        var high = elements.count
        while low < high {
            let middle = (low + high) / 2
            if RankedConversation.ranksBefore(elements[middle], item) { low = middle + 1 } else { high = middle }
        }
        elements.insert(item, at: low)
        if elements.count > capacity { elements.removeLast() }
    }
}
