import Synchronization

/// The answers a source gave at one version of its store, kept to be given again: a server is asked for the same
/// account's suggestions over and over between two donations, and a learned ranking's answer does not change as
/// time passes (its scores are shares of each channel's mass: `Scorer.ChannelOffsets`).
///
/// What still depends on the moment is the idle cutoff (`RankingContext.notIdleSince`): a later query leaves out
/// the conversations that have gone quiet since. An answer therefore holds for a later cutoff only while every
/// conversation it lists is still admitted, that is up to the oldest `lastDate` among them: the conversations it
/// does not list ranked below them or were already left out, and a later cutoff admits none of those back.
///
/// Kept beside the state it was computed from (`MirrorReadCache`), so it lasts exactly as long as that version of
/// the store. Holds at most `limit` answers; a query with yet another context starts the set over.
public final class RankedAnswers: Sendable {
    /// A query, without its moment: the limit, the shared kinds, the people, the service, the exclusions, whether
    /// it explains and whether it has an idle cutoff, as bytes (text compared byte for byte, as the stores compare
    /// it, never by canonical equivalence).
    public struct Key: Hashable, Sendable {
        let bytes: [UInt8]

        public init(_ context: RankingContext, explain: Bool) {
            var bytes: [UInt8] = []
            func append(_ value: Int) {
                withUnsafeBytes(of: UInt64(truncatingIfNeeded: value).littleEndian) { bytes.append(contentsOf: $0) }
            }
            func append(_ text: some Collection<UInt8>) {
                append(text.count)
                bytes.append(contentsOf: text)
            }
            func append(_ texts: [String]) {
                append(texts.count)
                for text in texts { append(text.utf8) }
            }
            append(context.limit)
            bytes.append((explain ? 1 : 0) | (context.notIdleSince == nil ? 0 : 2) | (context.serviceName == nil ? 0 : 4))
            append((context.serviceName ?? "").utf8)
            append(context.contentTypes)
            append(context.people)
            // A set has no order of its own: its members in byte order.
            let excluded = context.excluded.map { Array($0.utf8) }.sorted { $0.lexicographicallyPrecedes($1) }
            append(excluded.count)
            for member in excluded { append(member) }
            self.bytes = bytes
        }
    }

    private struct Answer {
        var list: SuggestionList
        /// The idle cutoff it was computed with, and the latest cutoff that still admits all it lists.
        var cutoffs: ClosedRange<Timestamp>?
    }

    /// How often answers were kept and given again, counted by every `RankedAnswers` of one mirror.
    public final class Counters: Sendable {
        let kept = Atomic<Int>(0)
        let reused = Atomic<Int>(0)

        public init() {}

        /// Answers computed and kept.
        public var keptCount: Int { kept.load(ordering: .relaxed) }
        /// Queries answered with a kept answer.
        public var reusedCount: Int { reused.load(ordering: .relaxed) }
    }

    private let answers = Mutex<[Key: Answer]>([:])
    private let counters: Counters
    public static var limit: Int { 64 }

    /// - Parameter counters: where to count, shared by the answers of every account of one mirror.
    public init(counters: Counters = Counters()) {
        self.counters = counters
    }

    /// The answer kept for `key`, when it holds for a query whose idle cutoff is `cutoff`.
    /// - Returns: the list as it was computed (its `at` is the moment it was computed at).
    public func answer(for key: Key, cutoff: Timestamp?) -> SuggestionList? {
        let found = answers.withLock { answers -> SuggestionList? in
            guard let answer = answers[key] else { return nil }
            if let range = answer.cutoffs {
                guard let cutoff, range.contains(cutoff) else { return nil }
            }
            return answer.list
        }
        if found != nil { counters.reused.add(1, ordering: .relaxed) }
        return found
    }

    /// Keeps `list`, computed for `key` with idle cutoff `cutoff`, with a rendering its JSON is written into once.
    /// - Returns: the list as kept, to be written as the query's answer.
    public func keep(_ list: SuggestionList, for key: Key, cutoff: Timestamp?) -> SuggestionList {
        var kept = list
        kept.rendering = JSONRendering()
        var cutoffs: ClosedRange<Timestamp>?
        if let cutoff {
            // Every listed conversation was admitted, so each was last active at or after the cutoff.
            let oldest = list.suggestions.lazy.map(\.lastDate).min() ?? Timestamp(seconds: .infinity)
            cutoffs = cutoff...max(cutoff, oldest)
        }
        answers.withLock { answers in
            if answers.count >= Self.limit, answers[key] == nil { answers.removeAll(keepingCapacity: true) }
            answers[key] = Answer(list: kept, cutoffs: cutoffs)
        }
        counters.kept.add(1, ordering: .relaxed)
        return kept
    }
}

/// A JSON value written once and shared by every copy of what it renders (`SuggestionList.rendering`): the first
/// writer keeps the bytes, later writers copy them.
public final class JSONRendering: Sendable {
    private let rendered = Mutex<[UInt8]?>(nil)

    public init() {}

    /// The value's JSON, once written.
    public var bytes: [UInt8]? { rendered.withLock { $0 } }

    /// Keeps the value's JSON, unless another writer kept it first (both wrote the same bytes).
    public func keep(_ bytes: [UInt8]) {
        rendered.withLock { if $0 == nil { $0 = bytes } }
    }
}
