/// Finds the exact top K conversations without scoring every one: Fagin's threshold algorithm over one sorted
/// list per decay channel (and per content kind being shared), with random access for the exact score.
///
/// A blend of two half-lives changes order as time passes, so no single stored order is right at every moment;
/// each channel's own order is (its key `A_m` is time-invariant). The algorithm walks the lists best first,
/// always advancing the list whose next key could still add the most, scores each new conversation exactly, and
/// stops once the K-th best score is strictly above the threshold, the most an unseen conversation could score.
/// Because the stop is strict, an unseen conversation can neither beat nor tie the K-th, so ties are broken
/// exactly as the brute-force ranking breaks them. People in the context are scored up front: their term comes
/// from a lookup, not from a sorted list.
public struct TopKRanker {
    public let scorer: Scorer

    public init(policy: FrecencyPolicy, context: RankingContext, tree: UniformTypeTree = .standard) {
        scorer = Scorer(policy: policy, context: context, tree: tree)
    }

    /// Statistics of one query, for benchmarks and `--explain`.
    public struct Statistics: Sendable, Equatable {
        public var sortedAccesses = 0
        public var randomAccesses = 0
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
        var seen: Set<Int64> = []
        let kinds = scorer.contentKinds

        // People first: their term is not in any sorted list.
        let matches = try peopleMatches(in: source)
        for (reference, count) in matches.sorted(by: { $0.key < $1.key }) {
            seen.insert(reference)
            statistics.randomAccesses += 1
            guard let candidate = try source.candidate(reference, contentKinds: kinds), scorer.admits(candidate)
            else { continue }
            best.insert(scorer.rank(candidate, matchedPeople: count, explain: explain))
        }

        var lists: [RankingList] = scorer.policy.channels.indices.map { .channel($0) }
        lists += kinds.map { .contentKind($0) }
        var cursors: [any SortedAccessCursor] = []
        var heads: [(key: Double, reference: Int64)?] = []
        for list in lists {
            var cursor = try source.sortedAccess(list)
            heads.append(try cursor.next())
            cursors.append(cursor)
            statistics.sortedAccesses += 1
        }
        while true {
            // The threshold: what a conversation not yet seen could score at most.
            var threshold = LogSpace.zero
            var widest = -1
            var widestBound = LogSpace.zero
            for index in lists.indices {
                guard let head = heads[index] else { continue }
                let bound = scorer.termBound(lists[index], key: head.key)
                threshold = LogSpace.addExp(threshold, bound)
                if widest < 0 || bound > widestBound {
                    widest = index
                    widestBound = bound
                }
            }
            guard widest >= 0 else { break }  // every list is exhausted: everything has been seen
            if best.isFull, let last = best.last, last.logScore > threshold + scorer.logMaximumFactor { break }
            guard let head = heads[widest] else { break }
            heads[widest] = try cursors[widest].next()
            statistics.sortedAccesses += 1
            guard seen.insert(head.reference).inserted else { continue }
            statistics.randomAccesses += 1
            guard let candidate = try source.candidate(head.reference, contentKinds: kinds), scorer.admits(candidate)
            else { continue }
            best.insert(scorer.rank(candidate, matchedPeople: 0, explain: explain))
        }
        return best.elements
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
            guard let candidate = try source.candidate(reference, contentKinds: scorer.contentKinds),
                scorer.admits(candidate)
            else { continue }
            all.append(scorer.rank(candidate, matchedPeople: matches[reference] ?? 0, explain: explain))
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
