import Dispatch
import RedisCluster
import SuggestCore
import SuggestRedisStore
import SuggestTestSupport
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The store on a real local Redis Cluster (3 masters, 3 replicas, started by the tests): nothing acknowledged is
/// lost when a master is killed or a slot moves, deleted data leaves every node's files, and every fault a user
/// meets is one line.
@Suite(.serialized) struct RedisStoreTests {
    static let now = Timestamp.now()

    static func donation(_ id: String, account: String, conversation: String, secret: String = "") -> Interaction {
        Interaction(
            account: account, identifier: id, groupIdentifier: secret.isEmpty ? nil : "group-" + secret,
            date: now.adding(-60), direction: .outgoing,
            intent: SendMessageIntent(
                conversationIdentifier: conversation, speakableGroupName: secret.isEmpty ? nil : "Name " + secret,
                recipients: [Person(customIdentifier: "person-" + secret, displayName: "Display " + secret)]))
    }

    /// Donors record donations across many accounts from several threads until told to stop, counting what was
    /// acknowledged and every error a user would have seen.
    final class Donors: Sendable {
        let acknowledged = Mutex<[(account: String, identifier: String)]>([])
        let errors = Mutex<[String]>([])
        let stopping = Atomic(false)
        let group = DispatchGroup()

        init(url: String, threads: Int, accounts: Int, listing: Bool = false) {
            for thread in 0..<threads {
                DispatchQueue.global().async(group: group) { [self] in
                    let store: RedisDonationStore
                    do {
                        store = try RedisDonationStore.open(url: url)
                    } catch {
                        errors.withLock { $0.append("open: \(error)") }
                        return
                    }
                    var index = 0
                    while !stopping.load(ordering: .relaxed) {
                        index += 1
                        let account = "account-\(index % accounts)"
                        let identifier = "t\(thread)-\(index)"
                        do {
                            let outcome = try store.record(
                                RedisStoreTests.donation(identifier, account: account, conversation: "c\(index % 7)"))
                            if case .recorded = outcome { acknowledged.withLock { $0.append((account, identifier)) } }
                            if listing {
                                _ = try store.suggestions(account: account, context: RankingContext(at: .now()))
                            }
                        } catch {
                            errors.withLock { $0.append("\(error)") }
                        }
                    }
                }
            }
        }

        func stop() {
            stopping.store(true, ordering: .relaxed)
            group.wait()
        }

        var count: Int { acknowledged.withLock { $0.count } }

        /// Waits until `count` donations are acknowledged in all, failing the test (rather than hanging it) when
        /// the donors stall for `seconds`.
        func waitUntilAcknowledged(_ count: Int, within seconds: Double = 60) throws {
            let start = monotonicSeconds()
            while self.count < count {
                guard monotonicSeconds() - start < seconds else {
                    stop()
                    throw HarnessError(
                        "the donors stalled at \(self.count) acknowledged donations, waiting for \(count); "
                            + "their last errors: \(errors.withLock { $0.suffix(3) })")
                }
                sleepSeconds(0.01)
            }
        }
    }

    /// Every acknowledged donation is in the store.
    static func expectAllStored(_ acknowledged: [(account: String, identifier: String)], url: String) throws {
        let store = try RedisDonationStore.open(url: url)
        var stored: [String: Set<String>] = [:]
        for account in Set(acknowledged.map(\.account)) {
            var identifiers: Set<String> = []
            try store.forEachDonation(account: account) { identifiers.insert($0.identifier ?? "") }
            stored[account] = identifiers
        }
        let lost = acknowledged.filter { stored[$0.account]?.contains($0.identifier) != true }
        #expect(lost.isEmpty, "\(lost.count) of \(acknowledged.count) acknowledged donations lost: \(lost.prefix(5))")
    }

    @Test func aKilledMasterLosesNothingAcknowledged() throws {
        let cluster = try LocalRedisCluster(masters: 3, replicasPerMaster: 1)
        defer { cluster.stop() }
        // Writes go first to fill the masters, so that every replica is in the topology.
        let donors = Donors(url: cluster.url, threads: 4, accounts: 30)
        try donors.waitUntilAcknowledged(400)
        let victim = try cluster.masters()[0]
        let replica = try cluster.replica(of: victim.node)
        cluster.kill(victim.node)
        let waited = try cluster.waitForPromotion(of: replica)
        // The donors go on: the promoted master has no replica to wait for, and fsyncs every write itself.
        let afterPromotion = donors.count
        let errorsAtPromotion = donors.errors.withLock { $0.count }
        try donors.waitUntilAcknowledged(afterPromotion + 400, within: 30)
        donors.stop()
        #expect(waited < 30)
        // At most the write each donor had in flight when the promotion was seen may still fail.
        let errorsAfter = donors.errors.withLock { Array($0.dropFirst(errorsAtPromotion)) }
        #expect(errorsAfter.count <= 4, "\(errorsAfter.count) errors after the promotion: \(errorsAfter.prefix(3))")
        try Self.expectAllStored(donors.acknowledged.withLock { $0 }, url: cluster.url)
    }

    /// A cluster of its own (the test stalls or kills a node), a store on it with one donation in `account` (so that
    /// the account's keys exist and every replica is in the layout), and the master and replica of its slot.
    static func accountOnItsOwnCluster(_ account: String) throws
        -> (LocalRedisCluster, RedisDonationStore, master: LocalRedisCluster.Node, replica: LocalRedisCluster.Node)
    {
        let cluster = try LocalRedisCluster(masters: 3, replicasPerMaster: 1)
        do {
            let store = try RedisDonationStore.open(url: cluster.url)
            _ = try store.record(Self.donation("warm-up", account: account, conversation: "c"))
            let master = try cluster.owner(ofSlot: Int(RedisHashSlot.of("sg:{\(account)}:m"))).node
            return (cluster, store, master, try cluster.replica(of: master))
        } catch {
            cluster.stop()
            throw error
        }
    }

    /// Runs `body` with `node` stopped (SIGSTOP), resumed once the body is done, or after `seconds` whatever it does.
    static func stalling(_ node: LocalRedisCluster.Node, for seconds: Double, _ body: () throws -> Void) rethrows {
        kill(node.pid, SIGSTOP)
        let resume = DispatchWorkItem { kill(node.pid, SIGCONT) }
        DispatchQueue.global().asyncAfter(deadline: .now() + seconds, execute: resume)
        defer {
            resume.cancel()
            kill(node.pid, SIGCONT)
        }
        try body()
    }

    /// A write no replica confirms within the timeout (a replica stalled) is refused, and must change nothing: it
    /// stayed on the master, so a retry recorded a donation without an identifier of its own twice (found by a
    /// probe, with `kill -STOP` of a replica). A single donation and an import are both undone; once the replica
    /// is back, a retry records them once.
    @Test func aWriteNoReplicaConfirmedIsUndone() throws {
        let (cluster, store, _, replica) = try Self.accountOnItsOwnCluster("stalled")
        defer { cluster.stop() }
        func withReplicaStalled(_ body: () throws -> Void) rethrows { try Self.stalling(replica, for: 8, body) }
        let single = Interaction(
            account: "stalled", identifier: nil, date: Self.now.adding(-30), direction: .outgoing,
            intent: SendMessageIntent(conversationIdentifier: "single"))
        withReplicaStalled {
            let refused = #expect(throws: StoreError.self) { try store.record(single) }
            #expect(refused?.message.hasSuffix("; it was taken back, so nothing of it is kept: retry it") == true, "\(String(describing: refused))")
        }
        let batch = (0..<3).map { index in
            Interaction(
                account: "stalled", identifier: nil, date: Self.now.adding(-Double(20 - index)), direction: .outgoing,
                intent: SendMessageIntent(conversationIdentifier: "batch-\(index)"))
        }
        withReplicaStalled {
            #expect(throws: StoreError.self) { try store.importDonations(batch, options: ImportOptions(now: Self.now)) }
        }
        #expect(try store.donationCount(account: "stalled") == 1, "only the warm-up stays")
        _ = try store.record(single)
        _ = try store.importDonations(batch, options: ImportOptions(now: Self.now))
        #expect(try store.donationCount(account: "stalled") == 5)
        // "Suggest less" counts: one refused must not stay, or its retry counts twice.
        #expect(try store.suggestLess(conversation: "single", account: "stalled") == 1)
        withReplicaStalled {
            #expect(throws: StoreError.self) { try store.suggestLess(conversation: "single", account: "stalled") }
        }
        #expect(try store.suggestLess(conversation: "single", account: "stalled") == 2, "the refused one did not count")
    }

    /// An import of several rounds with the replica stalled: each round's script is sent once the one before it
    /// answered, before its replica confirmed it (`RedisDonationStore.ImportRounds`), but the import is refused all
    /// the same, and nothing of any round stays.
    @Test func anImportOfManyRoundsNoReplicaConfirmedIsUndone() throws {
        let (cluster, store, _, replica) = try Self.accountOnItsOwnCluster("stalledmany")
        defer { cluster.stop() }
        let batch = (0..<(RedisDonationStore.chunkSize + 500)).map { index in
            Interaction(
                account: "stalledmany", identifier: "m\(index)", date: Self.now.adding(-Double(index % 1_000) - 1),
                direction: .outgoing, intent: SendMessageIntent(conversationIdentifier: "c\(index % 40)"))
        }
        Self.stalling(replica, for: 8) {
            #expect(throws: StoreError.self) { try store.importDonations(batch, options: ImportOptions(now: Self.now)) }
        }
        #expect(try store.donationCount(account: "stalledmany") == 1, "only the warm-up stays")
        #expect(try store.importDonations(batch, options: ImportOptions(now: Self.now)).recorded == batch.count)
        #expect(try store.donationCount(account: "stalledmany") == batch.count + 1)
    }

    /// An import of several rounds whose account's master is killed while it runs (`RedisDonationStore.ImportRounds`
    /// confirms each round's replica a round later): reported done, every donation is there once the replica is
    /// promoted; failed, it took back what it had recorded, or says what may have stayed; importing it again then
    /// records each donation once.
    /// - Parameters:
    ///   - round: the master dies as this round is about to be read: at 2, the first round is computed and not
    ///     sent; at 3, the first is sent (and perhaps answered) and the second computed.
    ///   - stalled: the replica stalls from the start of the import until the master dies, so that the first
    ///     round's `WAIT` is still waiting: the import must fail (it said done, a probe would find it gone).
    @Test(arguments: [(2, false), (3, false), (3, true)])
    func anImportOfManyRoundsWhoseMasterIsKilled(round: Int, stalled: Bool) throws {
        let (cluster, store, master, replica) = try Self.accountOnItsOwnCluster("killedmany\(round)")
        defer { cluster.stop() }
        let batch = (0..<(RedisDonationStore.chunkSize * 4)).map { index in
            Interaction(
                account: "killedmany\(round)", identifier: "k\(index)",
                date: Self.now.adding(-Double(index % 5_000) - 1), direction: .outgoing,
                intent: SendMessageIntent(conversationIdentifier: "c\(index % 300)"))
        }
        let options = ImportOptions(now: Self.now)
        // The import checks for an interruption every 256 donations it reads, then before each round it writes.
        let checksBeforeWriting = batch.count / 256
        var checks = 0
        var next = 0
        let result = Result {
            try store.importDonations(
                options, progress: { _ in },
                interruption: {
                    checks += 1
                    if checks == checksBeforeWriting + 1 && stalled { kill(replica.pid, SIGSTOP) }
                    if checks == checksBeforeWriting + round {
                        cluster.kill(master)
                        if stalled { kill(replica.pid, SIGCONT) }
                    }
                },
                next: {
                    guard next < batch.count else { return nil }
                    next += 1
                    return NumberedDonation(line: next, donation: .success(batch[next - 1]))
                })
        }
        _ = try cluster.waitForPromotion(of: replica)
        let reader = try RedisDonationStore.open(url: cluster.url)
        let stayed = try reader.donationCount(account: "killedmany\(round)") - 1
        if stalled { #expect(throws: StoreError.self) { try result.get() } }
        switch result {
        case .success(let report):
            #expect(report.recorded == batch.count && stayed == batch.count, "\(report), \(stayed) stored")
        case .failure(let error):
            let message = "\(error)"
            #expect(
                stayed == 0 || message.contains("import the same file again"),
                "\(stayed) stayed after: \(message)")
        }
        #expect(checks >= checksBeforeWriting + round, "the import ended before its master was killed")
        _ = try store.importDonations(batch, options: options)
        #expect(try reader.donationCount(account: "killedmany\(round)") == batch.count + 1)
    }

    /// A deletion whose script no replica confirmed in time (a replica stalled) is refused, but it ran on the
    /// master: the data was gone while its bytes stayed in the nodes' append-only files, with no mark for
    /// maintenance to rewrite them (found by a probe). The files are rewritten before the failure is reported, and
    /// what could not be rewritten then is by the next maintenance.
    @Test func aDeletionNoReplicaConfirmedStillLeavesNoByteInTheFiles() throws {
        let (cluster, store, _, replica) = try Self.accountOnItsOwnCluster("waitleak")
        defer { cluster.stop() }
        let secret = "Ignatius-Waitleak"
        _ = try store.record(Self.donation("wl-1", account: "waitleak", conversation: "conv-" + secret, secret: secret))
        try Self.waitForRewrites(cluster)
        Self.stalling(replica, for: 3) {
            #expect(throws: StoreError.self) { try store.delete(.conversation("conv-" + secret), account: "waitleak") }
        }
        #expect(try store.donationCount(account: "waitleak") == 1, "only the warm-up stays")
        var holding: [String] = []
        let deadline = monotonicSeconds() + 30
        repeat {
            _ = try? store.maintain(account: nil, now: .now(), budget: .unbounded)
            try Self.waitForRewrites(cluster)
            holding = try Self.filesHolding(secret, in: cluster)
        } while !holding.isEmpty && monotonicSeconds() < deadline
        #expect(holding.isEmpty, "the deleted names are still in \(holding)")
    }

    /// A command's upkeep that cannot be done this moment (here the fold a failed deletion left owed, with the
    /// replica still stalled) stays owed: `suggest list` answered "not acknowledged" though reading needed nothing
    /// of the replica (found by a probe). It answers now; the upkeep runs at a later command.
    @Test func aListAnswersWhileItsUpkeepCannotReachAReplica() throws {
        let (cluster, store, _, replica) = try Self.accountOnItsOwnCluster("upkeep")
        defer { cluster.stop() }
        for index in 0..<3 {
            _ = try store.record(Self.donation("u-\(index)", account: "upkeep", conversation: "c-\(index)"))
        }
        let scratch = try TemporaryDirectory("upkeep")
        var listed: ProcessOutcome?
        Self.stalling(replica, for: 25) {
            #expect(throws: StoreError.self) { try store.delete(.conversation("c-0"), account: "upkeep") }
            listed = try? Suggest.run(
                ["list", "--store", cluster.url, "--account", "upkeep"], scratch: scratch.path, timeout: 30)
        }
        #expect(listed?.status == 0 && listed?.output.contains("c-1") == true, "\(String(describing: listed))")
    }

    /// A block outlives deletion; lifting it (or resetting "suggest less") then takes away the conversation's last
    /// trace, and its name must leave the nodes' files as a deletion's does (the embedded store's
    /// `PrivacyTests.liftingTheLastPreferenceOfADeletedConversationLeavesNoByteOfIt`, here on a cluster).
    @Test func liftingTheLastPreferenceOfADeletedConversationLeavesNoByteInTheFiles() throws {
        let (cluster, store, _, _) = try Self.accountOnItsOwnCluster("lifted")
        defer { cluster.stop() }
        for (set, lift) in [("block", "unblock"), ("less", "reset")] {
            let secret = "Pangolin-" + set
            let conversation = "conv-" + secret
            _ = try store.record(Self.donation("l-" + set, account: "lifted", conversation: conversation, secret: secret))
            func apply(_ operation: String) throws {
                switch operation {
                case "block": try store.setBlocked(true, conversation: conversation, account: "lifted")
                case "unblock": try store.setBlocked(false, conversation: conversation, account: "lifted")
                case "less": _ = try store.suggestLess(conversation: conversation, account: "lifted")
                default: try store.resetFeedback(conversation: conversation, account: "lifted")
                }
            }
            try apply(set)
            _ = try store.delete(.conversation(conversation), account: "lifted")
            try apply(set)
            try Self.waitForRewrites(cluster)
            #expect(try !Self.filesHolding(conversation, in: cluster).isEmpty, "the name is on disk before it is lifted")
            try apply(lift)
            try Self.waitForRewrites(cluster)
            let holding = try Self.filesHolding(conversation, in: cluster)
            #expect(holding.isEmpty, "\(lift): the name is still in \(holding)")
        }
    }

    /// The check of the masters that follows a short `WAIT` may itself fail (a master left without its replica,
    /// and `appendfsync everysec`): that error was thrown before the donation that had run was noted, so it stayed,
    /// refused, and a retry recorded it twice (found by a review). It is undone too, with writes that wait for no
    /// replica: what made the write fail would refuse the undo as well.
    @Test func aWriteRefusedByTheCheckAfterItRanIsUndone() throws {
        let (cluster, store, master, replica) = try Self.accountOnItsOwnCluster("lost")
        defer { cluster.stop() }
        _ = try cluster.cli(master, "CONFIG", "SET", "appendfsync", "everysec")
        cluster.kill(replica)
        let deadline = monotonicSeconds() + 30
        while try cluster.cli(master, "INFO", "replication").contains("connected_slaves:1"), monotonicSeconds() < deadline {
            sleepSeconds(0.1)
        }
        let refused = Interaction(
            account: "lost", identifier: nil, date: Self.now.adding(-30), direction: .outgoing,
            intent: SendMessageIntent(conversationIdentifier: "c"))
        expectError {
            try store.record(refused)
        } where: { error in
            (error as? StoreError)?.kind == .misconfigured
        }
        #expect(try store.donationCount(account: "lost") == 1, "only the warm-up stays")
    }

    /// A share to a conversation of an account deleted since wrote nothing, but put the account's name back in
    /// `sg:accounts` and two keys of its own (found by a review): the deleted name went back into the nodes' files.
    @Test func aShareToADeletedAccountWritesNothing() throws {
        let server = try LocalRedisCluster(standaloneWithPassword: nil)
        defer { server.stop() }
        let store = try RedisDonationStore.open(url: server.url)
        let donation = Self.donation("d1", account: "Secret Account", conversation: "c")
        _ = try store.record(donation)
        _ = try store.delete(.account, account: "Secret Account")
        let before = try server.cli(server.nodes[0], "KEYS", "*")
        var share = donation
        share.identifier = "s1"
        share.isEngagedSuggestion = true
        #expect(try store.recordShare(share, now: Self.now) == nil)
        #expect(try server.cli(server.nodes[0], "KEYS", "*") == before)
        #expect(!before.contains("Secret"))
    }

    /// A command that opens the store while a killed master is still listed (before its replica is promoted)
    /// failed at once, "cannot reach Redis at" a node its user never gave, where a write already under way waited for
    /// the promotion (found by a probe: 147 of 1,110 `suggest donate` runs failed in the 4 s of a failover). The
    /// store's check of the masters waits for it too.
    @Test func aStoreOpenedDuringAFailoverWaitsForThePromotion() throws {
        let cluster = try LocalRedisCluster(masters: 3, replicasPerMaster: 1)
        defer { cluster.stop() }
        _ = try RedisDonationStore.open(url: cluster.url).record(Self.donation("before", account: "a", conversation: "c"))
        cluster.kill(try cluster.masters()[0].node)
        let started = monotonicSeconds()
        let opened = try RedisDonationStore.open(url: cluster.url)
        _ = try opened.record(Self.donation("during", account: "a", conversation: "c"))
        #expect(try opened.donationCount(account: "a") == 2)
        // The promotion takes a few seconds here; the bound is a loaded CI machine's.
        #expect(monotonicSeconds() - started < 30)
    }

    /// A master that hangs (paused, swapping) rather than dies: the cluster promotes its replica after its node
    /// timeout (2 s here), and a command opening the store meanwhile waits out one reply's time limit (5 s), then
    /// follows the promotion. It failed after 10 s: the reads riding with the check of the masters were sent to the
    /// paused master again, layout unchanged, and waited a second limit out (a probe, with `kill -STOP`).
    @Test func aCommandFollowsThePromotionOfAHungMaster() throws {
        let (cluster, _, master, _) = try Self.accountOnItsOwnCluster("hung")
        defer { cluster.stop() }
        let scratch = try TemporaryDirectory("redis-hung")
        kill(master.pid, SIGSTOP)
        defer { kill(master.pid, SIGCONT) }
        let started = monotonicSeconds()
        let listed = try Suggest.run(["list", "--account", "hung", "--store", cluster.url], scratch: scratch.path)
        #expect(listed.status == 0 && listed.output.contains("[c]"), "\(listed)")
        let donated = try Suggest.run(
            ["donate", "--account", "hung", "--conversation", "during", "--store", cluster.url], scratch: scratch.path)
        #expect(donated.status == 0, "\(donated)")
        #expect(monotonicSeconds() - started < 30)
    }

    @Test func aSlotMovedUnderDonorsAndListersLosesNothingAndShowsNoError() throws {
        let cluster = try LocalRedisCluster.shared("store-reshard")
        let donors = Donors(url: cluster.url, threads: 3, accounts: 3, listing: true)
        try donors.waitUntilAcknowledged(200)
        // The slot of one account's keys moves to another master, keys and all, while writes and reads go on.
        let slot = RedisHashSlot.of("sg:{account-1}:m")
        let owner = try cluster.owner(ofSlot: slot)
        let target = try cluster.masters().first { $0.node.port != owner.node.port }
        try cluster.moveSlot(slot, to: try #require(target).node)
        let moved = donors.count
        try donors.waitUntilAcknowledged(moved + 200)
        donors.stop()
        #expect(donors.errors.withLock { $0 }.isEmpty, "\(donors.errors.withLock { $0.prefix(3) })")
        #expect(try cluster.owner(ofSlot: slot).node.port != owner.node.port)
        try Self.expectAllStored(donors.acknowledged.withLock { $0 }, url: cluster.url)
    }

    /// A donation whose script Redis refused while its account's slot was half moved (`TRYAGAIN` past the retry
    /// time) ran nothing: it is taken back and said to be. It was noted as a round whose reply was lost, and said
    /// "may have been recorded all the same" (a server's `store_outcome_unknown`).
    @Test func aDonationRefusedWhileItsSlotMovesIsNotInDoubt() throws {
        let cluster = try LocalRedisCluster.shared("store-reshard")
        var configuration = try RedisClusterConfiguration(url: cluster.url)
        configuration.retryTimeout = .milliseconds(300)
        let store = try RedisDonationStore.open(
            client: RedisClusterClient(configuration: configuration), waitingForTheCluster: true)
        let account = "moving\(UInt32.random(in: 0...UInt32.max))"
        _ = try store.record(Self.donation("first", account: account, conversation: "c"), now: Self.now)
        let slot = RedisHashSlot.of("sg:{\(account)}:m")
        let source = try cluster.owner(ofSlot: slot).node
        let target = try #require(try cluster.masters().map(\.node).first { $0 != source })
        try cluster.beginMigration(slot: slot, from: source, to: target)
        defer { try? cluster.finishMigration(slot: slot, from: source, to: target) }
        // The account's donation list of its identifiers on the target, the rest on the source: a script over both
        // is refused with `TRYAGAIN` until the move ends.
        try cluster.migrate(keys: ["sg:{\(account)}:ids"], from: source, to: target)
        var unnamed = Self.donation("second", account: account, conversation: "c")
        unnamed.identifier = nil
        expectError {
            _ = try store.record(unnamed, now: Self.now)
        } where: { error in
            guard let error = error as? StoreError else { return false }
            return !error.mayHaveBeenRecorded && error.message.contains("TRYAGAIN")
                && error.message.contains("nothing of it is kept")
        }
        try cluster.finishMigration(slot: slot, from: source, to: target)
        #expect(try store.donationCount(account: account) == 1)
    }

    @Test func deletedDataLeavesEveryFileOfEveryNode() throws {
        let cluster = try LocalRedisCluster.shared("store-files")
        let store = try RedisDonationStore.open(url: cluster.url)
        let secret = "Zq\(UInt32.random(in: 100_000...999_999))x"
        for index in 0..<20 {
            _ = try store.record(
                Self.donation(
                    "secret-id-\(secret)-\(index)", account: "victim", conversation: "conv-\(secret)", secret: secret))
        }
        _ = try store.record(Self.donation("kept", account: "victim", conversation: "other"))
        // The secrets are in the files before the deletion (the append-only files hold every write).
        try Self.waitForRewrites(cluster)
        #expect(try Self.filesHolding(secret, in: cluster).count >= 2)
        let report = try store.delete(.conversation("conv-\(secret)"), account: "victim")
        #expect(report.donations == 20 && report.removedConversations == ["conv-\(secret)"])
        try Self.waitForRewrites(cluster)
        let holding = try Self.filesHolding(secret, in: cluster)
        #expect(holding.isEmpty, "the deleted names are still in \(holding)")
        #expect(try store.donationCount(account: "victim") == 1)

        // A whole account: its name too (it stayed in the list of accounts and three keys of its own).
        let account = "acct-\(secret)"
        _ = try store.record(Self.donation("a-\(secret)", account: account, conversation: "c"))
        #expect(try store.accounts().contains(account))
        _ = try store.delete(.all, account: account)
        #expect(try !store.accounts().contains(account))
        try Self.waitForRewrites(cluster)
        let named = try Self.filesHolding(account, in: cluster)
        #expect(named.isEmpty, "the deleted account's name is still in \(named)")

        // An account left empty by a deletion of its last conversation, or by lifting its last preference: its
        // name stayed in the list of accounts and two keys of its own, so in every node's files (a probe).
        for (index, emptying) in ["conversation", "unblock", "reset"].enumerated() {
            let emptied = "emptied-\(index)-\(secret)"
            switch emptying {
            case "conversation":
                _ = try store.record(Self.donation("e-\(secret)", account: emptied, conversation: "c"))
                _ = try store.delete(.conversation("c"), account: emptied)
            case "unblock":
                try store.setBlocked(true, conversation: "c", account: emptied)
                try store.setBlocked(false, conversation: "c", account: emptied)
            default:
                _ = try store.suggestLess(conversation: "c", account: emptied)
                try store.resetFeedback(conversation: "c", account: emptied)
            }
            #expect(try !store.accounts().contains(emptied), "\(emptying)")
            try Self.waitForRewrites(cluster)
            let holding = try Self.filesHolding(emptied, in: cluster)
            #expect(holding.isEmpty, "\(emptying): the emptied account's name is still in \(holding)")
        }
    }

    /// A node's slow log keeps the first keys of each slow command in memory: an import's scripts name the account
    /// and its person keys (a person's address). After a deletion that left every file clean, `SLOWLOG GET` still
    /// showed them (a sweep); the deletion empties every node's slow log. Here every command is slow enough.
    @Test func deletedDataLeavesNoNodesSlowLog() throws {
        let cluster = try LocalRedisCluster.shared("store-slowlog")
        for node in cluster.nodes { _ = try cluster.cli(node, "CONFIG", "SET", "slowlog-log-slower-than", "0") }
        defer {
            for node in cluster.nodes {
                _ = try? cluster.cli(node, "CONFIG", "SET", "slowlog-log-slower-than", "10000")
            }
        }
        let store = try RedisDonationStore.open(url: cluster.url)
        let secret = "Sl\(UInt32.random(in: 100_000...999_999))w"
        let account = "slow-\(secret)"
        _ = try store.importDonations(
            (0..<50).map { Self.donation("s-\($0)", account: account, conversation: "c-\($0 % 5)", secret: secret) },
            options: ImportOptions(now: Self.now))
        func logsNaming(_ text: String) throws -> [Int] {
            try cluster.nodes.filter { try cluster.cli($0, "SLOWLOG", "GET", "1000").contains(text) }.map(\.port)
        }
        #expect(try !logsNaming(secret).isEmpty, "the import's scripts are in a slow log before the deletion")
        _ = try store.delete(.all, account: account)
        let naming = try logsNaming(secret)
        #expect(naming.isEmpty, "the deleted names are still in the slow logs of \(naming)")

        // A log that never named the account keeps its entries, whatever the name: "1" is in every log's client
        // addresses and script hashes, and deleting it emptied every node's log (a review).
        func master(_ key: String) throws -> LocalRedisCluster.Node {
            try cluster.owner(ofSlot: RedisHashSlot.of(key)).node
        }
        let busy = [try master("sg:accounts").port, try master("sg:{1}").port]
        let bystander = try #require(
            (0..<100).map { "bystander-\($0)" }.first {
                (try? master("sg:{\($0)}").port).map { !busy.contains($0) } ?? false
            })
        for name in [bystander, "1"] {
            _ = try store.importDonations(
                (0..<10).map { Self.donation("\(name)-\($0)", account: name, conversation: "c") },
                options: ImportOptions(now: Self.now))
        }
        let node = try master("sg:{\(bystander)}")
        #expect(try cluster.cli(node, "SLOWLOG", "GET", "-1").contains(bystander))
        _ = try store.delete(.all, account: "1")
        #expect(
            try cluster.cli(node, "SLOWLOG", "GET", "-1").contains(bystander), "a log that never named 1 was emptied")
    }

    /// Readiness asks the store once, without the client's retries for a failover: with a master and its replica
    /// gone (the cluster down), `/v1/health/ready` took those 10 s to say 503, past a load balancer's probe timeout
    /// (a sweep).
    @Test func theHealthCheckAnswersAtOnceWhileTheClusterIsDown() throws {
        let cluster = try LocalRedisCluster(masters: 3, replicasPerMaster: 1)
        defer { cluster.stop() }
        let store = try RedisDonationStore.open(url: cluster.url)
        try store.checkHealth()
        // A master that does not serve the settings, with its replica: its slots go uncovered, and the nodes say
        // CLUSTERDOWN once they see it (the cluster's node timeout is 2 s).
        let settings = try cluster.owner(ofSlot: RedisHashSlot.of("sg:settings")).node.port
        let masters = try [0, 8_000, 16_000].map { try cluster.owner(ofSlot: $0).node }
        let gone = try #require(masters.first { $0.port != settings })
        cluster.kill(try cluster.replica(of: gone))
        cluster.kill(gone)
        let down = monotonicSeconds() + 30
        var answered = false
        while monotonicSeconds() < down && !answered {
            let started = monotonicSeconds()
            do {
                try store.checkHealth()
                sleepSeconds(0.2)
            } catch {
                #expect(monotonicSeconds() - started < 5, "\(error)")
                answered = true
            }
        }
        #expect(answered, "the cluster was never seen down")
    }

    /// A server's first open waits for a cluster that starts beside it (under a service manager both start at
    /// once, and a server that failed at once soon reached `Restart=`'s limit); a command's open fails at once,
    /// where it took the retry timeout (10 s) for a mistyped port.
    @Test func aServersFirstOpenWaitsForTheClusterACommandsDoesNot() throws {
        let port = try LocalRedisCluster.reservePort()
        let url = "redis://127.0.0.1:\(port)"
        let started = monotonicSeconds()
        #expect(throws: StoreError.self) { try RedisDonationStore.open(url: url) }
        #expect(monotonicSeconds() - started < 3)

        let booted = Mutex<LocalRedisCluster?>(nil)
        defer { booted.withLock { $0?.stop() } }
        let group = DispatchGroup()
        DispatchQueue.global().async(group: group) {
            sleepSeconds(1.5)
            let server = try? LocalRedisCluster(standaloneWithPassword: nil, port: port)
            booted.withLock { $0 = server }
        }
        let waited = monotonicSeconds()
        let store = try RedisDonationStore.open(client: RedisClusterClient(url: url), waitingForTheCluster: true)
        #expect(monotonicSeconds() - waited >= 1.4)
        group.wait()
        try #require(booted.withLock { $0 != nil }, "the server did not start on its port")
        #expect(try store.record(Self.donation("after", account: "a", conversation: "c")) == .recorded(identifier: "after"))
    }

    /// A request still running when `--grace` ends is waited for on a Redis Cluster (only its batch's own undo could
    /// take it back): the `stopped` line counts it as finished past the grace, not as abandoned (a probe saw a batch
    /// answered 201, and recorded whole, counted abandoned).
    @Test func aBatchWaitedForPastTheGraceIsNotCountedAbandoned() throws {
        let cluster = try LocalRedisCluster.shared("store-grace")
        let scratch = try TemporaryDirectory("redis-grace")
        let server = try ServeProcess(["--store", cluster.url, "--grace", "0"], scratch: scratch.path)
        var body = ""
        for index in 0..<30_000 {
            var line = Self.donation("g-\(index)", account: "grace", conversation: "c-\(index % 300)")
            line.account = "grace"
            body += line.jsonLine + "\n"
        }
        let connection = try RawHTTPConnection(port: server.port)
        try connection.send(
            "POST /v1/accounts/grace/donations HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-ndjson\r\n"
                + "Content-Length: \(body.utf8.count)\r\n\r\n" + body)
        sleepSeconds(0.5)
        let outcome = server.stop(timeout: 120)
        #expect(connection.peek(within: 30).hasPrefix("HTTP/1.1 201"))
        #expect(outcome.status == 0)
        #expect(outcome.error.contains(#""event":"stopped","abandonedRequests":0,"finishedPastGrace":1}"#), "\(outcome.error.suffix(400))")
    }

    /// A node at its `maxmemory` refused every deletion, by conversation, identifier, date or account, and every
    /// unblock, saying "delete data" (found by a probe): what takes away runs there now, the rest is refused as a
    /// full store. What a deletion leaves is exactly what it leaves below the limit.
    @Test func aFullNodeStillDeletesAndForgets() throws {
        let server = try LocalRedisCluster(standaloneWithPassword: nil, settings: ["maxmemory-policy noeviction"])
        defer { server.stop() }
        let store = try RedisDonationStore.open(url: server.url)
        for index in 0..<5 {
            _ = try store.record(Self.donation("gone-\(index)", account: "full", conversation: "gone"))
            _ = try store.record(Self.donation("kept-\(index)", account: "full", conversation: "kept"))
        }
        _ = try store.suggestLess(conversation: "gone", account: "full")
        _ = try store.suggestLess(conversation: "ghost", account: "full")
        try store.setBlocked(true, conversation: "blocked", account: "full")
        _ = try store.record(Self.donation("blocked-only-0", account: "blocked-only", conversation: "c"), now: Self.now)
        try store.setBlocked(true, conversation: "c", account: "blocked-only")
        _ = try server.cli(server.nodes[0], "CONFIG", "SET", "maxmemory", "1")

        expectError {
            try store.setBlocked(true, conversation: "another", account: "full")
        } where: { error in
            (error as? StoreError)?.kind == .diskFull && "\(error)".contains("out of memory")
        }
        // A shorter retention is how room is made: set there too (its refusal was read as a reply, and the old
        // setting kept while the new one was printed).
        let shorter = Retention(maximumAgeDays: 3_000, idleDays: 3_000)
        try store.setRetention(shorter, now: Self.now)
        #expect(try RedisDonationStore.open(url: server.url, reading: true).retention() == shorter)
        // An account that a block keeps, deleted whole: its name leaves the list and comes back, which the node
        // refused, so that the deletion failed at every try.
        #expect(try store.delete(.all, account: "blocked-only").donations == 1)
        #expect(try store.isBlocked(conversation: "c", account: "blocked-only"))
        #expect(try server.cli(server.nodes[0], "SISMEMBER", "sg:accounts", "blocked-only") == "1")
        let gone = try store.delete(.conversation("gone"), account: "full")
        #expect(gone.donations == 5 && gone.removedConversations == ["gone"] && !gone.preferencesForgotten)
        #expect(try store.delete(.conversation("ghost"), account: "full").preferencesForgotten)
        #expect(try store.delete(.identifier("kept-0"), account: "full").donations == 1)
        try store.setBlocked(false, conversation: "blocked", account: "full")

        _ = try server.cli(server.nodes[0], "CONFIG", "SET", "maxmemory", "0")
        #expect(try store.donationCount(account: "full") == 4)
        #expect(try store.blockedConversations(account: "full") == [])
        // "Suggest less" went with both: asked again, each counts 1.
        #expect(try store.suggestLess(conversation: "gone", account: "full") == 1)
        #expect(try store.suggestLess(conversation: "ghost", account: "full") == 1)
    }

    /// A rewrite under way when a deletion commits may have copied the data before it, so it does not count: the
    /// deletion has a rewrite of its own follow it (the node's count of rewrites goes up once more), and the deleted
    /// names leave the files.
    @Test func aRewriteUnderWayBeforeADeletionDoesNotCountForIt() throws {
        let server = try LocalRedisCluster(standaloneWithPassword: nil)
        defer { server.stop() }
        let node = server.nodes[0]
        let store = try RedisDonationStore.open(url: server.url)
        let secret = "Wq\(UInt32.random(in: 100_000...999_999))y"
        for index in 0..<5 {
            _ = try store.record(
                Self.donation("s-\(index)", account: "victim", conversation: "conv-\(secret)", secret: secret))
        }
        try Self.waitForRewrites(server)
        func rewritesStarted() throws -> Int? {
            let info = try server.cli(node, "INFO", "persistence")
            return info.split(whereSeparator: \.isNewline).first { $0.hasPrefix("aof_rewrites:") }
                .flatMap { Int($0.dropFirst("aof_rewrites:".count)) }
        }
        // A slow rewrite (a tenth of a second a key, about a second in all), started before the deletion.
        _ = try server.cli(node, "CONFIG", "SET", "rdb-key-save-delay", "100000")
        _ = try server.cli(node, "BGREWRITEAOF")
        let before = try #require(try rewritesStarted())
        #expect(try server.cli(node, "INFO", "persistence").contains("aof_rewrite_in_progress:1"))
        let report = try store.delete(.conversation("conv-\(secret)"), account: "victim")
        #expect(report.donations == 5 && report.logTruncated)
        _ = try server.cli(node, "CONFIG", "SET", "rdb-key-save-delay", "0")
        try Self.waitForRewrites(server)
        // One more (started, or scheduled behind the snapshot that the deletion also asked for), not none.
        #expect(try rewritesStarted() == before + 1)
        let holding = try Self.filesHolding(secret, in: server)
        #expect(holding.isEmpty, "the deleted names are still in \(holding)")
    }

    /// A donation recorded into an account while the account is being deleted ends in some serial order with the
    /// deletion: here after it (the deletion had listed the account's conversations already), so the new conversation
    /// is an ordinary one, exported, kept from repeats, and deleted by the next deletion. The deletion used to delete
    /// every conversation number of the account at its end, and then the account's identifiers: the new
    /// conversation was suggested but not exported, its identifier recorded again, and no deletion reached it.
    @Test func aDonationRecordedWhileItsAccountIsDeletedIsKeptWhole() throws {
        let cluster = try LocalRedisCluster.shared("store-files")
        let url = cluster.url
        let account = "racing-\(UInt32.random(in: 100_000...999_999))"
        var raced = false
        for attempt in 0..<6 where !raced {
            let store = try RedisDonationStore.open(url: url)
            _ = try store.importDonations(
                (0..<200).map { Self.donation("early-\(attempt)-\($0)", account: account, conversation: "c\($0)") })
            let late = "late-\(attempt)"
            let deleted = Mutex<Result<DeletionReport, any Error>?>(nil)
            let deletion = DispatchGroup()
            DispatchQueue.global().async(group: deletion) {
                let result = Result { try RedisDonationStore.open(url: url).delete(.account, account: account) }
                deleted.withLock { $0 = result }
            }
            // Once the deletion is under way (it has listed the conversations and rewritten some), not before: a
            // donation recorded before the listing is deleted with the rest, rightly.
            let deadline = monotonicSeconds() + 10
            while try store.donationCount(account: account) == 200 && monotonicSeconds() < deadline {
                sleepSeconds(0.002)
            }
            let outcome = try store.record(Self.donation(late, account: account, conversation: late))
            // Raced when the donation was acknowledged while the deletion was still going on.
            raced = deleted.withLock { $0 == nil }
            deletion.wait()
            _ = try #require(deleted.withLock { $0 }).get()
            guard case .recorded = outcome else {
                Issue.record("the late donation was \(outcome)")
                return
            }
            var exported: [String] = []
            try store.forEachDonation(account: account, interruption: {}) { exported.append($0.identifier ?? "") }
            let listed = try store.suggestions(account: account, context: RankingContext(at: .now()))
                .suggestions.map(\.conversationIdentifier)
            #expect(exported == [late] && listed == [late], "attempt \(attempt): \(exported), \(listed)")
            #expect(
                try store.record(Self.donation(late, account: account, conversation: late))
                    == .duplicate(identifier: late))
            _ = try store.delete(.account, account: account)
            #expect(try store.donationCount(account: account) == 0)
            #expect(try store.suggestions(account: account, context: RankingContext(at: .now())).suggestions.isEmpty)
            #expect(try !store.accounts().contains(account))
        }
        #expect(raced, "the donation never landed while the deletion went on")
    }

    /// Waits until no node has an append-only rewrite under way or scheduled.
    static func waitForRewrites(_ cluster: LocalRedisCluster) throws {
        let deadline = monotonicSeconds() + 30
        for node in cluster.liveNodes {
            while true {
                let info = try cluster.cli(node, "INFO", "persistence")
                if info.contains("aof_rewrite_in_progress:0") && info.contains("aof_rewrite_scheduled:0")
                    && info.contains("rdb_bgsave_in_progress:0")
                {
                    break
                }
                guard monotonicSeconds() < deadline else { throw HarnessError("node \(node) kept rewriting") }
                sleepSeconds(0.05)
            }
        }
    }

    /// The files under the nodes' directories that contain `text`.
    static func filesHolding(_ text: String, in cluster: LocalRedisCluster) throws -> [String] {
        var found: [String] = []
        let needle = Array(text.utf8)
        func visit(_ path: String) throws {
            var info = stat()
            guard lstat(path, &info) == 0 else { return }
            if info.st_mode & S_IFMT == S_IFDIR {
                for name in directoryEntries(path) { try visit(path + "/" + name) }
            } else if info.st_mode & S_IFMT == S_IFREG {
                let bytes = try readFile(path)
                if bytes.count >= needle.count,
                    (0...(bytes.count - needle.count)).contains(where: {
                        bytes[$0] == needle[0] && Array(bytes[$0..<($0 + needle.count)]) == needle
                    })
                {
                    found.append(path)
                }
            }
        }
        for node in cluster.liveNodes { try visit(node.directory) }
        return found
    }

    /// Writes wait for a replica only when every master has one; so when one master has lost its replica, a master
    /// that relies on its replica and fsyncs lazily would acknowledge writes that a crash loses: refused at open.
    @Test func aMasterThatNeitherFsyncsNorCanBeWaitedForIsRefused() throws {
        let cluster = try LocalRedisCluster(masters: 3, replicasPerMaster: 1)
        defer { cluster.stop() }
        // A server started while the cluster kept the promise: after the fault its GETs go on, through connections
        // opened since (each export opens one; they failed, opened for writing).
        let scratch = try TemporaryDirectory("redis-misconfigured")
        let server = try ServeProcess(["--store", cluster.url, "--no-access-log"], scratch: scratch.path)
        let masters = try cluster.masters().map(\.node)
        try #require(masters.count == 3)
        // A master that evicts any key when full would drop parts of accounts: refused. Our keys have no time to
        // live, so the `volatile-` policies never touch them.
        #expect(try cluster.cli(masters[2], "CONFIG", "SET", "maxmemory-policy", "allkeys-lru") == "OK")
        expectError {
            _ = try RedisDonationStore.open(url: cluster.url)
        } where: { error in
            guard let error = error as? StoreError else { return false }
            return error.kind == .misconfigured && error.message.contains(":\(masters[2].port) ")
                && error.message.contains("maxmemory-policy allkeys-lru") && error.message.contains("noeviction")
        }
        // Reading too: what it reads may be missing (a review found a read-only command opening such a cluster).
        expectError {
            _ = try RedisDonationStore.open(url: cluster.url, reading: true)
        } where: { error in
            (error as? StoreError)?.message.contains("maxmemory-policy allkeys-lru") == true
        }
        #expect(try cluster.cli(masters[2], "CONFIG", "SET", "maxmemory-policy", "volatile-lru") == "OK")
        _ = try RedisDonationStore.open(url: cluster.url)
        #expect(try cluster.cli(masters[0], "CONFIG", "SET", "appendfsync", "everysec") == "OK")
        // With every replica there, the lazy master's writes are waited for on its replica: accepted.
        _ = try RedisDonationStore.open(url: cluster.url).record(Self.donation("kept", account: "a", conversation: "c"))
        cluster.kill(try cluster.replica(of: masters[1]))
        var replicas = 1
        for _ in 0..<200 where replicas > 0 {
            let info = try cluster.cli(masters[1], "INFO", "replication")
            replicas = info.contains("connected_slaves:0") ? 0 : 1
            if replicas > 0 { sleepSeconds(0.05) }
        }
        try #require(replicas == 0, "the killed replica is still counted")
        expectError {
            _ = try RedisDonationStore.open(url: cluster.url)
        } where: { error in
            guard let error = error as? StoreError else { return false }
            return error.kind == .misconfigured && error.message.contains(":\(masters[0].port) ")
                && error.message.contains("everysec") && error.message.contains("has none")
        }
        // The master without a replica is the one named when it fsyncs lazily itself, with what it could lose (it
        // said "fsyncs its log no ... the last second" of a master that leaves fsync to the system).
        for (setting, loss) in [("everysec", "the last second"), ("no", "the last half minute or so")] {
            #expect(try cluster.cli(masters[1], "CONFIG", "SET", "appendfsync", setting) == "OK")
            expectError {
                _ = try RedisDonationStore.open(url: cluster.url)
            } where: { error in
                let message = (error as? StoreError)?.message ?? ""
                return message.contains(":\(masters[1].port) has no replica and ") && message.contains(loss)
                    && message.contains("appendfsync \(setting)")
            }
        }
        // A command that only reads needs no such promise: it reads (every list and export was refused after such
        // a failover); one that writes is refused.
        for arguments in [["list", "--account", "a"], ["export", "--account", "a"], ["config"]] {
            let read = try Suggest.run(arguments + ["--store", cluster.url], scratch: scratch.path)
            #expect(read.status == 0 && !read.output.isEmpty, "\(arguments): \(read)")
        }
        let write = try Suggest.run(["donate", "--account", "a", "--conversation", "d", "--store", cluster.url], scratch: scratch.path)
        #expect(write.status == 1 && write.error.contains("has no replica"), "\(write)")
        expectError {
            try RedisDonationStore.open(url: cluster.url, reading: true).record(Self.donation("refused", account: "a", conversation: "c"))
        } where: { error in (error as? StoreError)?.kind == .misconfigured }
        for _ in 0..<3 {
            let export = try server.client.request("GET", "/v1/accounts/a/donations")
            #expect(export.status == 200 && export.text.contains("\"kept\""), "\(export.status) \(export.text.prefix(300))")
        }
        #expect(try server.client.request("GET", "/v1/accounts/a/suggestions?limit=8").status == 200)
        #expect(server.stop().status == 0)
    }

    @Test func faultsAreOneLineAndExitOne() throws {
        let scratch = try TemporaryDirectory("redis-faults")
        func run(_ store: String, _ arguments: [String] = ["list"]) throws -> ProcessOutcome {
            try Suggest.run(arguments + ["--store", store], scratch: scratch.path, timeout: 60)
        }
        // At once: no node given answers, so no failover can be under way (it took the retry timeout, 10 s).
        let started = monotonicSeconds()
        let unreachable = try run("redis://127.0.0.1:1")
        #expect(monotonicSeconds() - started < 5)
        #expect(unreachable.status == 1 && unreachable.errorLines.count == 1)
        #expect(unreachable.error.contains("cannot reach Redis at 127.0.0.1:1"))

        let guarded = try LocalRedisCluster(standaloneWithPassword: "right-password-123")
        defer { guarded.stop() }
        let wrong = try run("redis://:wrong-password@\(guarded.seeds)")
        #expect(wrong.status == 1 && wrong.errorLines.count == 1 && wrong.error.contains("refused the login"))
        #expect(!wrong.error.contains("wrong-password"), "no password in a message")
        let right = try run("redis://:right-password-123@\(guarded.seeds)", ["donate", "--conversation", "c"])
        #expect(right.status == 0, "\(right)")

        // A server that would lose acknowledged donations is refused: no append-only file.
        let volatile = try LocalRedisCluster(standaloneWithPassword: nil, settings: ["appendonly no"])
        defer { volatile.stop() }
        let refused = try run("redis://\(volatile.seeds)", ["donate", "--conversation", "c"])
        #expect(refused.status == 1 && refused.errorLines.count == 1 && refused.error.contains("appendonly yes"))
        // Reading needs no such promise: said, and read.
        let read = try run("redis://\(volatile.seeds)")
        #expect(read.status == 0 && read.errorLines.count == 1 && read.error.contains("appendonly yes"), "\(read.status) \(read.error)")
        #expect(read.error.contains("reading goes on; writes are refused until it is fixed"), "\(read)")

        // A full server: the import fails with one line, and what it wrote is undone.
        let full = try LocalRedisCluster(
            standaloneWithPassword: nil, settings: ["maxmemory 2mb", "maxmemory-policy noeviction"])
        defer { full.stop() }
        let url = "redis://\(full.seeds)"
        #expect(try run(url, ["config", "--max-age-days", "0", "--idle-days", "0"]).status == 0)
        #expect(try run(url, ["donate", "--conversation", "before", "--identifier", "before"]).status == 0)
        var lines = ""
        for index in 0..<20_000 {
            lines +=
                #"{"identifier":"bulk-\#(index)","date":1795000000,"intent":{"conversationIdentifier":"c\#(index % 3000)","speakableGroupName":"\#(String(repeating: "n", count: 200))"}}"#
                + "\n"
        }
        try writeFile(scratch("big.jsonl"), lines)
        let oom = try run(url, ["import", scratch("big.jsonl"), "--quiet"])
        #expect(oom.status == 1 && oom.errorLines.count == 1 && oom.error.contains("out of memory"), "\(oom)")
        #expect(oom.error.hasSuffix("; the import was undone: nothing of it was kept\n"), "\(oom)")
        let left = try run(url, ["export"])
        #expect(
            left.output.split(separator: "\n").count == 1,
            "only the donation from before stays: \(left.output.prefix(300))")
        // Nor do the conversation numbers the failed import gave (1,839 stayed when its first round failed): the
        // account's only conversation is the one from before.
        #expect(try full.cli(full.nodes[0], "HLEN", "sg:{default}:cid") == "1")

        // A script flushed from the server is loaded again, unseen.
        _ = try full.cli(full.nodes[0], "SCRIPT", "FLUSH")
        #expect(try run(url, ["donate", "--conversation", "after", "--identifier", "after"]).status == 0)
    }
}
