/// Strings in the order they were first inserted, each kept once by its bytes, as SQL and Redis compare them (`==`
/// would take two canonically equivalent spellings of a name for one).
///
/// For what a conversation gains donation by donation (its group identifiers, its people's keys): a look-up in a
/// set, where a scan of those met before would make each donation's cost grow with them, and a history of one
/// conversation whose every message carries its own group identifier quadratic.
package struct DistinctStrings: Sendable {
    /// The strings, in the order they were first inserted.
    package private(set) var elements: [String] = []
    private var keys: Set<ByteKey> = []

    package init() {}

    /// The distinct strings of `strings`, in their order.
    package init(_ strings: some Sequence<String>) {
        for string in strings { insert(string) }
    }

    /// Adds `string` unless a string of the same bytes is here already.
    /// - Returns: whether it was added.
    @discardableResult
    package mutating func insert(_ string: String) -> Bool {
        guard keys.insert(ByteKey(string)).inserted else { return false }
        elements.append(string)
        return true
    }

    /// Whether a string of the same bytes as `string` is here.
    package func contains(_ string: String) -> Bool { keys.contains(ByteKey(string)) }

    package var count: Int { elements.count }
}
