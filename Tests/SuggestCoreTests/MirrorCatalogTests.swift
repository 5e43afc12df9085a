import SuggestCore
import Testing

/// The bookkeeping of a server's ranking mirrors under queries of many accounts, made-up ones included.
@Suite struct MirrorCatalogTests {
    final class Mirror: MirroredState {
        let count: Int
        let estimatedBytes: Int
        init(count: Int = 10, bytes: Int = 1_000) {
            self.count = count
            estimatedBytes = bytes
        }
    }

    static func name(_ index: Int, length: Int = 12) -> [UInt8] {
        let digits = Array(String(index).utf8)
        return digits + [UInt8](repeating: UInt8(ascii: "q"), count: max(0, length - digits.count))
    }

    /// Queries the account past the demand that rebuilds it (a made-up account whose counters others share may
    /// just reach that demand), then builds and keeps its mirror.
    static func mirror(_ account: [UInt8], in catalog: inout MirrorCatalog<Mirror>) -> Bool {
        for _ in 0..<(catalog.configuration.readsBeforeRebuild + 3) { _ = catalog.mirror(of: account) }
        guard catalog.nextToRebuild() == account else { return false }
        catalog.keep(Mirror(), of: account)
        return catalog.mirror(of: account) != nil
    }

    /// A probe queried 68,000 made-up accounts of 4,000-byte names through one tenant's key: the table of
    /// tracked accounts only grew, so it filled (and held 260 MB of names), and no account queried after that, of
    /// any tenant, was ever mirrored again. Now the least recently queried accounts without a mirror make room.
    /// (Rebuilt at the first query here, so that every made-up account enters the table, as accounts queried
    /// often enough would.)
    @Test(arguments: [12, 4_000])
    func madeUpAccountsNeitherFillTheTableForGoodNorHoldUnboundedMemory(nameLength: Int) {
        var catalog = MirrorCatalog<Mirror>(RankingMirrorConfiguration(readsBeforeRebuild: 1))
        let kept = Self.name(-1, length: nameLength)
        #expect(Self.mirror(kept, in: &catalog))
        let capacity = min(MirrorCatalog<Mirror>.trackedAccounts, MirrorCatalog<Mirror>.trackedNameBudget / nameLength)
        let flood = capacity + 4_000
        for index in 0..<flood { _ = catalog.mirror(of: Self.name(index, length: nameLength)) }
        #expect(catalog.trackedCount > capacity / 3, "the flood entered the table")
        #expect(catalog.trackedCount <= MirrorCatalog<Mirror>.trackedAccounts)
        #expect(catalog.trackedCount * nameLength <= MirrorCatalog<Mirror>.trackedNameBudget + nameLength)
        // A mirror is never what makes room, and a new account after the flood is mirrored as before it.
        #expect(catalog.mirror(of: kept) != nil)
        #expect(Self.mirror(Self.name(flood + 1, length: nameLength), in: &catalog))
    }

    /// A steady flood of made-up accounts of 2,000-byte names (the table holds about 4,000 of them) and an account
    /// queried once every 6,000 of theirs: it was forgotten between its queries and never mirrored (a probe's flood,
    /// with a query every 2 s). Made-up accounts queried once no longer enter the table; this one does, at its
    /// fourth query.
    @Test func anAccountQueriedNowAndThenAmidAFloodIsMirrored() {
        var catalog = MirrorCatalog<Mirror>(RankingMirrorConfiguration(readsBeforeRebuild: 4))
        let regular = Self.name(-7)
        var junk = 0
        var rebuilt = false
        for _ in 0..<8 where !rebuilt {
            for _ in 0..<6_000 {
                _ = catalog.mirror(of: Self.name(junk, length: 2_000))
                junk += 1
            }
            _ = catalog.mirror(of: regular)
            rebuilt = catalog.nextToRebuild() == regular
        }
        #expect(rebuilt)
    }

    /// An account queried through the flood keeps its demand: the accounts forgotten are the less recently queried.
    @Test func anAccountQueriedThroughAFloodKeepsItsDemand() {
        var catalog = MirrorCatalog<Mirror>(RankingMirrorConfiguration(readsBeforeRebuild: 4))
        let regular = Self.name(-7)
        for index in 0..<(MirrorCatalog<Mirror>.trackedAccounts * 2) {
            _ = catalog.mirror(of: Self.name(index))
            if index % 20_000 == 0 { _ = catalog.mirror(of: regular) }
        }
        #expect(catalog.nextToRebuild() == regular)
    }
}

/// What a query read beside a mirror is kept within about the mirror's size (64 KiB at least), not only 4,096 of
/// each.
@Suite struct MirrorReadCacheTests {
    static func intent(_ index: Int, people: Int) -> SendMessageIntent {
        SendMessageIntent(
            conversationIdentifier: "c-\(index)",
            recipients: (0..<people).map { Person(customIdentifier: "p-\(index)-\($0)", displayName: "Person \($0)") })
    }

    /// A mirror of a few conversations is smaller than an answer that lists them: its answers have a room of their
    /// own all the same, or the next GET of the same context is ranked again.
    @Test func aSmallAccountsAnswersAreKept() {
        let cache = MirrorReadCache(mirrorBytes: 1)
        let key = RankedAnswers.Key(RankingContext(at: RankedAnswersTests.at), explain: false)
        let answer = RankedAnswersTests.list([1, 2, 3])
        _ = cache.answers.keep(answer, for: key, cutoff: nil, moments: RankedAnswersTests.always)
        #expect(cache.answers.answer(for: key, cutoff: nil, at: RankedAnswersTests.at) != nil)
    }

    /// An answer's key holds the query's people and exclusions: a long one counts, or queries excluding hundreds
    /// of made-up conversations, each answered with a short list, would keep up to 64 keys of tens of kilobytes in
    /// a small mirror's 16 KiB.
    @Test func longQueriesAreKeptWithinTheRoom() {
        let cache = MirrorReadCache(mirrorBytes: 1)
        let answer = RankedAnswersTests.list([1])
        let keys = (0..<24).map { query in
            let excluded = Set((0..<500).map { "made-up-conversation-\(query)-\($0)" })
            return RankedAnswers.Key(RankingContext(at: RankedAnswersTests.at, excluded: excluded), explain: false)
        }
        for key in keys { _ = cache.answers.keep(answer, for: key, cutoff: nil, moments: RankedAnswersTests.always) }
        let kept = keys.count { cache.answers.answer(for: $0, cutoff: nil, at: RankedAnswersTests.at) != nil }
        #expect(kept < 2, "\(kept) keys of about 16 KB kept in a room of 16 KiB")
    }

    @Test func largeIntentsAreKeptWithinTheBytes() {
        let cache = MirrorReadCache(mirrorBytes: 1 << 20)
        cache.keepIntents((0..<100).map { (Int32($0), Self.intent($0, people: 1_024)) })
        let kept = cache.intents((0..<100).map(Int32.init)).count { $0 != nil }
        // About 180 KB each: a handful within 1 MiB, where all 100 (18 MB) were kept.
        #expect(kept > 0 && kept < 10, "\(kept)")
    }

    @Test func ordinaryIntentsAreKeptUpToTheirNumber() {
        let cache = MirrorReadCache(mirrorBytes: 4 << 20)
        cache.keepIntents((0..<5_000).map { (Int32($0), Self.intent($0, people: 2)) })
        #expect(cache.intents((0..<5_000).map(Int32.init)).count { $0 != nil } == MirrorReadCache.limit)
    }

    /// Queries of made-up people fill the people's room, not the intents'.
    @Test func peopleDoNotTakeTheIntentsRoom() {
        let cache = MirrorReadCache(mirrorBytes: 0)
        for index in 0..<2_000 { cache.keepPeople("made-up-\(index)", [1]) }
        cache.keepIntents((0..<8).map { (Int32($0), Self.intent($0, people: 1)) })
        #expect(cache.intents((0..<8).map(Int32.init)).allSatisfy { $0 != nil })
    }

    @Test func peopleAreKeptWithinTheBytes() {
        let cache = MirrorReadCache(mirrorBytes: 0)
        for index in 0..<10 { cache.keepPeople("p-\(index)", Array(repeating: 1, count: 1_500)) }
        let kept = (0..<10).count { cache.people("p-\($0)") != nil }
        #expect(kept > 0 && kept < 4, "\(kept)")
    }
}
