import SuggestCore

/// A `RankingSource` that counts what the ranker asks of the source it wraps: sorted accesses (cursor steps) and
/// random accesses (candidates). Used in an untimed pass beside the timed one.
///
/// (`TopKRanker.Statistics` would say the same, but it has no public initializer, so code outside SuggestCore
/// cannot call `top(in:explain:statistics:)`.)
final class CountingSource<Base: RankingSource>: RankingSource {
    let base: Base
    private(set) var sortedAccesses = 0
    private(set) var randomAccesses = 0

    init(_ base: Base) { self.base = base }

    func sortedAccess(_ list: RankingList) throws -> any SortedAccessCursor {
        Cursor(base: try base.sortedAccess(list), owner: self)
    }

    func candidate(_ reference: Int64, contentKinds: [String]) throws -> RankingCandidate? {
        randomAccesses += 1
        return try base.candidate(reference, contentKinds: contentKinds)
    }

    func conversations(withPerson key: String) throws -> [Int64] { try base.conversations(withPerson: key) }

    func allReferences() throws -> [Int64] { try base.allReferences() }

    struct Cursor: SortedAccessCursor {
        var base: any SortedAccessCursor
        let owner: CountingSource

        mutating func next() throws -> (key: Double, reference: Int64)? {
            owner.sortedAccesses += 1
            return try base.next()
        }
    }
}
