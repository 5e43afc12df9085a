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
/// The threshold must stay tight under every context, or the walk meets nearly every conversation (`WalkPlan`):
/// a service's conversations are walked in that service's lists; when something is being shared, what the content
/// factor can add is bounded by the content kinds' own lists, whose keys carry each conversation's share of that
/// kind, so a conversation that shared a photo once in a hundred messages is bounded by a hundredth of the factor,
/// not all of it. Conversations with people of the context are scored up front: their term comes from a look-up,
/// not from a sorted list.
public struct TopKRanker {
    /// What scores each conversation the walk meets, and bounds the ones it has not: policy, context and channel
    /// weights.
    public let scorer: Scorer

    /// A ranker with the policy's own channel weights.
    /// - Parameter tree: the type tree the context's content types are resolved to content kinds in.
    public init(policy: FrecencyPolicy, context: RankingContext, tree: UniformTypeTree = .standard) {
        scorer = Scorer(policy: policy, context: context, tree: tree)
    }

    /// A ranker that scores with `scorer`: for channel weights of the query's own, such as an account's learned
    /// weights (`Scorer.init(policy:context:channelOffsets:tree:)`).
    public init(scorer: Scorer) {
        self.scorer = scorer
    }

    /// Statistics of one query, for benchmarks.
    public struct Statistics: Sendable, Equatable {
        /// Steps down the sorted lists: calls of a list cursor's `next()`, each list's first included.
        public var sortedAccesses = 0
        /// Conversations fetched for their exact score, each once per query.
        public var randomAccesses = 0
        /// Calls of `RankingSource.candidates`: round trips, for a remote source.
        public var randomAccessBatches = 0
        /// Statistics of nothing yet, which a query counts into.
        public init() {}
    }

    /// The top `context.limit` conversations in rank order.
    /// - Parameter explain: whether each result's `breakdown` gets its terms and factor (`--explain`).
    /// - Throws: what the source throws.
    /// - Complexity: O((s + r) log K) for s sorted and r random accesses; s and r do not grow with the length of
    ///   the history, nor with how few conversations the context admits.
    public func top(in source: some RankingSource, explain: Bool = false) throws -> [RankedConversation] {
        var statistics = Statistics()
        return try top(in: source, explain: explain, statistics: &statistics)
    }

    /// `top(in:explain:)`, counting the walk's accesses into `statistics`, for benchmarks.
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
        try walk(source, seen: &seen, statistics: &statistics) {
            // Until K are found nothing may be skipped; after, only what could beat the K-th.
            best.isFull ? best.last?.logScore ?? -.infinity : -.infinity
        } visit: { candidate in
            if scorer.admits(candidate) { best.insert(scorer.rank(candidate, matchedPeople: 0, explain: explain)) }
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
    /// - Parameter depth: the deepest rank reported exactly; `Int.max` (the default) for the exact rank always.
    ///   A depth below 1 counts as 1.
    /// - Throws: `RankingError.peopleNotBounded` when the context names people and the source holds more than
    ///   `scanLimit` conversations; a smaller source is scanned without the people term. What the source throws.
    /// - Complexity: O(n) for n ≤ `scanLimit` conversations; otherwise like `countRankingBefore`.
    public func rank(of conversation: ConversationHandle, in source: some RankingSource, depth: Int = .max) throws
        -> RankOfConversation?
    {
        var statistics = Statistics()
        return try rank(of: conversation, in: source, depth: depth, statistics: &statistics)
    }

    /// `rank(of:in:depth:)`, counting the walk's accesses into `statistics` (a scan counts none), for benchmarks.
    public func rank(
        of conversation: ConversationHandle, in source: some RankingSource, depth: Int = .max,
        statistics: inout Statistics
    ) throws -> RankOfConversation? {
        var witnesses = DeepRankWitnesses()
        return try rank(of: conversation, in: source, depth: depth, witnesses: &witnesses, statistics: &statistics)
    }

    /// `rank(of:in:depth:)` for one of a series of ranks in one source, such as a replay's: `witnesses` carries
    /// from one call to the next the conversations that ranked before the last target found deeper than `depth`.
    /// When `depth` of them still rank before this target, it is deeper too, and no walk is needed to know it.
    /// The rank is the same as without them.
    public func rank(
        of conversation: ConversationHandle, in source: some RankingSource, depth: Int = .max,
        witnesses: inout DeepRankWitnesses, statistics: inout Statistics
    ) throws -> RankOfConversation? {
        let depth = max(1, depth)
        guard let candidate = try source.candidate(conversation, contentKinds: scorer.contentKinds),
            scorer.admits(candidate)
        else { return nil }
        let target = scorer.rank(candidate, matchedPeople: 0, explain: false)
        guard try source.conversationCount() <= Self.scanLimit else {
            // Under people, whose term no sorted list bounds, the walk refuses (`countRankingBefore`), and so must
            // this: witnesses scored without it answered a rank no walk would give.
            if scorer.context.people.isEmpty,
                try witnessesRankBefore(
                    target, witnesses.conversations, atLeast: depth, in: source, statistics: &statistics)
            {
                return RankOfConversation(rank: depth + 1, ranked: target)
            }
            var counted: [ConversationHandle]? = []
            let before = try countRankingBefore(
                target, in: source, limit: depth, statistics: &statistics, keeping: &counted)
            if before >= depth, let counted { witnesses.conversations = counted }
            return RankOfConversation(rank: before + 1, ranked: target)
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
        return RankOfConversation(rank: min(before, depth) + 1, ranked: target)
    }

    /// Up to this many conversations, `rank(of:in:)` scans rather than walks (measured on CollegeMsg replay).
    public static let scanLimit = 64

    /// How many admitted conversations rank before `target` (so its rank is this plus one), walking the sorted
    /// lists only as far as a conversation could still beat it, and stopping once `limit` of them are found.
    /// Replay evaluation uses it for targets outside the top K.
    /// - Parameter limit: the most that are counted; the result is `min(count, limit)`.
    /// - Throws: `RankingError.peopleNotBounded` when the context names people: their term is not in the lists.
    /// - Complexity: like `top`, with K the smaller of `limit` and the number of conversations that rank before
    ///   the target.
    public func countRankingBefore(_ target: RankedConversation, in source: some RankingSource, limit: Int = .max)
        throws -> Int
    {
        var statistics = Statistics()
        return try countRankingBefore(target, in: source, limit: limit, statistics: &statistics)
    }

    /// `countRankingBefore(_:in:limit:)`, counting the walk's accesses into `statistics`.
    public func countRankingBefore(
        _ target: RankedConversation, in source: some RankingSource, limit: Int = .max, statistics: inout Statistics
    ) throws -> Int {
        var counted: [ConversationHandle]? = nil
        return try countRankingBefore(target, in: source, limit: limit, statistics: &statistics, keeping: &counted)
    }

    /// `countRankingBefore(_:in:limit:statistics:)`, appending to `counted`, unless it is `nil`, the conversations
    /// it counts (at most `limit`), for `DeepRankWitnesses`.
    private func countRankingBefore(
        _ target: RankedConversation, in source: some RankingSource, limit: Int, statistics: inout Statistics,
        keeping counted: inout [ConversationHandle]?
    ) throws -> Int {
        guard scorer.context.people.isEmpty else { throw RankingError.peopleNotBounded }
        // A walk to the depth meets a few more conversations than it counts: room for them from the start.
        var seen = Int64KeyTable(capacity: min(limit, 1_000) + 24)
        seen.set(1, for: target.conversation.rawValue)
        var count = 0
        // A conversation scoring exactly the target's score may still rank before it on the tie-breakers, so the
        // walk goes on while the threshold reaches the target's score, with a relative slack of 1e-6 so that
        // rounding in the bound can never end it early; each conversation met is compared exactly. A target that
        // scores 0 ties with every conversation the lists hold nothing for: the walk meets them all.
        // A conversation met is settled by its state where that is enough (`stateRanksBefore`): the candidate is
        // built only for the near ties, or where the context reads more than the state.
        let byState = settlesByState(source)
        try walk(source, seen: &seen, statistics: &statistics) {
            count >= limit ? .infinity : target.logScore - 1e-6
        } settle: { conversation in
            guard byState else { return false }
            guard count < limit else { return true }
            guard let before = try stateRanksBefore(target, conversation, source) else { return false }
            if before {
                count += 1
                counted?.append(conversation)
            }
            return true
        } visit: { candidate in
            guard count < limit, ranksBefore(candidate, target) else { return }
            count += 1
            counted?.append(candidate.conversation)
        }
        return min(count, limit)
    }

    /// Whether a candidate the context admits ranks before `target`. Most conversations a deep walk meets score
    /// clearly above or below the target: their exact score is only worked out for a near tie.
    @inline(__always)
    private func ranksBefore(_ candidate: RankingCandidate, _ target: RankedConversation) -> Bool {
        guard scorer.admits(candidate) else { return false }
        if let above = scorer.isAbove(candidate, logScore: target.logScore) { return above }
        return RankedConversation.ranksBefore(scorer.rank(candidate, matchedPeople: 0, explain: false), target)
    }

    /// Whether at least `needed` of `witnesses` (distinct conversations) rank before `target` now: then its rank is
    /// deeper than `needed`. Stops as soon as the answer is known. The witnesses are looked at last counted first:
    /// the walk met them roughly best first, so a target near the top fails at the first look.
    private func witnessesRankBefore(
        _ target: RankedConversation, _ witnesses: [ConversationHandle], atLeast needed: Int,
        in source: some RankingSource, statistics: inout Statistics
    ) throws -> Bool {
        guard witnesses.count >= needed else { return false }
        // Where the context admits by state and a state settles most comparisons (`isAbove`), a witness's state is
        // all that is read: building each candidate, its identifier and arrays, was most of a proof's cost.
        let byState = settlesByState(source)
        var count = 0
        var unread = witnesses.count
        for conversation in witnesses.reversed() {
            unread -= 1
            statistics.randomAccesses += 1
            if conversation != target.conversation, try witnessRanksBefore(target, conversation, byState, source) {
                count += 1
                if count >= needed { return true }
            }
            if count + unread < needed { return false }
        }
        return false
    }

    /// Whether a conversation met while counting what ranks before a target can be settled by its state alone
    /// (`RankingSource.rankingState`): the context admits by state and adds no content term, and the source reads
    /// one conversation at a time (a remote one gathers its candidates into round trips instead).
    private func settlesByState(_ source: some RankingSource) -> Bool {
        scorer.admitsByStateAlone && scorer.contentKinds.isEmpty && scorer.context.people.isEmpty
            && source.randomAccessBatchSize == 1
    }

    /// Whether a conversation ranks before `target`, when its state alone says so (`settlesByState`): `false` for
    /// one that is gone or that the context does not admit, `nil` for a near tie, which its candidate decides.
    @inline(__always)
    private func stateRanksBefore(
        _ target: RankedConversation, _ conversation: ConversationHandle, _ source: some RankingSource
    ) throws -> Bool? {
        guard let state = try source.rankingState(conversation), scorer.admits(state: state) else { return false }
        return scorer.isAbove(state: state, logScore: target.logScore)
    }

    /// Whether one witness ranks before `target`: by its state when `byState` and the state settles it, else by
    /// its candidate (`ranksBefore`).
    @inline(__always)
    private func witnessRanksBefore(
        _ target: RankedConversation, _ conversation: ConversationHandle, _ byState: Bool, _ source: some RankingSource
    ) throws -> Bool {
        if byState, let before = try stateRanksBefore(target, conversation, source) { return before }
        guard let candidate = try source.candidate(conversation, contentKinds: scorer.contentKinds) else {
            return false
        }
        return ranksBefore(candidate, target)
    }

    /// The conversations a walk has met: keys of a table whose values are all 1 (`Int64KeyTable` says why not a
    /// `Set`), with room for the few dozen most walks meet.
    private static func seenTable() -> Int64KeyTable { Int64KeyTable(capacity: 24) }

    /// The threshold algorithm's walk over the lists of `WalkPlan`: each step advances the list that contributes
    /// most to the threshold, each conversation is visited once (gathered into batches of the source's
    /// `randomAccessBatchSize`), until the threshold is below `level()` (a log score: `-∞` never ends the walk,
    /// `+∞` ends it at once) or every conversation the context admits has been met.
    ///
    /// Bounds are kept in linear space relative to an offset, so that a step costs one `exp` (the bound of the
    /// list it advanced) rather than a log-sum over every list; when the threshold falls so far below the offset
    /// that it could underflow, the offset follows it down.
    ///
    /// `settle` may decide a conversation met without its candidate (a source of one access at a time only): it
    /// returns `true` when it did, and the conversation is then not visited.
    ///
    /// Batching keeps the walk exact: `level` is asked with the best scores of the conversations visited so far,
    /// which are at most the scores with the pending ones included, so a stale answer can only walk further.
    private func walk<Source: RankingSource>(
        _ source: Source, seen: inout Int64KeyTable, statistics: inout Statistics,
        level: () -> Double, settle: (ConversationHandle) throws -> Bool = { _ in false },
        visit: (RankingCandidate) throws -> Void
    ) throws {
        let plan = WalkPlan(scorer: scorer)
        let lists = plan.lists
        var cursors = try source.sortedAccess(lists)
        var logBounds = [Double](repeating: LogSpace.zero, count: lists.count)
        var heads = [ConversationHandle?](repeating: nil, count: lists.count)
        var headKeys = [Double](repeating: LogSpace.zero, count: lists.count)
        for index in lists.indices {
            if let entry = try cursors[index].next() {
                heads[index] = entry.conversation
                headKeys[index] = entry.key
                logBounds[index] = scorer.channelBound(lists[index].channel, key: entry.key)
            }
            statistics.sortedAccesses += 1
        }
        var offset = logBounds.max() ?? LogSpace.zero
        if offset == LogSpace.zero { offset = 0 }
        var bounds = logBounds.map { LogSpace.value($0 - offset) }
        // The level in the same units as `bounds`, recomputed only when the level changes.
        var lastLevel = Double.nan
        var linearLevel = 0.0

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

        let base = 0..<plan.baseLists
        let kinds = plan.baseLists..<lists.count
        let gamma = plan.contentWeight
        // Whether the walk may still end at the idle cutoff: not once the source said its keys are of another policy.
        var mayStopAtIdle = true
        while true {
            // A head may have the key -∞ (a channel that ignores the conversation): it bounds nothing, but the
            // conversations behind it, scored 0, must still be met while fewer than K are found.
            var baseSum = 0.0
            var isOpen = false
            var restIsIdle = false
            for index in base where heads[index] != nil {
                baseSum += bounds[index]
                isOpen = true
                if mayStopAtIdle && headKeys[index] < plan.idleKeys[index] { restIsIdle = true }
            }
            // Every conversation the context admits is in each base list: once they are exhausted, all were met;
            // once one list's head is idle, so is every conversation behind it, which holds all not met yet, as
            // long as the keys are the policy's own (a store part-way through a rebuild walks on to the end).
            guard isOpen else { break }
            if restIsIdle {
                if try source.keysFollowThePolicy() { break }
                mayStopAtIdle = false
            }
            var kindSum = 0.0
            for index in kinds where heads[index] != nil { kindSum += bounds[index] }
            // What the content factor can add: γ·s·base ≤ γ·(the kinds' lists) and, since s ≤ 1, ≤ γ·base.
            let kindsBind = kindSum < baseSum
            let threshold = baseSum + gamma * (kindsBind ? kindSum : baseSum)

            let wanted = level()
            if wanted != lastLevel {
                lastLevel = wanted
                // A relative slack of 1e-9 absorbs the rounding of bounds summed in another order than scores.
                linearLevel = LogSpace.value(wanted - 1e-9 - offset - plan.logFactor)
            }
            if threshold < linearLevel { break }
            if threshold < 1e-250, let lowest = rebased(logBounds, heads: heads, below: offset) {
                offset = lowest
                for index in lists.indices { bounds[index] = LogSpace.value(logBounds[index] - offset) }
                lastLevel = .nan
                continue
            }

            // The list whose head adds the most to the threshold.
            var widest = -1
            var widestGain = -1.0
            let baseGain = kindsBind ? 1 : 1 + gamma
            for index in base where heads[index] != nil && bounds[index] * baseGain > widestGain {
                widest = index
                widestGain = bounds[index] * baseGain
            }
            if kindsBind {
                for index in kinds where heads[index] != nil && gamma * bounds[index] > widestGain {
                    widest = index
                    widestGain = gamma * bounds[index]
                }
            }
            guard let head = heads[widest] else { break }
            if let entry = try cursors[widest].next() {
                heads[widest] = entry.conversation
                headKeys[widest] = entry.key
                logBounds[widest] = scorer.channelBound(lists[widest].channel, key: entry.key)
                bounds[widest] = LogSpace.value(logBounds[widest] - offset)
            } else {
                heads[widest] = nil
                logBounds[widest] = LogSpace.zero
                bounds[widest] = 0
            }
            statistics.sortedAccesses += 1
            guard seen.set(1, for: head.rawValue) else { continue }  // met before
            statistics.randomAccesses += 1
            if batchSize == 1 {
                statistics.randomAccessBatches += 1
                if try settle(head) { continue }
                if let candidate = try source.candidate(head, contentKinds: scorer.contentKinds) { try visit(candidate) }
            } else {
                pending.append(head)
                if pending.count >= batchSize { try flush() }
            }
        }
        try flush()
    }

    /// A new offset for bounds that have fallen far below the current one: the largest open bound, or `nil` when
    /// every open bound is 0 (nothing left to rebase).
    private func rebased(_ logBounds: [Double], heads: [ConversationHandle?], below offset: Double) -> Double? {
        var largest = LogSpace.zero
        for index in logBounds.indices where heads[index] != nil { largest = max(largest, logBounds[index]) }
        return largest > LogSpace.zero && largest < offset ? largest : nil
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
    /// - Throws: what the source throws.
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
    /// 1 for the first; with a depth, `depth + 1` for anything deeper.
    public var rank: Int
    /// The conversation's exact score and ranked form under the context, without explanation.
    public var ranked: RankedConversation
}

/// Conversations that ranked before an earlier target found deeper than the depth, kept between the ranks of a
/// series (`TopKRanker.rank(of:in:depth:witnesses:statistics:)`). Between two sends of a replay only the
/// conversation donated to changes, and the conversations that outscored one deep target mostly outscore the
/// next: checking them (a few dozen random accesses of the same, cache-warm conversations) replaces a walk that
/// would find as many again through the sorted lists. Empty until a walk reaches the depth.
public struct DeepRankWitnesses: Sendable {
    var conversations: [ConversationHandle] = []

    /// No witnesses yet.
    public init() {}
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

/// The lists a walk reads for a context.
///
/// The base lists hold every conversation the context could admit (its service's, or all), one list per channel
/// that carries weight; their bounds add up to the most a conversation's channel sum can be. When something is
/// being shared, the content factor `1 + γ·s` adds `γ·s·base` to that, where `s = Σ s_k` is the decayed share of
/// the conversation's donations that carried the shared kinds: each kind's lists are keyed by `A_m + ln s_k`, so
/// their bounds add up to the most `s_k·base` can be. The threshold is `G·(base + γ·min(base, Σ kinds))`, with
/// `G` the largest group factor; each piece is a true upper bound, so the walk stays exact.
struct WalkPlan {
    private(set) var lists: [SortedList] = []
    /// How many of `lists`, from the first, are the base lists.
    private(set) var baseLists = 0
    /// For each base list, the key below which its conversations are idle under the context's cutoff (`-∞` when
    /// nothing is: no cutoff, or a channel that some donations leave alone). A key `A_m` is at least `ln w + λ_m·t`
    /// of the conversation's latest donation, and `w` at least the channel's smallest weight, so a key below
    /// `ln w_min + λ_m·cutoff` is a latest donation before the cutoff: the walk stops there, rather than meet
    /// every idle conversation of an account with fewer than K active ones.
    private(set) var idleKeys: [Double] = []
    /// `γ` when the context shares content, else 0.
    let contentWeight: Double
    /// The logarithm of the largest group factor.
    let logFactor: Double

    init(scorer: Scorer) {
        // A channel whose weight is 0 for every conversation (a learned channel with no mass yet) bounds nothing and
        // is not walked; at least one list is, so that conversations scored 0 are still met.
        var channels = scorer.policy.channels.indices.filter { scorer.channelBound($0, key: 0) > LogSpace.zero }
        if channels.isEmpty { channels = [0] }
        lists = Self.lists(channels: channels, context: scorer.context, contentKinds: scorer.contentKinds)
        baseLists = channels.count
        idleKeys = channels.map { channel in
            guard let cutoff = scorer.context.notIdleSince else { return LogSpace.zero }
            let decay = scorer.policy.decay[channel]
            let key = decay.smallestLogWeight + decay.rate * cutoff.seconds
            // The key of a donation at the cutoff is computed as this one is, so the comparison is exact; the slack
            // only keeps a source that rounds keys on their way (text, another store) from ending a walk early.
            return key - 1e-9 * max(1, key.magnitude)
        }
        contentWeight = scorer.contentKinds.isEmpty ? 0 : scorer.policy.contentWeight
        logFactor = scorer.logGroupFactorBound
    }

    /// The lists of `channels` a walk under `context` reads: the base lists (the context's service's, or all), then
    /// each content kind's.
    private static func lists(channels: [Int], context: RankingContext, contentKinds: [String]) -> [SortedList] {
        let scope: SortedListScope = context.serviceName.map { .service($0) } ?? .all
        var lists = channels.map { SortedList(channel: $0, scope: scope) }
        for kind in contentKinds {
            lists += channels.map { SortedList(channel: $0, scope: .contentKind(kind)) }
        }
        return lists
    }

    /// Every list a walk under `context` could read, whatever the channel weights turn out to be: what a plan made
    /// once the weights are known holds a subset of these (the channels that carry weight).
    /// - Parameters:
    ///   - policy: the policy the stored state is built with (its channels and content weight).
    ///   - tree: the type tree the context's content types are resolved in.
    static func possibleLists(policy: FrecencyPolicy, context: RankingContext, tree: UniformTypeTree) -> [SortedList] {
        let kinds = policy.contentWeight > 0 ? context.contentKinds(in: tree) : []
        return lists(channels: Array(policy.channels.indices), context: context, contentKinds: kinds)
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
