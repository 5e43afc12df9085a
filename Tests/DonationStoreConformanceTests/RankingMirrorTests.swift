import Dispatch
import SuggestCore
import SuggestSQLiteStore
import SuggestTestSupport
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A store with a `RankingMirror` answers exactly as the same store without one, through every kind of write by
/// another connection (as another process would write) and by itself, before its mirror is rebuilt (from SQLite)
/// and after (from memory); and it does rank from memory whenever nothing was committed since the rebuild.
@Suite struct RankingMirrorTests {
    /// Three connections to one store: one that writes (another process), one that only answers as the store does
    /// without a mirror, and the mirrored one.
    struct Stores {
        let directory: TemporaryDirectory
        let writer: SQLiteDonationStore
        let reference: SQLiteDonationStore
        let mirrored: SQLiteDonationStore
        let mirror: RankingMirror

        init(_ configuration: RankingMirror.Configuration = .init(readsBeforeRebuild: 1)) throws {
            directory = try TemporaryDirectory("mirror")
            let location = StoreLocation(directory: directory.path)
            writer = try SQLiteDonationStore.open(location, checkpoints: .everyPages(100))
            reference = try SQLiteDonationStore.open(location, checkpoints: .everyPages(100))
            mirror = RankingMirror(configuration)
            mirrored = try SQLiteDonationStore.open(location, checkpoints: .everyPages(16_384), mirror: mirror)
        }

        /// Rebuilds every account that queries missed.
        func refreshAll() throws {
            for _ in 0..<16 where try mirrored.refreshMirror() {}
        }

        /// Imports `count` of the script's donations through the writer, checkpoints (the first checkpoint
        /// truncates the log the import left, which other connections see as a change), then queries the default
        /// account and mirrors it.
        func importAndMirror(
            _ count: Int, of script: StoreConformance, _ random: inout SeededRandom, _ next: inout Int
        ) throws {
            _ = try writer.importDonations((0..<count).map { _ in script.donation(&random, number: &next) })
            try writer.checkpoint()
            _ = try mirrored.suggestions(account: "default", context: RankingContext(at: StoreConformanceTests.end))
            try refreshAll()
        }
    }

    /// A mirror reads the log index's header through SQLite's own mapping of the index, so this process keeps its
    /// lock on the index (byte 128 of `-shm`, by which SQLite tells other processes that one has it open). Mapped
    /// through a descriptor of its own, closing that descriptor dropped every lock the process held on the file:
    /// another process opening the store then took itself for the first and re-initialised the index under this
    /// one, and a server's connections read a store without the donations they had just recorded (a flaky
    /// `ServerRoutesTests` in CI).
    @Test func aMirrorLeavesThisProcesssLockOnTheLogIndex() throws {
        let stores = try Stores()
        let python = try #require(findExecutable("python3"), "python3 asks the kernel who holds the lock")
        let script = """
            import fcntl, os, struct, sys
            fd = os.open(sys.argv[1], os.O_RDWR)
            asked = struct.pack("hhqqi", fcntl.F_WRLCK, os.SEEK_SET, 128, 1, 0)
            kind, _, _, _, pid = struct.unpack("hhqqi", fcntl.fcntl(fd, fcntl.F_GETLK, asked))
            print("free" if kind == fcntl.F_UNLCK else "held by %d" % pid)
            """
        let asked = try ChildProcess(
            executable: python, arguments: ["-c", script, stores.directory.path + "/suggest.sqlite-shm"],
            environment: ["PATH": "/usr/bin:/bin"], inputPath: nil, scratch: stores.directory.path
        ).wait(timeout: 30)
        #expect(asked.status == 0, "\(asked)")
        #expect(asked.output == "held by \(getpid())\n", "\(asked)")
        // And the mirror still tells a commit from none.
        let now = Timestamp(seconds: 1_796_000_000)
        _ = try stores.writer.record(
            Interaction(
                account: "a", identifier: "d1", date: now, direction: .outgoing,
                intent: SendMessageIntent(conversationIdentifier: "c1")),
            now: now)
        let context = RankingContext(at: now)
        for _ in 0..<3 { _ = try stores.mirrored.suggestions(account: "a", context: context) }
        try stores.refreshAll()
        #expect(try stores.mirrored.suggestions(account: "a", context: context).suggestions.map(\.conversationIdentifier) == ["c1"])
    }

    @Test(arguments: [UInt64(1), 2, 3])
    func theMirroredStoreAnswersAsTheStoreDoes(seed: UInt64) throws {
        let stores = try Stores()
        try Self.answerAsTheStoreDoes(
            seed: seed, writer: stores.writer, reference: stores.reference, mirrored: stores.mirrored,
            statistics: { stores.mirror.statistics }, refreshAll: stores.refreshAll)
    }

    /// An account of many services (each conversation its own, some with none) answers from its mirror as from the
    /// store, in every scope: the mirror's service lists are the lists of all split by service in one pass (a pass
    /// for each service took an account of 80,000 services 38 s of a server's CPU, in the task that checkpoints).
    @Test func anAccountOfManyServicesIsMirroredAsItIsStored() throws {
        let stores = try Stores()
        let start = StoreConformanceTests.end.seconds - 10_000
        let donations = (0..<600).map { index in
            let conversation = index % 300
            return Interaction(
                identifier: "d\(index)", date: Timestamp(seconds: start + Double(index / 7 * 7)),
                direction: index % 3 == 0 ? .incoming : .outgoing,
                intent: SendMessageIntent(
                    conversationIdentifier: "c\(conversation)",
                    serviceName: conversation % 9 == 8 ? nil : "svc-\(conversation % 150)",
                    contentTypes: index % 4 == 1 ? ["public.jpeg"] : []))
        }
        _ = try stores.writer.importDonations(donations)
        try stores.writer.checkpoint()
        let at = StoreConformanceTests.end
        _ = try stores.mirrored.suggestions(account: "default", context: RankingContext(at: at))
        try stores.refreshAll()
        let before = stores.mirror.statistics
        let contexts =
            [
                RankingContext(at: at, limit: 8), RankingContext(at: at, limit: 300),
                RankingContext(at: at, limit: 5, contentTypes: ["public.jpeg"]),
            ] + stride(from: 0, to: 150, by: 7).map { RankingContext(at: at, limit: 3, serviceName: "svc-\($0)") }
        for context in contexts {
            #expect(
                try stores.mirrored.suggestions(account: "default", context: context, explain: true)
                    == stores.reference.suggestions(account: "default", context: context, explain: true))
        }
        #expect(stores.mirror.statistics.hits == before.hits + contexts.count, "the mirror did not answer")
    }

    @Test func keptAnswersHoldAsTimePasses() throws {
        let stores = try Stores()
        try Self.keptAnswersHoldAsTimePasses(
            writer: stores.writer, reference: stores.reference, mirrored: stores.mirrored,
            statistics: { stores.mirror.statistics }, refreshAll: stores.refreshAll)
    }

    /// A mirror keeps each context's answer (`RankedAnswers`) and gives it again while nothing is written: the
    /// answers equal the store's own at every moment of a sweep over five weeks, forwards and back, while the idle
    /// cutoff leaves the listed conversations out one by one; and some were given again, some computed anew.
    static func keptAnswersHoldAsTimePasses<Store: DonationStore>(
        writer: Store, reference: Store, mirrored: Store, statistics: () -> RankingMirrorStatistics,
        refreshAll: () throws -> Void, settle: () -> Void = {}
    ) throws {
        let script = StoreConformance(seed: 11)
        var random = SeededRandom(seed: 11)
        var next = 0
        let end = StoreConformanceTests.end
        try writer.setRetention(Retention(maximumAgeDays: 0, idleDays: 10), now: end)
        _ = try writer.importDonations((0..<400).map { _ in script.donation(&random, number: &next) })
        settle()
        let contexts = [
            RankingContext(at: end), RankingContext(at: end, limit: 3),
            RankingContext(at: end, limit: 8, contentTypes: ["public.jpeg"]),
            RankingContext(at: end, limit: 8, people: ["p3", "p7@example.com"]),
            RankingContext(at: end, limit: 5, serviceName: "sms", excluded: ["c1", "c2"]),
        ]
        func sweep(_ hours: some Sequence<Int>) throws {
            for hour in hours {
                for (index, context) in contexts.enumerated() {
                    var later = context
                    later.at = end.adding(Double(hour) * 3_600)
                    for account in StoreConformance.accounts {
                        let explain = index % 2 == 0
                        let expected = try reference.suggestions(account: account, context: later, explain: explain)
                        let actual = try mirrored.suggestions(account: account, context: later, explain: explain)
                        try script.expectEqual(expected, actual, "\(account), \(hour) h after the end, \(later)")
                        // As the contract's JSON too: a kept answer is written from its kept rendering.
                        try script.expectEqual(expected.jsonText, actual.jsonText, "\(account), \(hour) h, JSON")
                    }
                }
            }
        }
        // The first queries miss, then rebuild the mirror, whose queries keep their answers.
        try sweep([0])
        try refreshAll()
        let before = statistics()
        try sweep(stride(from: 0, through: 35 * 24, by: 7))
        try sweep(stride(from: 35 * 24, through: -48, by: -29))
        let after = statistics()
        #expect(after.answersReused > before.answersReused, "no answer was given again")
        #expect(after.answersKept > before.answersKept + 2 * contexts.count, "no answer was computed again")
        #expect(after.staleReads == before.staleReads && after.misses == before.misses)
    }

    /// What every store's mirror is held to: writes of every kind by another connection (as another process would
    /// write) and by the mirrored store itself; after each, the same answers as a store without a mirror, from the
    /// store before a rebuild and from memory after it.
    /// - Parameters:
    ///   - perAccount: whether a write puts only its own account's mirror out of date (a Redis store's stamps),
    ///     not every account's (SQLite's one version).
    ///   - settle: waits until every store sees settings another changed (a Redis store keeps them for a moment).
    static func answerAsTheStoreDoes<Store: DonationStore>(
        seed: UInt64, writer: Store, reference: Store, mirrored: Store, statistics: () -> RankingMirrorStatistics,
        refreshAll: () throws -> Void, perAccount: Bool = false, settle: () -> Void = {}
    ) throws {
        let script = StoreConformance(seed: seed)
        var random = SeededRandom(seed: seed)
        var next = 0
        let end = StoreConformanceTests.end
        try writer.setRetention(Retention(maximumAgeDays: 0, idleDays: 0), now: end)
        _ = try writer.importDonations((0..<300).map { _ in script.donation(&random, number: &next) })
        settle()
        for step in 0..<24 {
            // Writes through another connection, and now and then through the mirrored store's own.
            let store = Int.random(in: 0..<4, using: &random) == 0 ? mirrored : writer
            let account = StoreConformance.accounts.randomElement(using: &random) ?? "default"
            let conversation = "c\(Int.random(in: 0..<25, using: &random))"
            switch step % 8 {
            case 0, 1:
                _ = try store.record(script.donation(&random, number: &next), now: end)
            case 2:
                _ = try store.importDonations(
                    (0..<Int.random(in: 1...30, using: &random)).map { _ in script.donation(&random, number: &next) },
                    options: ImportOptions(now: end))
            case 3:
                _ = try store.delete(script.deletion(&random, numbered: next), account: account)
            case 4:
                try store.setBlocked(Bool.random(using: &random), conversation: conversation, account: account)
            case 5:
                try store.suggestLess(conversation: conversation, account: account)
            case 6:
                try store.resetFeedback(conversation: conversation, account: account)
            default:
                try store.setRetention(Retention(maximumAgeDays: 40, idleDays: 20), now: end)
                _ = try store.maintain(account: nil, now: end.adding(86_400), budget: .unbounded)
                try store.setRetention(Retention(maximumAgeDays: 0, idleDays: 0), now: end)
                settle()
            }
            // Out of date: every query is answered from the store, and asks for a rebuild.
            let stale = statistics()
            try script.compare(reference, mirrored, &random, step: "step \(step), before the rebuild")
            let asked = statistics()
            // (A write that changes nothing may leave the mirror current: only a recording of a new donation is
            // sure to make it stale.)
            if step % 8 < 3 {
                if !perAccount {
                    #expect(asked.hits == stale.hits, "step \(step): a mirror older than the write was used")
                }
                #expect(asked.staleReads + asked.misses > stale.staleReads + stale.misses)
            }
            // Rebuilt: the same answers, from memory.
            try refreshAll()
            let rebuilt = statistics()
            #expect(rebuilt.accounts == StoreConformance.accounts.count)
            try script.compare(reference, mirrored, &random, step: "step \(step), after the rebuild")
            let used = statistics()
            #expect(used.hits > rebuilt.hits, "step \(step): the rebuilt mirror was not used")
            #expect(used.misses == rebuilt.misses && used.staleReads == rebuilt.staleReads && used.abandoned == 0)
        }
    }

    @Test func checkpointsOfAnEmptyLogKeepTheMirrorCurrent() throws {
        let stores = try Stores()
        var random = SeededRandom(seed: 7)
        var next = 0
        let script = StoreConformance(seed: 7)
        try stores.importAndMirror(200, of: script, &random, &next)
        let before = stores.mirror.statistics
        #expect(before.accounts == 1)
        for round in 0..<3 {
            // The server's periodic checkpoint, on the mirrored connection and on another one.
            try stores.mirrored.checkpoint()
            try stores.writer.checkpoint()
            _ = try stores.mirrored.suggestions(account: "default", context: RankingContext(at: StoreConformanceTests.end))
            let after = stores.mirror.statistics
            #expect(after.hits == before.hits + round + 1, "round \(round): a checkpoint made the mirror stale")
            #expect(after.staleReads == before.staleReads)
        }
        // A commit does make it stale.
        _ = try stores.writer.record(script.donation(&random, number: &next), now: StoreConformanceTests.end)
        _ = try stores.mirrored.suggestions(account: "default", context: RankingContext(at: StoreConformanceTests.end))
        #expect(stores.mirror.statistics.staleReads == before.staleReads + 1)
    }

    /// A mirror something was committed since never answers again: the next refresh drops it, whether or not
    /// queries asked for it since, so that a server taking donations and no queries does not keep it in memory.
    /// A checkpoint that changes nothing stored keeps it.
    @Test func anOutOfDateMirrorIsDroppedAtTheNextRefresh() throws {
        let stores = try Stores()
        var random = SeededRandom(seed: 13)
        var next = 0
        let script = StoreConformance(seed: 13)
        try stores.importAndMirror(300, of: script, &random, &next)
        let context = RankingContext(at: StoreConformanceTests.end)
        #expect(stores.mirror.statistics.accounts == 1 && stores.mirror.statistics.bytes > 0)
        try stores.mirrored.checkpoint()
        #expect(try !stores.mirrored.refreshMirror())
        #expect(stores.mirror.statistics.accounts == 1, "a checkpoint dropped a current mirror")

        _ = try stores.writer.record(script.donation(&random, number: &next), now: StoreConformanceTests.end)
        #expect(try !stores.mirrored.refreshMirror(), "rebuilt without a query asking")
        var statistics = stores.mirror.statistics
        #expect(statistics.accounts == 0 && statistics.bytes == 0 && statistics.conversations == 0)
        // The account is read from SQLite (a miss, not a stale read: no mirror is left), then mirrored again.
        #expect(try stores.mirrored.suggestions(account: "default", context: context) == stores.reference.suggestions(account: "default", context: context))
        #expect(stores.mirror.statistics.misses == statistics.misses + 1)
        #expect(try stores.mirrored.refreshMirror())
        statistics = stores.mirror.statistics
        #expect(statistics.accounts == 1 && statistics.bytes > 0)
    }

    @Test func theBudgetKeepsTheMostRecentlyQueriedAccounts() throws {
        // How large each account's mirror is, from a mirror with room for both.
        let sizing = try Stores()
        var random = SeededRandom(seed: 11)
        var next = 0
        let script = StoreConformance(seed: 11)
        _ = try sizing.writer.importDonations((0..<400).map { _ in script.donation(&random, number: &next) })
        let context = RankingContext(at: StoreConformanceTests.end)
        var sizes: [String: Int] = [:]
        for account in ["default", "alice"] {
            let before = sizing.mirror.statistics.bytes
            _ = try sizing.mirrored.suggestions(account: account, context: context)
            try sizing.refreshAll()
            sizes[account] = sizing.mirror.statistics.bytes - before
        }
        let defaultSize = try #require(sizes["default"])
        let aliceSize = try #require(sizes["alice"])
        #expect(defaultSize > 0 && aliceSize > 0)

        // Room for the larger of the two, not for both.
        let directory = sizing.directory
        let mirror = RankingMirror(.init(byteBudget: max(defaultSize, aliceSize), readsBeforeRebuild: 1))
        let store = try SQLiteDonationStore.open(StoreLocation(directory: directory.path), mirror: mirror)
        for account in ["default", "alice"] {
            _ = try store.suggestions(account: account, context: context)
            _ = try store.refreshMirror()
        }
        var statistics = mirror.statistics
        #expect(statistics.accounts == 1 && statistics.evictions == 1 && statistics.rebuilds == 2)
        // The one queried last stays; the other is read from SQLite, and answers the same.
        let hits = statistics.hits
        #expect(try store.suggestions(account: "alice", context: context) == sizing.reference.suggestions(account: "alice", context: context))
        #expect(try store.suggestions(account: "default", context: context) == sizing.reference.suggestions(account: "default", context: context))
        statistics = mirror.statistics
        #expect(statistics.hits == hits + 1)

        // An account larger than the whole budget is never kept.
        let tiny = RankingMirror(.init(byteBudget: 1, readsBeforeRebuild: 1))
        let small = try SQLiteDonationStore.open(StoreLocation(directory: directory.path), mirror: tiny)
        _ = try small.suggestions(account: "default", context: context)
        #expect(try small.refreshMirror())
        #expect(try !small.refreshMirror())
        #expect(try small.suggestions(account: "default", context: context) == sizing.reference.suggestions(account: "default", context: context))
        #expect(tiny.statistics.accounts == 0 && tiny.statistics.hits == 0 && tiny.statistics.discardedRebuilds == 1)
    }

    /// Accounts of one conversation each, all queried: their mirrors are tiny, their caches' floors are not, and
    /// the budget counts both, so that the caches stay within three times it however many such accounts a server
    /// has. Counting the arrays alone (under 1 KB each) kept all 200, whose caches could hold 200 × 48 KiB, 9.4 MiB,
    /// against a budget of 1 MiB.
    @Test func smallAccountsCountTheirCachesFloors() throws {
        let budget = 1 << 20
        let stores = try Stores(.init(byteBudget: budget, readsBeforeRebuild: 1))
        let now = StoreConformanceTests.end
        let accounts = (0..<200).map { "small-\($0)" }
        _ = try stores.writer.importDonations(
            accounts.map { account in
                Interaction(
                    account: account, identifier: "\(account)-d", date: now, direction: .outgoing,
                    intent: SendMessageIntent(conversationIdentifier: "c"))
            })
        for account in accounts {
            _ = try stores.mirrored.suggestions(account: account, context: RankingContext(at: now))
            try stores.refreshAll()
        }
        let statistics = stores.mirror.statistics
        #expect(statistics.rebuilds == accounts.count && statistics.bytes <= budget)
        let cacheRooms = statistics.accounts * 3 * MirrorReadCache.smallestRoom
        #expect(statistics.accounts > 0 && cacheRooms <= 3 * budget, "\(statistics.accounts) accounts")
        // Those kept still answer from memory, the same as SQLite.
        let last = try #require(accounts.last)
        let hits = statistics.hits
        #expect(
            try stores.mirrored.suggestions(account: last, context: RankingContext(at: now))
                == stores.reference.suggestions(account: last, context: RankingContext(at: now)))
        #expect(stores.mirror.statistics.hits == hits + 1)
    }

    /// Queries that find no mirror while it is being read are answered from SQLite at the version being read: once
    /// the rebuild is kept they are no demand for another, or a server would read its busiest account again at
    /// every refresh, answering from SQLite meanwhile, with nothing written.
    @Test func queriesDuringARebuildDoNotCallForAnother() throws {
        let stores = try Stores()
        let donations = (0..<6_000).map { index in
            Interaction(
                identifier: "d\(index)", date: StoreConformanceTests.end.adding(-Double(index) * 60),
                direction: index % 3 == 0 ? .incoming : .outgoing,
                intent: SendMessageIntent(conversationIdentifier: "c\(index % 3_000)", contentTypes: ["public.jpeg"]))
        }
        _ = try stores.writer.importDonations(donations)
        let location = StoreLocation(directory: stores.directory.path)
        let worker = try SQLiteDonationStore.open(location, checkpoints: .everyPages(16_384), mirror: stores.mirror)
        let context = RankingContext(at: StoreConformanceTests.end)
        _ = try worker.suggestions(account: "default", context: context)

        // A worker queries without pause while the mirror is read; the read is tried again until some of its
        // queries fell inside it (a read of 3,000 conversations takes a few milliseconds, a query from SQLite less).
        final class Querying: @unchecked Sendable {
            let store: SQLiteDonationStore
            let stop = Atomic(false)
            let failure = Mutex<(any Error)?>(nil)
            init(_ store: SQLiteDonationStore) { self.store = store }
        }
        let querying = Querying(worker)
        let done = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            while !querying.stop.load(ordering: .relaxed) {
                do {
                    _ = try querying.store.suggestions(account: "default", context: context)
                } catch {
                    querying.failure.withLock { $0 = error }
                    break
                }
            }
            done.signal()
        }
        var missedDuringARead = false
        for _ in 0..<50 where !missedDuringARead {
            let before = stores.mirror.statistics.misses
            #expect(try stores.mirrored.refreshMirror())
            missedDuringARead = stores.mirror.statistics.misses > before
            if !missedDuringARead {
                // Put the mirror out of date, so that the worker's queries call for the next refresh.
                let stale = stores.mirror.statistics.staleReads
                _ = try stores.writer.suggestLess(conversation: "c1", account: "default")
                for _ in 0..<5_000 where stores.mirror.statistics.staleReads == stale { Self.pause(milliseconds: 1) }
            }
        }
        querying.stop.store(true, ordering: .relaxed)
        done.wait()
        try querying.failure.withLock { if let error = $0 { throw error } }
        #expect(missedDuringARead, "no query fell inside a rebuild in 50 tries")

        // Nothing was written since: the mirror is current, and no refresh reads it again.
        #expect(try !stores.mirrored.refreshMirror())
        let hits = stores.mirror.statistics.hits
        let fromMemory = try worker.suggestions(account: "default", context: context)
        #expect(fromMemory == (try stores.reference.suggestions(account: "default", context: context)))
        #expect(stores.mirror.statistics.hits == hits + 1)

        // The retention it holds is the store's: a change is a commit, after which the mirror is not used.
        let later = RankingContext(at: StoreConformanceTests.end.adding(3 * 86_400))
        #expect(try !worker.suggestions(account: "default", context: later).suggestions.isEmpty)
        try stores.writer.setRetention(Retention(maximumAgeDays: 0, idleDays: 1), now: StoreConformanceTests.end)
        #expect(try worker.suggestions(account: "default", context: later).suggestions.isEmpty)
    }

    @Test func aMirrorServesOneStore() throws {
        let first = try TemporaryDirectory("mirror-a")
        let second = try TemporaryDirectory("mirror-b")
        let mirror = RankingMirror()
        _ = try SQLiteDonationStore.open(StoreLocation(directory: first.path), mirror: mirror)
        #expect(throws: StoreError.self) {
            _ = try SQLiteDonationStore.open(StoreLocation(directory: second.path), mirror: mirror)
        }
    }

    @Test func fewerQueriesThanTheThresholdDoNotRebuild() throws {
        let stores = try Stores(.init(readsBeforeRebuild: 3))
        var random = SeededRandom(seed: 5)
        var next = 0
        let script = StoreConformance(seed: 5)
        _ = try stores.writer.importDonations((0..<100).map { _ in script.donation(&random, number: &next) })
        let context = RankingContext(at: StoreConformanceTests.end)
        for _ in 0..<2 { _ = try stores.mirrored.suggestions(account: "default", context: context) }
        #expect(try !stores.mirrored.refreshMirror())
        _ = try stores.mirrored.suggestions(account: "default", context: context)
        #expect(try stores.mirrored.refreshMirror())
        #expect(stores.mirror.statistics.rebuilds == 1)
    }

    /// Workers that share one mirror answer while a writer records and the mirror is rebuilt beside them: every
    /// answer is exactly the store's answer at one of the versions the writer went through, and each worker's
    /// answers never go back to an earlier version.
    @Test func concurrentQueriesSeeOneVersionEach() throws {
        let script = StoreConformance(seed: 9)
        var random = SeededRandom(seed: 9)
        var next = 0
        let first = (0..<200).map { _ in script.donation(&random, number: &next) }
        let writes = (0..<40).map { _ in script.donation(&random, number: &next) }.filter { $0.account == "default" }
        let context = RankingContext(at: StoreConformanceTests.end, limit: 6)
        let explained = RankingContext(at: StoreConformanceTests.end, limit: 4, contentTypes: ["public.jpeg"], people: ["p3"])

        // The answers at every version, one after the other, from a store without a mirror.
        let sequential = try TemporaryDirectory("mirror-sequential")
        let reference = try SQLiteDonationStore.open(StoreLocation(directory: sequential.path))
        _ = try reference.importDonations(first, options: ImportOptions(now: StoreConformanceTests.end))
        var expected: [[SuggestionList]] = []
        for donation in [nil] + writes.map(Optional.some) {
            if let donation { _ = try reference.record(donation, now: StoreConformanceTests.end) }
            expected.append([
                try reference.suggestions(account: "default", context: context),
                try reference.suggestions(account: "default", context: explained, explain: true),
            ])
        }

        let directory = try TemporaryDirectory("mirror-concurrent")
        let location = StoreLocation(directory: directory.path)
        let setup = try SQLiteDonationStore.open(location, checkpoints: .everyPages(100))
        _ = try setup.importDonations(first, options: ImportOptions(now: StoreConformanceTests.end))
        let mirror = RankingMirror(.init(readsBeforeRebuild: 1))
        let done = Atomic(false)
        let failures = Mutex<[String]>([])
        let answered = Mutex(0)
        let answers = expected
        // A queue of its own for each (serial queues get threads of their own as they block; `concurrentPerform`
        // would run only as many at once as there are cores).
        let group = DispatchGroup()
        for worker in 0..<4 {
            DispatchQueue(label: "mirror-test-\(worker)").async(group: group) {
            do {
                let store = try SQLiteDonationStore.open(location, checkpoints: .everyPages(16_384), mirror: mirror)
                switch worker {
                case 0:
                    // The writer, then the signal to stop; it starts once a reader has answered (on a loaded
                    // machine the readers' first query could come after all the writes, and nothing was checked).
                    defer { done.store(true, ordering: .releasing) }
                    for _ in 0..<30_000 where answered.withLock({ $0 }) == 0 { Self.pause(milliseconds: 1) }
                    for donation in writes {
                        _ = try store.record(donation, now: StoreConformanceTests.end)
                        Self.pause(milliseconds: 2)
                    }
                case 1:
                    // The server's periodic checkpoint and rebuild, much more often.
                    while !done.load(ordering: .acquiring) {
                        try store.checkpoint()
                        Self.pause(milliseconds: 1)
                    }
                default:
                    var version = 0
                    while !done.load(ordering: .acquiring) {
                        let plain = try store.suggestions(account: "default", context: context)
                        let rich = try store.suggestions(account: "default", context: explained, explain: true)
                        guard let seen = answers.indices.first(where: { answers[$0][0] == plain }),
                            let seenRich = answers.indices.first(where: { answers[$0][1] == rich })
                        else {
                            failures.withLock { $0.append("worker \(worker): an answer of no version") }
                            return
                        }
                        // Several versions may give the same plain answer: the first that does is a lower bound.
                        if seenRich < version {
                            failures.withLock { $0.append("worker \(worker): back from version \(version) to \(seenRich)") }
                        }
                        version = max(version, min(seen, seenRich))
                        answered.withLock { $0 += 1 }
                    }
                }
            } catch {
                failures.withLock { $0.append("worker \(worker): \(error)") }
            }
            }
        }
        group.wait()
        #expect(failures.withLock { $0 } == [])
        #expect(answered.withLock { $0 } > 0)
        // (How many answers came from memory while the writer ran depends on the machine's load: what is checked is
        // that each was one version's, and below, that the mirror catches up once the writes are over.)
        #expect(mirror.statistics.staleReads + mirror.statistics.misses > 0)
        // Once the writes are over, the mirror catches up and is used.
        let store = try SQLiteDonationStore.open(location, mirror: mirror)
        _ = try store.suggestions(account: "default", context: context)
        try store.checkpoint()
        let before = mirror.statistics.hits
        #expect(try store.suggestions(account: "default", context: context) == expected.last?[0])
        #expect(mirror.statistics.hits == before + 1)
    }

    static func pause(milliseconds: Int) {
        _ = DispatchSemaphore(value: 0).wait(timeout: .now() + .milliseconds(milliseconds))
    }
}
