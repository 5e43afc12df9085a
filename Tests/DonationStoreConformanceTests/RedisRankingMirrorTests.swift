import RedisCluster
import SuggestCore
import SuggestRedisStore
import SuggestTestSupport
import Testing

/// A Redis store with a `RedisRankingMirror` answers exactly as one without, through every kind of write by another
/// client and by itself, on a real local cluster; and it ranks from memory whenever nothing was written since the
/// mirror was read.
@Suite(.serialized) struct RedisRankingMirrorTests {
    struct Stores {
        let writer: RedisDonationStore
        let reference: RedisDonationStore
        let mirrored: RedisDonationStore
        let mirror: RedisRankingMirror

        init(_ configuration: RankingMirrorConfiguration = .init(readsBeforeRebuild: 1)) throws {
            let cluster = try RedisConformanceTests.emptyCluster("ranking-mirror")
            writer = try RedisDonationStore.open(url: cluster.url)
            reference = try RedisDonationStore.open(url: cluster.url)
            mirror = RedisRankingMirror(configuration)
            mirrored = try RedisDonationStore.open(client: try RedisClusterClient(url: cluster.url), mirror: mirror)
        }

        /// Rebuilds every account that queries missed.
        func refreshAll() throws {
            for _ in 0..<16 where try mirror.refresh(store: mirrored) {}
        }
    }

    @Test func rowsOfAnotherPolicyAreWalkedToTheEnd() throws {
        let cluster = try RedisConformanceTests.emptyCluster("ranking-mirror")
        let mirror = RedisRankingMirror(.init(readsBeforeRebuild: 1))
        try StoreConformance.walksRowsOfAnotherPolicyToTheEnd(
            open: {
                let client = try RedisClusterClient(url: cluster.url)
                return try RedisDonationStore.open(client: client, ranking: $0, mirror: mirror)
            },
            settle: { store in _ = try mirror.refresh(store: store) })
        #expect(mirror.statistics.hits > 0)
    }

    @Test(arguments: [UInt64(1), 2])
    func theMirroredStoreAnswersAsTheStoreDoes(seed: UInt64) throws {
        let stores = try Stores()
        try RankingMirrorTests.answerAsTheStoreDoes(
            seed: seed, writer: stores.writer, reference: stores.reference, mirrored: stores.mirrored,
            statistics: { stores.mirror.statistics }, refreshAll: stores.refreshAll, perAccount: true,
            // Each store keeps the settings it read for 50 ms: a retention changed by another is seen after that.
            settle: { RankingMirrorTests.pause(milliseconds: 60) })
    }

    @Test func keptAnswersHoldAsTimePasses() throws {
        let stores = try Stores()
        try RankingMirrorTests.keptAnswersHoldAsTimePasses(
            writer: stores.writer, reference: stores.reference, mirrored: stores.mirrored,
            statistics: { stores.mirror.statistics }, refreshAll: stores.refreshAll,
            settle: { RankingMirrorTests.pause(milliseconds: 60) })
    }

    /// Deleting every key of the store deletes the accounts' stamps first: no mirror is used afterwards, and one
    /// built before does not come back when an account of the same name is written again.
    @Test func aMirrorDoesNotOutliveDeletingEverything() throws {
        let stores = try Stores()
        let end = StoreConformanceTests.end
        let first = (0..<40).map { index in
            Interaction(
                identifier: "a\(index)", date: end.adding(-Double(index) * 60), direction: .outgoing,
                intent: SendMessageIntent(conversationIdentifier: "old\(index % 5)"))
        }
        _ = try stores.writer.importDonations(first, options: ImportOptions(now: end))
        let context = RankingContext(at: end)
        _ = try stores.mirrored.suggestions(account: "default", context: context)
        try stores.refreshAll()
        #expect(stores.mirror.statistics.accounts == 1)
        _ = try stores.writer.deleteEverything()
        #expect(try stores.mirrored.suggestions(account: "default", context: context).suggestions.isEmpty)
        let again = Interaction(
            identifier: "b0", date: end, direction: .outgoing, intent: SendMessageIntent(conversationIdentifier: "new"))
        _ = try stores.writer.record(again, now: end)
        let answer = try stores.mirrored.suggestions(account: "default", context: context)
        #expect(answer.suggestions.map(\.conversationIdentifier) == ["new"])
        #expect(answer == (try stores.reference.suggestions(account: "default", context: context)))
    }

    /// A query from memory costs one round trip: the stamp. Its intents and people are read once, then kept with
    /// the mirror.
    @Test func aMirroredQueryReadsOnlyTheStamp() throws {
        let stores = try Stores()
        let end = StoreConformanceTests.end
        let donations = (0..<300).map { index in
            Interaction(
                identifier: "d\(index)", date: end.adding(-Double(index) * 60), direction: .outgoing,
                intent: SendMessageIntent(
                    conversationIdentifier: "c\(index % 60)", recipients: [Person(customIdentifier: "p\(index % 7)")]))
        }
        _ = try stores.writer.importDonations(donations, options: ImportOptions(now: end))
        let context = RankingContext(at: end, people: ["p3"])
        _ = try stores.mirrored.suggestions(account: "default", context: context)
        try stores.refreshAll()
        let first = try stores.mirrored.suggestions(account: "default", context: context)
        #expect(first == (try stores.reference.suggestions(account: "default", context: context)))
        let before = stores.mirror.statistics
        for _ in 0..<3 {
            #expect(try stores.mirrored.suggestions(account: "default", context: context) == first)
        }
        let after = stores.mirror.statistics
        #expect(after.hits == before.hits + 3 && after.abandoned == 0)
        // A write by another client is seen by the next query.
        let top = first.suggestions[0].conversationIdentifier
        try stores.writer.setBlocked(true, conversation: top, account: "default")
        let blocked = try stores.mirrored.suggestions(account: "default", context: context)
        #expect(blocked == (try stores.reference.suggestions(account: "default", context: context)))
        #expect(blocked != first)
        #expect(stores.mirror.statistics.staleReads == after.staleReads + 1)
    }
}
