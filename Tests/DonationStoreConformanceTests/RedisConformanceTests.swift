import Dispatch
import RedisCluster
import SuggestCore
import SuggestRedisStore
import SuggestSQLiteStore
import SuggestTestSupport
import Synchronization
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

    @Test func redisHoldsAnImportToItsRequiredAccount() throws {
        let cluster = try Self.emptyCluster()
        try StoreConformance.holdsAnImportToItsRequiredAccount(
            reference: InMemoryDonationStore(), candidate: try RedisDonationStore.open(url: cluster.url))
    }

    @Test func redisWalksRowsOfAnotherPolicyToTheEnd() throws {
        let cluster = try Self.emptyCluster()
        try StoreConformance.walksRowsOfAnotherPolicyToTheEnd {
            try RedisDonationStore.open(url: cluster.url, ranking: $0)
        }
    }

    @Test func redisForgetsSuggestLessWithADeletedConversation() throws {
        let cluster = try Self.emptyCluster()
        try StoreConformance.forgetsSuggestLessWithDeletion(
            reference: InMemoryDonationStore(), candidate: try RedisDonationStore.open(url: cluster.url))
    }

    /// An older version's process beside this one rebuilds under its own rule, a step at a time, leaving this
    /// version's fingerprint in place until it is done: its bookmark, naming another policy, is noticed, and every
    /// conversation is rebuilt again.
    @Test func anOlderVersionsPassUnderWayIsRedone() throws {
        let cluster = try Self.emptyCluster()
        let client = try RedisClusterClient(url: cluster.url)
        let end = StoreConformanceTests.end
        do {
            let store = try RedisDonationStore.open(url: cluster.url)
            _ = try store.setRetention(Retention(maximumAgeDays: 0, idleDays: 0), now: end)
            _ = try store.record(
                Interaction(
                    account: "a", identifier: "d1", date: end, direction: .outgoing,
                    intent: SendMessageIntent(conversationIdentifier: "c", recipients: [Person(customIdentifier: "u-1")])),
                now: end)
            _ = try store.maintain(account: nil, now: end, budget: .unbounded)
            #expect(try !store.owesRebuild())
        }
        _ = try client.send(RedisCommand("HSET", key: "sg:settings", "ranking.recompute", "the policy of a version before@a#1"))
        let store = try RedisDonationStore.open(url: cluster.url)
        #expect(try store.owesRebuild())
        let report = try store.maintain(account: nil, now: end, budget: .unbounded)
        #expect(report.isComplete)
        #expect(try !store.owesRebuild())
        #expect(try client.send(RedisCommand("HGET", key: "sg:settings", "ranking.recompute")).isNull)
    }

    @Test func redisKeepsEquivalentSpellingsApartInOneWrite() throws {
        let cluster = try Self.emptyCluster()
        let (reference, candidate) = try StoreConformance.keepingEverything(try RedisDonationStore.open(url: cluster.url))
        try StoreConformance.keepsEquivalentSpellingsApartInOneWrite(reference: reference, candidate: candidate)
    }

    /// And the lists of the kinds let go are gone from the nodes: one list per kind and channel, for the kinds kept.
    @Test func redisKeepsTheSameKindsAsTheReference() throws {
        let cluster = try Self.emptyCluster()
        let store = try RedisDonationStore.open(url: cluster.url)
        let (reference, candidate) = try StoreConformance.keepingEverything(store)
        try StoreConformance.keepsAtMostTheLimitOfKinds(reference: reference, candidate: candidate)
        let client = try RedisClusterClient(url: cluster.url)
        var lists = 0
        for reply in try client.sendToEveryMaster(RedisCommand("KEYS", "*:zk*org.example.k*")) {
            lists += try reply.result.get().array?.count ?? 0
        }
        let channels = StoreRanking.default.base.channels.count
        #expect(lists == StoreConformance.keptKinds.afterDeletion.count * channels)
    }

    @Test func redisFindsAPersonAmongTheSenders() throws {
        let cluster = try Self.emptyCluster()
        let (reference, candidate) = try StoreConformance.keepingEverything(try RedisDonationStore.open(url: cluster.url))
        try StoreConformance.findsAPersonAmongTheSenders(reference: reference, candidate: candidate)
    }

    @Test func redisRecordsDatesAtExportPrecision() throws {
        let cluster = try Self.emptyCluster()
        let (reference, candidate) = try StoreConformance.keepingEverything(try RedisDonationStore.open(url: cluster.url))
        try StoreConformance.recordsDatesAtExportPrecision(reference: reference, candidate: candidate)
    }

    @Test func redisShowsTheLatestDonationThatDescribes() throws {
        let cluster = try Self.emptyCluster()
        try StoreConformance.showsTheLatestDonationThatDescribes(
            reference: InMemoryDonationStore(), candidate: try RedisDonationStore.open(url: cluster.url))
    }

    /// Conversations written before the hashes kept `dd` (the date of the latest donation that describes them):
    /// a late, older describing donation does not replace what they show (it did: read as never described), and
    /// maintenance rebuilds them under the rule, as after a change of policy, so that one shown by a message
    /// received with its sender only shows its name again.
    @Test func conversationsWrittenBeforeTheShownRuleAreRebuilt() throws {
        let cluster = try Self.emptyCluster()
        let client = try RedisClusterClient(url: cluster.url)
        let end = StoreConformanceTests.end
        func donation(_ identifier: String, _ conversation: String, at offset: Double, name: String?) -> Interaction {
            Interaction(
                account: "a", identifier: identifier, date: end.adding(offset), direction: name == nil ? .incoming : .outgoing,
                intent: SendMessageIntent(
                    conversationIdentifier: conversation, speakableGroupName: name,
                    sender: name == nil ? Person(customIdentifier: "u-1") : nil))
        }
        let store = try RedisDonationStore.open(url: cluster.url)
        for recorded in [
            donation("c1", "c", at: -100, name: "A"), donation("c2", "c", at: -80, name: "B"),
            donation("k1", "k", at: -100, name: "K"), donation("k2", "k", at: -90, name: nil),
        ] {
            _ = try store.record(recorded, now: end)
        }
        // What a version before `dd` left: no `dd`, `k` shown by its latest donation (sender only), the fingerprint
        // of the policy alone.
        var bare: [UInt8] = []
        for conversation in ["c", "k"] {
            guard let number = try client.send(RedisCommand("HGET", key: "sg:{a}:cid", conversation)).string else {
                Issue.record("no number for \(conversation)")
                return
            }
            let hash = "sg:{a}:c:" + number
            _ = try client.send(RedisCommand("HDEL", key: hash, "dd"))
            if conversation == "k" {
                let snapshots = try client.send(RedisCommand("HVALS", key: "sg:{a}:sn:" + number)).array ?? []
                bare = snapshots.compactMap(\.bytes).first { !String(decoding: $0, as: UTF8.self).contains("K") } ?? []
                #expect(!bare.isEmpty)
                _ = try client.send(RedisCommand("HSET", key: hash, "i", bare))
            }
        }
        #expect(try client.send(RedisCommand("HGET", key: "sg:settings", "layout.shown")).string == "1")
        _ = try client.send(RedisCommand("HDEL", key: "sg:settings", "layout.shown"))
        let reopened = try RedisDonationStore.open(url: cluster.url)
        func shown(_ conversation: String) throws -> String? {
            try reopened.suggestions(account: "a", context: RankingContext(at: end)).suggestions
                .first { $0.conversationIdentifier == conversation }?.speakableGroupName
        }
        #expect(try shown("k") == nil, "as the old version left it")
        _ = try reopened.record(donation("c3", "c", at: -90, name: "Older"), now: end)
        #expect(try shown("c") == "B")
        _ = try reopened.maintain(account: nil, now: end, budget: .unbounded)
        #expect(try client.send(RedisCommand("HGET", key: "sg:settings", "layout.shown")).string == "1")
        #expect(try shown("k") == "K")
        #expect(try shown("c") == "B")
        // An older version still writing beside this one leaves hashes without `dd`: read as described at their
        // latest donation, and no cause for another rebuild (a fingerprint that changed made the two versions
        // rebuild every conversation in turn).
        if let number = try client.send(RedisCommand("HGET", key: "sg:{a}:cid", "c")).string {
            _ = try client.send(RedisCommand("HDEL", key: "sg:{a}:c:" + number, "dd"))
        }
        #expect(try reopened.maintain(account: nil, now: end, budget: .unbounded).recomputedConversations == 0)
        #expect(try shown("c") == "B")
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

    /// An import of several rounds (`RedisDonationStore.chunkSize` donations each) into one account: each round is
    /// read and computed while the one before it runs (`ImportRounds`), taking the conversations they share, and the
    /// learned weights, from what that round leaves instead of reading them. Both stores must still agree to the
    /// bit, and an identifier the round in flight records counts as a duplicate in the next.
    @Test func anImportOfManyRoundsMatchesTheReference() throws {
        let cluster = try Self.emptyCluster()
        let store = try RedisDonationStore.open(url: cluster.url)
        let reference = InMemoryDonationStore()
        let conformance = StoreConformance(seed: 11)
        let retention = Retention(maximumAgeDays: 0, idleDays: 0)
        _ = try reference.setRetention(retention, now: StoreConformanceTests.end)
        _ = try store.setRetention(retention, now: StoreConformanceTests.end)
        var random = SeededRandom(seed: 11)
        var next = 0
        var donations = (0..<(RedisDonationStore.chunkSize + 1_500)).map { _ in
            var donation = conformance.donation(&random, number: &next)
            donation.account = "default"
            return donation
        }
        // In the second round, identifiers the first one records, the last of them and one well before.
        let repeats = [(RedisDonationStore.chunkSize + 10, 4_990), (RedisDonationStore.chunkSize + 20, 7)]
        for (position, repeated) in repeats {
            var again = conformance.donation(&random, number: &next, repeating: repeated)
            again.account = "default"
            donations.insert(again, at: position)
        }
        let options = ImportOptions(now: StoreConformanceTests.end)
        let report = try store.importDonations(donations, options: options)
        try conformance.expectEqual(try reference.importDonations(donations, options: options), report, "the import")
        #expect(report.duplicates == 2)
        try conformance.compare(reference, store, &random, step: "after the import")
        // Again, and with the other accounts' donations among them: nothing new, then each account's rounds in turn.
        try conformance.expectEqual(
            try reference.importDonations(donations, options: options),
            try store.importDonations(donations, options: options), "the same import again")
        let mixed = (0..<3_000).map { _ in conformance.donation(&random, number: &next) }
        try conformance.expectEqual(
            try reference.importDonations(mixed, options: options), try store.importDonations(mixed, options: options),
            "an import of every account")
        try conformance.compare(reference, store, &random, step: "after the import of every account")
    }

    /// An account another client deleted while this store still counts it among the accounts it listed: the
    /// import's first reservation of numbers finds the account's sequence counter new and lists the account again
    /// at once, whatever becomes of that round afterwards (sent, read again, or all duplicates).
    @Test func anImportListsAgainAnAccountAnotherClientDeleted() throws {
        let cluster = try Self.emptyCluster()
        let importer = try RedisDonationStore.open(url: cluster.url)
        let other = try RedisDonationStore.open(url: cluster.url)
        _ = try importer.setRetention(Retention(maximumAgeDays: 0, idleDays: 0), now: StoreConformanceTests.end)
        let conformance = StoreConformance(seed: 12)
        var random = SeededRandom(seed: 12)
        var next = 0
        func batch(_ count: Int) -> [Interaction] {
            (0..<count).map { _ in
                var donation = conformance.donation(&random, number: &next)
                donation.account = "default"
                return donation
            }
        }
        let options = ImportOptions(now: StoreConformanceTests.end)
        _ = try importer.importDonations(batch(200), options: options)
        _ = try other.delete(.all, account: "default")
        #expect(try !other.accounts().contains("default"))
        _ = try importer.importDonations(batch(RedisDonationStore.chunkSize + 200), options: options)
        #expect(try other.accounts().contains("default"))
    }

    /// Two clients import into one account at once, each in several rounds: a round computed from the one in
    /// flight is read again when the other client overtook that one (`ImportRounds`). Every donation is recorded
    /// once, the weights are the fold of the export's order, and the account ranks as its export does in the
    /// reference.
    @Test func twoImportsOfManyRoundsIntoOneAccountAtOnce() throws {
        let cluster = try Self.emptyCluster()
        let url = cluster.url
        let check = LearnedWeightsCheck()
        try check.keepEverything(try RedisDonationStore.open(url: url))
        let history = LearnedWeightsCheck.history(seed: 26, donations: RedisDonationStore.chunkSize * 2 + 2_000)
        let failures = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 2) { worker in
            do {
                let store = try RedisDonationStore.open(url: url)
                let mine = history.enumerated().filter { $0.offset % 2 == worker }.map(\.element)
                _ = try store.importDonations(mine, options: ImportOptions(now: LearnedWeightsCheck.end))
            } catch {
                failures.withLock { $0.append("\(error)") }
            }
        }
        #expect(failures.withLock { $0 } == [])
        let store = try RedisDonationStore.open(url: url)
        var exported: [Interaction] = []
        try store.forEachDonation(account: "default") { exported.append($0) }
        #expect(exported.count == history.count)
        #expect(Set(exported.compactMap(\.identifier)).count == history.count)
        #expect(try store.learnedWeights(account: "default") == LearnedWeightsCheck.fold(exported))
        let reference = InMemoryDonationStore()
        try check.keepEverything(reference)
        _ = try reference.importDonations(exported, options: ImportOptions(now: LearnedWeightsCheck.end))
        var random = SeededRandom(seed: 26)
        for context in StoreConformance(seed: 26).contexts(&random) {
            #expect(
                try store.suggestions(account: "default", context: context, explain: true)
                    == reference.suggestions(account: "default", context: context, explain: true), "\(context)")
        }
    }

    /// Every single donation changes the account's learned weights, which every round of an import checks: with
    /// other clients recording one donation after another, an import's round of thousands never found them
    /// unchanged, and the import ended busy after 50 tries. It takes the account's write lease instead, and lands,
    /// with the weights learned in the order of the donations recorded.
    @Test func anImportLandsWhileSingleDonationsKeepArriving() throws {
        let cluster = try Self.emptyCluster()
        let check = LearnedWeightsCheck()
        try check.keepEverything(try RedisDonationStore.open(url: cluster.url))
        let batch = LearnedWeightsCheck.history(seed: 27, donations: RedisDonationStore.chunkSize + 1_000)
        let singles = try Self.whileRecordingSingles(into: cluster) { store in
            let report = try store.importDonations(batch, options: ImportOptions(now: LearnedWeightsCheck.end))
            #expect(report.recorded == batch.count)
            // What `/metrics` shows of it: a loss (its round overtaken, or stopped by a single donation's lease,
            // as the race falls), and the lease it took.
            #expect(store.contention.conflicts + store.contention.leasedTries >= 1)
            #expect(store.contention.leasesTaken >= 1)
        }
        let store = try RedisDonationStore.open(url: cluster.url)
        var exported: [Interaction] = []
        try store.forEachDonation(account: "default") { exported.append($0) }
        // That the import's rounds had single donations to lose to is the contention checked above (a count of
        // singles was: 80 on a loaded machine, where 100 were asked for).
        #expect(exported.count == batch.count + singles)
        #expect(Set(exported.compactMap(\.identifier)).count == exported.count)
        #expect(try store.learnedWeights(account: "default") == LearnedWeightsCheck.fold(exported))
    }

    /// A deletion folds the account's weights again from every donation left, which takes a while on a large
    /// account: every single donation recorded meanwhile made the fold's script lose, and after 20 folds (12 s
    /// on 100k donations) the weights stayed marked, still holding what the deleted donations taught them. The
    /// fold takes the account's write lease after one loss.
    @Test func aDeletionFoldsTheWeightsWhileSingleDonationsKeepArriving() throws {
        let cluster = try Self.emptyCluster()
        let check = LearnedWeightsCheck()
        let setUp = try RedisDonationStore.open(url: cluster.url)
        try check.keepEverything(setUp)
        let history = LearnedWeightsCheck.history(seed: 29, donations: 12_000)
        _ = try setUp.importDonations(history, options: ImportOptions(now: LearnedWeightsCheck.end))
        let client = try RedisClusterClient(url: cluster.url)
        _ = try Self.whileRecordingSingles(into: cluster) { store in
            let report = try store.delete(.conversation("c3"), account: "default")
            #expect(report.donations > 100)
            // Read while the single donations go on: folded, not left marked.
            let mark = try client.send(RedisCommand("HGET", key: "sg:{default}:lw", "fold"))
            #expect(mark.isNull)
        }
        var exported: [Interaction] = []
        try setUp.forEachDonation(account: "default") { exported.append($0) }
        #expect(!exported.contains { $0.conversationIdentifier == "c3" && !($0.identifier ?? "").hasPrefix("s-") })
        #expect(try setUp.learnedWeights(account: "default") == LearnedWeightsCheck.fold(exported))
    }

    /// Maintenance waits for a recording's write lease, but briefly: then it leaves that account for a later step
    /// and expires the others' donations. (Waiting as a recording does, 15 s for each conversation it rewrote, one
    /// busy account held back every account after it, and a server's shutdown with them.)
    @Test func maintenanceLeavesAnAccountWhoseLeaseIsHeldForALaterStep() throws {
        let cluster = try Self.emptyCluster()
        let store = try RedisDonationStore.open(url: cluster.url)
        let end = LearnedWeightsCheck.end
        _ = try store.setRetention(Retention(maximumAgeDays: 100, idleDays: 0), now: end)
        for account in ["a", "b"] {
            let history = LearnedWeightsCheck.history(seed: 30).map { donation in
                var owned = donation
                owned.account = account
                return owned
            }
            _ = try store.importDonations(history, options: ImportOptions(now: end))
        }
        func count(_ account: String) throws -> Int {
            var count = 0
            try store.forEachDonation(account: account) { _ in count += 1 }
            return count
        }
        let before = try count("a")
        #expect(try count("b") == before)
        // Another writer's lease on a, for longer than the step may wait; 50 days on, 100 days back reaches into
        // the history's 60.
        let client = try RedisClusterClient(url: cluster.url)
        _ = try client.send(RedisCommand("SET", key: "sg:{a}:lease", "another-writer", "PX", 20_000))
        let later = Timestamp(seconds: end.seconds + 50 * LearnedWeightsCheck.day)
        let started = ContinuousClock.now
        let step = try store.maintain(account: nil, now: later, budget: .unbounded)
        #expect(ContinuousClock.now - started < .seconds(10))
        #expect(!step.isComplete)
        #expect(try count("a") == before)
        let kept = try count("b")
        #expect(kept < before && kept > 0)
        // Once the lease is gone, a's turn.
        _ = try client.send(RedisCommand("DEL", key: "sg:{a}:lease"))
        let next = try store.maintain(account: nil, now: later, budget: .unbounded)
        #expect(next.isComplete)
        #expect(try count("a") == kept)
    }

    /// A lease key without an expiry, which no writer of this store sets (only a hand can), lapses as a writer's
    /// lease would: before, every recording of the account waited out its 15 s of patience and answered busy, for
    /// as long as the key stayed.
    @Test func aLeaseWithoutAnExpiryLapsesAsAWritersWould() throws {
        let cluster = try Self.emptyCluster()
        let store = try RedisDonationStore.open(url: cluster.url)
        let client = try RedisClusterClient(url: cluster.url)
        _ = try client.send(RedisCommand("SET", key: "sg:{a}:lease", "set-by-hand"))
        let end = StoreConformanceTests.end
        let started = ContinuousClock.now
        let outcome = try store.record(
            Interaction(
                account: "a", identifier: "d1", date: end, direction: .outgoing,
                intent: SendMessageIntent(conversationIdentifier: "c", recipients: [Person(customIdentifier: "u-1")])),
            now: end)
        #expect(ContinuousClock.now - started < .seconds(10))
        guard case .recorded = outcome else {
            Issue.record("the donation was not recorded: \(outcome)")
            return
        }
        #expect(try client.send(RedisCommand("EXISTS", key: "sg:{a}:lease")).integer == 0)
    }

    /// Runs `body` with a store of its own while two other clients record single donations into the account
    /// `default`, one after another, from before `body` starts until it returns.
    /// - Returns: how many single donations were recorded (at least 20 before `body` started).
    private static func whileRecordingSingles(
        into cluster: LocalRedisCluster, _ body: (RedisDonationStore) throws -> Void
    ) throws -> Int {
        let singles = LearnedWeightsCheck.history(seed: 28, donations: 40_000).map { donation in
            var single = donation
            single.identifier = "s-" + (donation.identifier ?? "")
            return single
        }
        let running = Atomic<Bool>(true)
        let singlesStarted = DispatchSemaphore(value: 0)
        let recorded = Atomic<Int>(0)
        let failures = Mutex<[String]>([])
        let donors = DispatchGroup()
        // A queue each: each has a thread of its own while it runs, whatever the machine's cores.
        for donor in 0..<2 {
            DispatchQueue(label: "single donations \(donor)").async(group: donors) {
                do {
                    let store = try RedisDonationStore.open(url: cluster.url)
                    for (index, donation) in singles.enumerated() where index % 2 == donor {
                        guard running.load(ordering: .acquiring) else { break }
                        _ = try store.record(donation, now: LearnedWeightsCheck.end)
                        if recorded.add(1, ordering: .relaxed).newValue == 20 { singlesStarted.signal() }
                    }
                } catch {
                    failures.withLock { $0.append("\(error)") }
                    singlesStarted.signal()
                }
            }
        }
        do {
            _ = singlesStarted.wait(timeout: .now() + 30)
            try body(try RedisDonationStore.open(url: cluster.url))
        } catch {
            failures.withLock { $0.append("\(error)") }
        }
        running.store(false, ordering: .releasing)
        donors.wait()
        #expect(failures.withLock { $0 } == [])
        let count = recorded.load(ordering: .relaxed)
        #expect(count > 20)
        return count
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
