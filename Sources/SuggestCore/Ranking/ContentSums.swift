/// A conversation's content sums, one per content kind, keyed by the kind's bytes: as SQL compares text, and as the
/// stores key every other name. `String`'s `==` takes canonically equivalent spellings (`é` and `e` followed by
/// U+0301) for one: keyed so, a record merged two such kinds when it recorded them, and the Redis store found a kind
/// asked for in one spelling under the other where the SQLite store did not.
///
/// A conversation keeps every broad kind it has had and at most `limit` others (`add(_:at:policy:)`).
public struct ContentSums: Sendable, Equatable, Sequence, ExpressibleByDictionaryLiteral {
    private var sums: [ByteKey: Double]

    /// The most kinds outside the broad ones (`UniformTypeTree.contentKinds`) a conversation keeps a sum for.
    ///
    /// A donation may name a hundred types and a type outside the broad kinds is a kind of its own, so without a
    /// bound one conversation could gather any number; and each kind's list keys move with the conversation's
    /// channels (`ConversationState.contentListKey`), so every donation to it rewrites every kind's keys. Past the
    /// limit the kinds of the smallest sums are let go: all sums decay at one rate, so the smallest is the kind
    /// of the smallest share now and at every later moment. The broad kinds, eight at most, are always kept: they
    /// are what a share sheet's photo, link or PDF asks for, and one message naming 64 invented types would
    /// otherwise have pushed out the photo sent with it.
    public static let limit = 64

    /// No kind.
    public init() { sums = [:] }

    public init(dictionaryLiteral elements: (String, Double)...) {
        sums = Dictionary(elements.map { (ByteKey($0.0), $0.1) }, uniquingKeysWith: { _, last in last })
    }

    /// The sum of the kind spelled with exactly these bytes.
    public subscript(kind: String) -> Double? {
        get { sums[ByteKey(kind)] }
        set { sums[ByteKey(kind)] = newValue }
    }

    /// Adds one donation that carried `kinds` (distinct) at `date`, then, while more than `limit` kinds outside
    /// the broad ones are kept, lets go of the one of the smallest sum; of equal sums, the kind whose bytes sort
    /// last. A kind donated again after it was let go starts over from that donation. Every store folds kinds
    /// with it (`ConversationRecord.apply`, `InMemoryRankingIndex`), so all keep the same kinds.
    /// - Complexity: O(k) for k kinds of the donation; O(n log n) for the n kinds kept when some must go.
    public mutating func add(_ kinds: [String], at date: Timestamp, policy: FrecencyPolicy) {
        for kind in kinds {
            self[kind] = ConversationState.applyContent(self[kind] ?? LogSpace.zero, at: date, policy: policy)
        }
        guard sums.count > Self.limit else { return }
        let others = sums.filter { !Self.broadKinds.contains($0.key) }
        guard others.count > Self.limit else { return }
        let kept = others.sorted { lhs, rhs in
            guard lhs.value == rhs.value else { return lhs.value > rhs.value }
            return lhs.key.string.utf8.lexicographicallyPrecedes(rhs.key.string.utf8)
        }
        for (kind, _) in kept.dropFirst(Self.limit) { sums[kind] = nil }
    }

    /// `UniformTypeTree.contentKinds`, by bytes.
    private static let broadKinds = Set(UniformTypeTree.contentKinds.map(ByteKey.init))

    /// How many kinds.
    public var count: Int { sums.count }

    public var isEmpty: Bool { sums.isEmpty }

    /// The kinds, in no particular order.
    public var keys: [String] { sums.keys.map(\.string) }

    public func makeIterator() -> some IteratorProtocol<(key: String, value: Double)> {
        sums.lazy.map { (key: $0.key.string, value: $0.value) }.makeIterator()
    }
}
