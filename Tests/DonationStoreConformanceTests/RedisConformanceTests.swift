import RedisCluster
import SuggestCore
import SuggestRedisStore
import SuggestSQLiteStore
import SuggestTestSupport
import Testing

/// The Redis Cluster store against the reference, on a real local cluster of 3 masters and 3 replicas (started by
/// the suite, stopped when the tests end): the same scripts as the SQLite store's, and the same export and ranking
/// as the SQLite store on the public histories.
@Suite(.serialized) struct RedisConformanceTests {
    /// A cluster shared by the tests of one suite, emptied before each test. Each suite names its own: suites run
    /// at the same time, and one suite's `FLUSHALL` would empty another's stores in the middle of a test.
    static func emptyCluster(_ name: String = "conformance") throws -> LocalRedisCluster {
        let cluster = try LocalRedisCluster.shared(name)
        let client = try RedisClusterClient(url: cluster.url)
        for reply in try client.sendToEveryMaster(RedisCommand("FLUSHALL")) { _ = try reply.result.get() }
        return cluster
    }

    @Test(arguments: [UInt64(1), 2, 3])
    func redisMatchesTheReference(seed: UInt64) throws {
        let cluster = try Self.emptyCluster()
        let store = try RedisDonationStore.open(url: cluster.url)
        try StoreConformance(seed: seed).run(reference: InMemoryDonationStore(), candidate: store, steps: 30)
    }

    @Test func redisForgetsSuggestLessWithADeletedConversation() throws {
        let cluster = try Self.emptyCluster()
        try StoreConformance.forgetsSuggestLessWithDeletion(
            reference: InMemoryDonationStore(), candidate: try RedisDonationStore.open(url: cluster.url))
    }

    @Test func redisShowsTheLatestDonationThatDescribes() throws {
        let cluster = try Self.emptyCluster()
        try StoreConformance.showsTheLatestDonationThatDescribes(
            reference: InMemoryDonationStore(), candidate: try RedisDonationStore.open(url: cluster.url))
    }

    @Test func redisFindsTheConversationOfADonation() throws {
        let cluster = try Self.emptyCluster()
        try StoreConformance.findsTheConversationOfADonation(
            reference: InMemoryDonationStore(), candidate: try RedisDonationStore.open(url: cluster.url))
    }

    @Test func redisRecordsAShareOnlyToAConversationThatStillExists() throws {
        let cluster = try Self.emptyCluster()
        try StoreConformance.recordsSharesOnlyToExistingConversations(
            reference: InMemoryDonationStore(), candidate: try RedisDonationStore.open(url: cluster.url))
    }

    @Test(arguments: LearnedWeightsCheck.selectors)
    func redisDeletionLeavesTheWeightsOfTheRemainingHistory(selector: DeletionSelector) throws {
        let cluster = try Self.emptyCluster()
        try LearnedWeightsCheck().deletion(selector, in: try RedisDonationStore.open(url: cluster.url))
    }

    @Test func redisExpiryFoldsOnceADay() throws {
        let cluster = try Self.emptyCluster()
        try LearnedWeightsCheck().expiry(in: try RedisDonationStore.open(url: cluster.url), budget: .unbounded)
    }

    @Test func redisExpiryInSmallStepsFoldsWhenItIsComplete() throws {
        let cluster = try Self.emptyCluster()
        try LearnedWeightsCheck().expiry(
            in: try RedisDonationStore.open(url: cluster.url), budget: MaintenanceBudget(conversations: 3))
    }

    /// Two clients of one account (two connections, as two servers would hold): each round reads the weights the
    /// other committed, and the script's version check makes a round that was overtaken read them again.
    @Test func twoClientsOfOneAccountLearnInTurn() throws {
        let cluster = try Self.emptyCluster()
        try LearnedWeightsCheck().twoDonors(
            try RedisDonationStore.open(url: cluster.url), try RedisDonationStore.open(url: cluster.url))
    }

    /// Two clients record into one account at the same time: the weights' version check makes every round that
    /// another overtook read again, so the weights are the fold of the export's order.
    @Test func twoClientsRecordingAtOnceLoseNothingLearned() throws {
        let cluster = try Self.emptyCluster()
        let url = cluster.url
        try LearnedWeightsCheck().concurrentDonors { try RedisDonationStore.open(url: url) }
    }

    @Test func aClientWithFixedWeightsLeavesTheWeightsToBeFolded() throws {
        let cluster = try Self.emptyCluster()
        let learned = try RedisDonationStore.open(url: cluster.url)
        let fixed = try RedisDonationStore.open(url: cluster.url, ranking: .fixed(LearnedPolicy.default.base))
        try LearnedWeightsCheck().fixedThenLearned(fixed: fixed, learned: learned)
    }

    @Test func redisMatchesSQLiteOnTheSampleHistory() throws {
        let cluster = try Self.emptyCluster()
        let redis = try RedisDonationStore.open(url: cluster.url)
        let directory = try TemporaryDirectory("conformance")
        let sqlite = try SQLiteDonationStore.open(StoreLocation(directory: directory.path))
        let keepEverything = Retention(maximumAgeDays: 0, idleDays: 0)
        _ = try redis.setRetention(keepEverything, now: .now())
        _ = try sqlite.setRetention(keepEverything, now: .now())
        let path = Suggest.packageRoot + "/SampleData/donations.jsonl"
        for store in [redis as any DonationStore, sqlite] {
            let lines = MemoryJSONLines(bytes: try readFile(path))
            let report = try store.importJSONLines(
                from: lines, options: ImportOptions(now: Timestamp(seconds: 1_796_000_000)), progress: { _ in },
                interruption: {})
            #expect(report.recorded == 238)
        }
        let conformance = StoreConformance(seed: 7)
        var random = SeededRandom(seed: 7)
        try conformance.compare(sqlite, redis, &random, step: "the sample history")
        for selector in [DeletionSelector.conversation("u-juan"), .groupIdentifier("g-work"), .before(Timestamp(seconds: 1_795_000_000))] {
            try conformance.expectEqual(
                try sqlite.delete(selector, account: "default"), try redis.delete(selector, account: "default"),
                "delete \(selector)")
            try conformance.compare(sqlite, redis, &random, step: "after \(selector)")
        }
    }
}
