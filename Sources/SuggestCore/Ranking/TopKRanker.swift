/// Finds the exact top K conversations without scoring every one: Fagin's threshold algorithm over sorted lists of
/// the decay channels, with random access for the exact score.
///
/// A blend of several half-lives changes order as time passes, so no single stored order is right at every
/// moment; each channel's own order is (its key `A_m` is time-invariant). The walk goes down the lists best first,
/// always advancing the list whose next key could still add the most, scores each new conversation exactly, and
/// stops once the K-th best score is strictly above the threshold, the most an unseen conversation could score.
/// Because the stop is strict, an unseen conversation can neither beat nor tie the K-th, so ties are broken
/// exactly as the brute-force ranking breaks them.
///
/// A context that admits few conversations would loosen that threshold until the walk met nearly all of them, so
/// selective parts of a context get lists of their own (`WalkPlan`): a service's conversations are walked in that
/// service's lists, and when something is being shared, the conversations that ever received its kind of content
/// are walked in their kinds' lists, under the content factor's bound, while every other conversation is bounded
/// without it. Conversations with people of the context are scored up front: their term comes from a look-up,
/// not from a sorted list.
public struct TopKRanker {
    public let scorer: Scorer

    public init(policy: FrecencyPolicy, context: RankingContext, tree: UniformTypeTree = .standard) {
        scorer = Scorer(policy: policy, context: context, tree: tree)
    }

    /// Statistics of one query, for benchmarks.
    public struct Statistics: Sendable, Equatable {
        public var sortedAccesses = 0
        public var randomAccesses = 0
        /// Calls of `RankingSource.candidates`: round trips, for a remote source.
        public var randomAccessBatches = 0
        public init() {}
    }

    /// The top `context.limit` conversations in rank order.
    /// - Complexity: O((s + r) log K) for s sorted and r random accesses; s and r do not grow with the length of
    ///   the history, nor with how few conversations the context admits.
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
        let matches = try peopleMatches(in: source)
        if !matches.isEmpty {
            for match in matches { seen.set(1, for: match.conversation.rawValue) }
            let candidates = try source.candidates(matches.map(\.conversation), contentKinds: scorer.contentKinds)
            statistics.randomAccesses += matches.count
            statistics.randomAccessBatches += 1
            for (candidate, match) in zip(candidates, matches) {
                guard let candidate, scorer.admits(candidate) else { continue }
                best.insert(scorer.rank(candidate, matchedPeople: match.count, explain: explain))
            }
        }
        try walk(source, seen: &seen, statistics: &statistics) { threshold in
            best.isFull && (best.last.map { $0.logScore > threshold } ?? false)
        } visit: { candidate in
            if scorer.admits(candidate) { best.insert(scorer.rank(candidate, matchedPeople: 0, explain: explain)) }
        }
        return best.elements
    }

    /// The exact rank (1 = first) of one conversation among those the context admits, and its ranked form; `nil`
    /// when the context does not admit it. Replay evaluation asks this at every outgoing donation.
    ///
    /// A small source is scanned: scoring a few dozen conversations costs less than opening the sorted lists.
    /// A larger one is walked only as far as a conversation could still rank before the target.
    /// - Complexity: O(n) for n ≤ `scanLimit` conversations; otherwise like `countRankingBefore`.
    public func rank(of conversation: ConversationHandle, in source: some RankingSource) throws -> RankOfConversation? {
        guard let candidate = try source.candidate(conversation, contentKinds: scorer.contentKinds),
            scorer.admits(candidate)
        else { return nil }
        let target = scorer.rank(candidate, matchedPeople: 0, explain: false)
        guard try source.conversationCount() <= Self.scanLimit else {
            return RankOfConversation(rank: try countRankingBefore(target, in: source) + 1, ranked: target)
        }
        var before = 0
        for other in try source.allConversations() where other != conversation {
            guard let candidate = try source.candidate(other, contentKinds: scorer.contentKinds),
                scorer.admits(candidate)
            else { continue }
            if RankedConversation.ranksBefore(scorer.rank(candidate, matchedPeople: 0, explain: false), target) {
                before += 1
            }
        }
        return RankOfConversation(rank: before + 1, ranked: target)
    }

    /// Up to this many conversations, `rank(of:in:)` scans rather than walks (measured on CollegeMsg replay).
    public static let scanLimit = 64

    /// How many admitted conversations rank before `target` (so its rank is this plus one), walking the sorted
    /// lists only as far as a conversation could still beat it. Replay evaluation uses it for targets outside the
    /// top K.
    /// - Throws: `RankingError.peopleNotBounded` when the context names people: their term is not in the lists.
    /// - Complexity: like `top`, with K the number of conversations that rank before the target.
    public func countRankingBefore(_ target: RankedConversation, in source: some RankingSource) throws -> Int {
        guard scorer.context.people.isEmpty else { throw RankingError.peopleNotBounded }
        var seen = Self.seenTable()
        seen.set(1, for: target.conversation.rawValue)
        var statistics = Statistics()
        var count = 0
        // A conversation scoring exactly the target's score may still rank before it on the tie-breakers, so the
        // walk goes on while the threshold reaches the target's score, with a relative slack of 1e-6 so that
        // rounding in the bound can never end it early; each conversation met is compared exactly.
        try walk(source, seen: &seen, statistics: &statistics) { threshold in
            threshold + 1e-6 < target.logScore
        } visit: { candidate in
            guard scorer.admits(candidate) else { return }
            if RankedConversation.ranksBefore(scorer.rank(candidate, matchedPeople: 0, explain: false), target) {
                count += 1
            }
        }
        return count
    }

    /// The conversations a walk has met: keys of a table whose values are all 1 (`Int64KeyTable` says why not a
    /// `Set`), with room for the few dozen most walks meet.
    private static func seenTable() -> Int64KeyTable { Int64KeyTable(capacity: 24) }

    /// The threshold algorithm's walk over the lists of `WalkPlan`: each step advances the list that contributes
    /// most to the threshold, each conversation is visited once (gathered into batches of the source's
    /// `randomAccessBatchSize`), until `done(threshold)` or every list is exhausted.
    ///
    /// Batching keeps the walk exact: `done` is asked with the best scores of the conversations visited so far,
    /// which are at most the scores with the pending ones included, so a stale answer can only walk further.
    private func walk<Source: RankingSource>(
        _ source: Source, seen: inout Int64KeyTable, statistics: inout Statistics,
        done: (Double) -> Bool, visit: (RankingCandidate) throws -> Void
    ) throws {
        let plan = WalkPlan(scorer: scorer)
        var cursors = try source.sortedAccess(plan.lists)
        var bounds = [Double](repeating: LogSpace.zero, count: cursors.count)
        var heads = [ConversationHandle?](repeating: nil, count: cursors.count)
        for index in cursors.indices {
            if let entry = try cursors[index].next() {
                heads[index] = entry.conversation
                bounds[index] = scorer.channelBound(plan.lists[index].channel, key: entry.key)
            }
            statistics.sortedAccesses += 1
        }
        var blockSums = plan.blocks.map { block in LogSpace.sumExp(bounds[block.lists]) }
        let batchSize = max(1, source.randomAccessBatchSize)
        var pending: [ConversationHandle] = []
        if batchSize > 1 { pending.reserveCapacity(batchSize) }

        func flush() throws {
            guard !pending.isEmpty else { return }
            let candidates = try source.candidates(pending, contentKinds: scorer.contentKinds)
            statistics.randomAccessBatches += 1
            pending.removeAll(keepingCapacity: true)
            for candidate in candidates { if let candidate { try visit(candidate) } }
        }

        // Lists not yet exhausted, per block: a head may have the key -∞ (a channel that ignores the conversation),
        // which bounds nothing but still has conversations behind it, scored 0, that a short list must show.
        var open = plan.blocks.map { block in block.lists.count { heads[$0] != nil } }
        while true {
            // The binding block: the scope whose unseen conversations could score the most.
            var threshold = LogSpace.zero
            var binding = -1
            for (index, block) in plan.blocks.enumerated() where open[index] > 0 {
                let bound = blockSums[index] + block.logFactor
                if binding < 0 || bound > threshold {
                    threshold = bound
                    binding = index
                }
            }
            guard binding >= 0 else { break }  // every list is exhausted
            if done(threshold) { break }
            // Within it, the list whose head adds the most.
            let block = plan.blocks[binding]
            var widest = -1
            for index in block.lists where heads[index] != nil && (widest < 0 || bounds[index] > bounds[widest]) {
                widest = index
            }
            guard widest >= 0, let head = heads[widest] else { break }
            if let entry = try cursors[widest].next() {
                heads[widest] = entry.conversation
                bounds[widest] = scorer.channelBound(plan.lists[widest].channel, key: entry.key)
            } else {
                heads[widest] = nil
                bounds[widest] = LogSpace.zero
                open[binding] -= 1
            }
            statistics.sortedAccesses += 1
            blockSums[binding] = LogSpace.sumExp(bounds[block.lists])
            guard seen.set(1, for: head.rawValue) else { continue }  // met before
            statistics.randomAccesses += 1
            if batchSize == 1 {
                statistics.randomAccessBatches += 1
                if let candidate = try source.candidate(head, contentKinds: scorer.contentKinds) { try visit(candidate) }
            } else {
                pending.append(head)
                if pending.count >= batchSize { try flush() }
            }
        }
        try flush()
    }

    /// How many of the context's people take part in each conversation that has any of them, by conversation.
    func peopleMatches(in source: some RankingSource) throws -> [(conversation: ConversationHandle, count: Int)] {
        let people = scorer.context.distinctPeople
        guard scorer.policy.peopleWeight > 0, !people.isEmpty else { return [] }
        var counts: [ConversationHandle: Int] = [:]
        for conversations in try source.conversations(withPeople: people) {
            for conversation in Set(conversations) { counts[conversation, default: 0] += 1 }
        }
        return counts.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
    }

    /// The reference ranking: every conversation scored, sorted, cut to the limit. O(n log n); for tests,
    /// benchmarks and evaluation of policies that have no sorted lists.
    public func bruteForce(in source: some RankingSource, explain: Bool = false) throws -> [RankedConversation] {
        var matches: [ConversationHandle: Int] = [:]
        for match in try peopleMatches(in: source) { matches[match.conversation] = match.count }
        var all: [RankedConversation] = []
        for conversation in try source.allConversations() {
            guard let candidate = try source.candidate(conversation, contentKinds: scorer.contentKinds),
                scorer.admits(candidate)
            else { continue }
            all.append(scorer.rank(candidate, matchedPeople: matches[conversation] ?? 0, explain: explain))
        }
        all.sort(by: RankedConversation.ranksBefore)
        return Array(all.prefix(scorer.context.limit))
    }
}

/// Where one conversation ranks under a context, and its ranked form.
public struct RankOfConversation: Sendable, Equatable {
    /// 1 for the first.
    public var rank: Int
    public var ranked: RankedConversation
}

/// Why the ranker cannot answer a question.
public enum RankingError: Error, Sendable, Equatable, CustomStringConvertible {
    /// `countRankingBefore` was asked under a context with people, whose term no sorted list bounds.
    case peopleNotBounded

    public var description: String {
        switch self {
        case .peopleNotBounded:
            return "the rank of one conversation cannot be counted under a context that names people"
        }
    }
}

/// The lists a walk reads for a context, in blocks: the channels of one scope, whose bounds add up. A block's
/// threshold is the sum of its channels' bounds times the largest factor its conversations can get; the walk's
/// threshold is the largest over blocks, since every conversation the context admits is in at least one block
/// with a factor that bounds its own.
struct WalkPlan {
    struct Block {
        /// The block's lists, as indices into `lists`.
        var lists: Range<Int>
        /// The logarithm of the largest factor a conversation met only through this block's lists can get.
        var logFactor: Double
    }

    private(set) var lists: [SortedList] = []
    private(set) var blocks: [Block] = []

    init(scorer: Scorer) {
        let channels = scorer.policy.channels.count
        let content = scorer.contentKinds.isEmpty ? 0 : LogSpace.ln(1 + scorer.policy.contentWeight)
        let group = scorer.logGroupFactorBound
        if let service = scorer.context.serviceName {
            // Only this service's conversations are admitted: its lists hold exactly them.
            add(.service(service), channels: channels, logFactor: group + content)
        } else {
            // A conversation that never received the kinds being shared has a content share of 0: the unscoped
            // lists bound it without the content factor; one that did is also in a kind's lists, which carry it.
            add(.all, channels: channels, logFactor: group)
            for kind in scorer.contentKinds { add(.contentKind(kind), channels: channels, logFactor: group + content) }
        }
    }

    private mutating func add(_ scope: SortedListScope, channels: Int, logFactor: Double) {
        let start = lists.count
        for channel in 0..<channels { lists.append(SortedList(channel: channel, scope: scope)) }
        blocks.append(Block(lists: start..<lists.count, logFactor: logFactor))
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
