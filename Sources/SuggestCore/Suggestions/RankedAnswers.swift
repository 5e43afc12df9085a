import Synchronization

/// The answers a source gave at one version of its store, kept to be given again: a server is asked for the same
/// account's suggestions over and over between two donations, and a learned ranking's answer does not change as
/// time passes (its scores are shares of each channel's mass: `Scorer.ChannelOffsets`) but at an expert's turn from
/// fresh to stale.
///
/// What still depends on the moment is the idle cutoff (`RankingContext.notIdleSince`): a later query leaves out
/// the conversations that have gone quiet since. An answer therefore holds for a later cutoff only while every
/// conversation it lists is still admitted, that is up to the oldest `lastDate` among them: the conversations it
/// does not list ranked below them or were already left out, and a later cutoff admits none of those back. And the
/// experts that are fresh or stale: an answer holds over the moments at which each is as it was
/// (`LearnedWeights.freshnessSpan`).
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
        /// The moments (Unix seconds) at which the weights it was ranked with are the same.
        var moments: Range<Double>
        var bytes: Int
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

    private struct Kept {
        var answers: [Key: Answer] = [:]
        /// About how many bytes the answers hold: their keys, their JSON and their suggestions.
        var bytes = 0
    }

    private let kept = Mutex(Kept())
    private let counters: Counters
    private let byteLimit: Int
    /// At most this many answers are kept at once.
    public static var limit: Int { 64 }

    /// - Parameters:
    ///   - counters: where to count, shared by the answers of every account of one mirror.
    ///   - byteLimit: about how many bytes the answers may hold together: a mirror gives its own size, or
    ///     `MirrorReadCache.smallestRoom` for a small one. When a new answer would pass the limit, or `limit`
    ///     answers are kept, the answers start over.
    public init(counters: Counters = Counters(), byteLimit: Int = .max) {
        self.counters = counters
        self.byteLimit = byteLimit
    }

    /// The answer kept for `key`, when it holds for a query at `moment` whose idle cutoff is `cutoff`.
    /// - Returns: the list as it was computed (its `at` is the moment it was computed at).
    public func answer(for key: Key, cutoff: Timestamp?, at moment: Timestamp) -> SuggestionList? {
        let found = kept.withLock { kept -> SuggestionList? in
            guard let answer = kept.answers[key], answer.moments.contains(moment.seconds) else { return nil }
            if let range = answer.cutoffs {
                guard let cutoff, range.contains(cutoff) else { return nil }
            }
            return answer.list
        }
        if found != nil { counters.reused.add(1, ordering: .relaxed) }
        return found
    }

    /// Keeps `list`, computed for `key` with idle cutoff `cutoff`, with its suggestions' JSON written now, once.
    /// - Parameter moments: the moments at which the weights it was ranked with are the same (Unix seconds).
    /// - Returns: the list as kept (with its rendering), to be written as the query's answer; or, when it alone
    ///   would pass the byte limit, the list as it came, not kept.
    public func keep(_ list: SuggestionList, for key: Key, cutoff: Timestamp?, moments: Range<Double>) -> SuggestionList {
        let rendering = JSONRendering(list.suggestions)
        var answer = list
        answer.rendering = rendering
        // The key too: it holds the query's people and exclusions, tens of kilobytes in a long query whose answer,
        // about made-up people, is nearly empty.
        let bytes = key.bytes.count + rendering.bytes.count + list.suggestions.count * MemoryLayout<Suggestion>.stride
        guard bytes <= byteLimit else { return list }
        var cutoffs: ClosedRange<Timestamp>?
        if let cutoff {
            // Every listed conversation was admitted, so each was last active at or after the cutoff.
            let oldest = list.suggestions.lazy.map(\.lastDate).min() ?? Timestamp(seconds: .infinity)
            cutoffs = cutoff...max(cutoff, oldest)
        }
        kept.withLock { kept in
            let replaced = kept.answers.removeValue(forKey: key)
            kept.bytes -= replaced?.bytes ?? 0
            if kept.answers.count >= Self.limit || kept.bytes + bytes > byteLimit {
                kept.answers.removeAll(keepingCapacity: true)
                kept.bytes = 0
            }
            kept.answers[key] = Answer(list: answer, cutoffs: cutoffs, moments: moments, bytes: bytes)
            kept.bytes += bytes
        }
        counters.kept.add(1, ordering: .relaxed)
        return answer
    }
}

/// The JSON of a list's suggestions (the array), written once and shared by every copy of a list kept to be given
/// again (`SuggestionList.rendering`).
public final class JSONRendering: Sendable {
    /// The array's JSON.
    public let bytes: [UInt8]

    /// Writes the suggestions' array as `SuggestionList.write(to:)` writes it.
    public init(_ suggestions: [Suggestion]) {
        var writer = JSONWriter(capacity: suggestions.count * 400)
        SuggestionList.writeSuggestions(suggestions, to: &writer)
        bytes = writer.bytes
    }
}
