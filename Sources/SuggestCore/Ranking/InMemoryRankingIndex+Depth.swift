extension InMemoryRankingIndex {
    /// The rank of one conversation under `ranker`, exact up to `depth` (a rank of `depth + 1` means deeper):
    /// `TopKRanker.rank(of:in:depth:)` on this index, called from inside the module so that the generic ranker is
    /// specialized for it.
    /// - Complexity: see `TopKRanker.rank(of:in:depth:)`.
    public func rank(of slot: Int32, using ranker: TopKRanker, depth: Int) throws -> (Int, RankedConversation)? {
        try ranker.rank(of: Int64(slot), in: self, depth: depth)
    }

    /// `rank(of:using:depth:)`, counting the walk's accesses into `statistics`, for benchmarks.
    public func rank(of slot: Int32, using ranker: TopKRanker, depth: Int, statistics: inout TopKRanker.Statistics)
        throws
        -> (Int, RankedConversation)?
    {
        try ranker.rank(of: Int64(slot), in: self, depth: depth, statistics: &statistics)
    }
}
