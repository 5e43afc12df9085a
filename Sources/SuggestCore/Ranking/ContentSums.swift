/// A conversation's content sums, one per content kind, keyed by the kind's bytes: as SQL compares text, and as the
/// stores key every other name. `String`'s `==` takes canonically equivalent spellings (`é` and `e` followed by
/// U+0301) for one: keyed so, a record merged two such kinds when it recorded them, and the Redis store found a kind
/// asked for in one spelling under the other where the SQLite store did not.
public struct ContentSums: Sendable, Equatable, Sequence, ExpressibleByDictionaryLiteral {
    private var sums: [ByteKey: Double]

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

    /// How many kinds.
    public var count: Int { sums.count }

    public var isEmpty: Bool { sums.isEmpty }

    /// The kinds, in no particular order.
    public var keys: [String] { sums.keys.map(\.string) }

    public func makeIterator() -> some IteratorProtocol<(key: String, value: Double)> {
        sums.lazy.map { (key: $0.key.string, value: $0.value) }.makeIterator()
    }
}
