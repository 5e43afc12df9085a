import Dispatch
import SuggestCore
import SuggestTestSupport
import Synchronization
import Testing

@testable import SuggestSQLiteStore

#if canImport(Glibc)
    import Glibc
#endif

@Suite struct DonationStoreTests {
    static let at = Timestamp(seconds: 1_796_029_200)  // 2026-11-30T09:00:00Z

    static func donation(
        _ id: String, _ conversation: String, _ date: Double, _ direction: InteractionDirection = .outgoing,
        group: String? = nil, account: String = "default", types: [String] = []
    ) -> Interaction {
        Interaction(
            account: account, identifier: id, date: Timestamp(seconds: date), direction: direction,
            intent: SendMessageIntent(
                conversationIdentifier: conversation, speakableGroupName: group,
                recipients: [Person(customIdentifier: "p-" + conversation, displayName: "Person " + conversation)],
                contentTypes: types))
    }

    /// A store with `bulk` donations in another account (a rewrite reads them all, a deletion's own work does not)
    /// and one each to `mine` conversations (`mine-0` ...), and a connection to it paced as a server's but for its
    /// 50 ms, which a store a test can make in a moment does not take, and for its pause: twenty rewrites' time,
    /// not four, so that a test's steps between two deletions fit in it on a loaded machine (with four, the
    /// deletion meant to be held back rewrote the file once in a run beside three other processes' imports).
    static func pacedStore(bulk: Int, mine: Int) throws -> (TemporaryStore, SQLiteDonationStore) {
        let temporary = try TemporaryStore()
        let start = Self.at.seconds - 200_000
        let others = (0..<bulk).map {
            Self.donation("b\($0)", "bulk-\($0 % (bulk / 10))", start + Double($0), account: "bulk")
        }
        let own = (0..<mine).map { Self.donation("m\($0)", "mine-\($0)", start + Double($0)) }
        _ = try temporary.store.importDonations(others + own, options: ImportOptions(now: Self.at))
        let paced = try SQLiteDonationStore.open(
            temporary.temporary.location, pacingRewrites: RewritePacing(heldBackFrom: .zero, pauseFactor: 20))
        return (temporary, paced)
    }

    /// A process rewrites the file after a deletion at most a fifth of the time: a deletion right after a rewrite
    /// leaves its own owed (`logTruncated` false, the marker beside the database), and a checkpoint once the pause
    /// is over settles it. Without the pause a client deleting or unblocking in a loop kept a large store's writers
    /// waiting behind one rewrite after another (a review measured half a second each on 83 MB).
    @Test func aDeletionRightAfterARewriteLeavesItsOwnToACheckpoint() throws {
        let (temporary, paced) = try Self.pacedStore(bulk: 40_000, mine: 4)
        let marker = temporary.directory + "/suggest.sqlite-rewrite"
        #expect(try paced.delete(.conversation("mine-0"), account: "default").logTruncated)
        #expect(access(marker, F_OK) != 0)
        #expect(try !paced.delete(.conversation("mine-1"), account: "default").logTruncated)
        #expect(access(marker, F_OK) == 0)
        // A connection the paced server opens meanwhile (its pool, under load) keeps to the pacing: it rewrote the
        // file at once, on a request's thread (found by a review). Its pause here is long enough for any machine.
        let patient = RewritePacing(heldBackFrom: .zero, pauseFactor: 10_000)
        _ = try SQLiteDonationStore.open(temporary.temporary.location, pacingRewrites: patient)
        #expect(access(marker, F_OK) == 0, "an opener rewrote the file while the pacing held the rewrite back")
        // The deletion cut the log; a rewrite held back again owes only itself, not another cut (which every
        // checkpoint would then make, each second, while a full disk held the rewrite back).
        #expect(!paced.database.owesLogScrub)
        #expect(!paced.database.rewriteAfterDeletion(paced: patient))
        #expect(!paced.database.owesLogScrub, "a rewrite that did not happen owes a cut")
        // A store that does not pace (a command's, an app's) rewrites after each deletion.
        #expect(try temporary.store.delete(.conversation("mine-2"), account: "default").logTruncated)
        #expect(access(marker, F_OK) != 0)
        #expect(try !paced.delete(.conversation("mine-3"), account: "default").logTruncated)
        let deadline = ContinuousClock.now + .seconds(30)
        while access(marker, F_OK) == 0 && ContinuousClock.now < deadline {
            try paced.checkpoint()
            var pause = timespec(tv_sec: 0, tv_nsec: 20_000_000)
            nanosleep(&pause, nil)
        }
        #expect(access(marker, F_OK) != 0, "a checkpoint after the pause rewrites the file")
    }

    /// What a deletion owes and no marker can note (a directory the user may change the store's files in but create
    /// none: here a link to nowhere in each marker's place) is kept by the process, and said
    /// (`cleanupLeftUnnoted`): the paced server's rewrite was lost without a word, and its checkpoints never did it.
    @Test func aDebtNoMarkerCanNoteIsKeptByTheProcessAndSaid() throws {
        let (temporary, paced) = try Self.pacedStore(bulk: 20_000, mine: 2)
        // Planted again after each settling, which removes them.
        func plantLinks() {
            for marker in ["rewrite", "scrub"] {
                let path = temporary.directory + "/suggest.sqlite-" + marker
                unlink(path)
                #expect(symlink("/nonexistent-\(getpid())/marker", path) == 0)
            }
        }
        plantLinks()
        #expect(try paced.delete(.conversation("mine-0"), account: "default").logTruncated)
        #expect(paced.cleanupLeftUnnoted == nil)
        plantLinks()
        // Right after that rewrite, the next one is held back, and only this process knows it is owed.
        #expect(try !paced.delete(.conversation("mine-1"), account: "default").logTruncated)
        #expect(paced.database.owesFileRewrite, "the rewrite owed was forgotten")
        let said = paced.cleanupLeftUnnoted ?? ""
        #expect(said.contains("cannot create") && said.contains("suggest.sqlite-rewrite"), "\(said)")
        let deadline = ContinuousClock.now + .seconds(30)
        while paced.database.owesFileRewrite && ContinuousClock.now < deadline {
            try paced.checkpoint()
            var pause = timespec(tv_sec: 0, tv_nsec: 20_000_000)
            nanosleep(&pause, nil)
        }
        #expect(!paced.database.owesFileRewrite, "a checkpoint after the pause rewrites the file")
        #expect(paced.cleanupLeftUnnoted == nil)
    }

    /// A marker there already that this user may not open (a member of the store's group made it 0600; here a
    /// directory in its place) notes the debt all the same, as every process finds it; a link to nowhere does not.
    /// Counted as unnoted, a group member's deletion exited 1 saying no later command could know it.
    @Test func aMarkerThereAlreadyNotesTheDebt() throws {
        let temporary = try TemporaryStore()
        let gate = WriteGate.forDatabase(at: temporary.directory + "/suggest.sqlite")
        let marker = temporary.directory + "/suggest.sqlite-scrub"
        #expect(mkdir(marker, 0o700) == 0)
        gate.oweLogScrub()
        #expect(gate.owesLogScrub && gate.unnotedDebt == nil, "\(gate.unnotedDebt ?? "")")
        #expect(rmdir(marker) == 0)
        #expect(symlink("/nonexistent-\(getpid())/marker", marker) == 0)
        gate.oweLogScrub()
        #expect(gate.unnotedDebt?.contains("cannot create") == true)
        gate.settleLogScrub()
        #expect(gate.unnotedDebt == nil)
    }

    /// A marker that cannot be removed once its debt is settled (here a directory in its place; a directory that
    /// lets the user make files but not remove another's does the same) is said (`upkeepWarning`): every process
    /// that opened the store found the debt and rewrote the whole file again, silently, each `list` included.
    /// Once an operator removes it, the warning goes.
    @Test func aMarkerThatCannotBeRemovedIsSaid() throws {
        let temporary = try TemporaryStore()
        _ = try temporary.store.record(Self.donation("d1", "c1", Self.at.seconds - 60))
        let marker = temporary.directory + "/suggest.sqlite-rewrite"
        #expect(mkdir(marker, 0o700) == 0)
        let opened = try SQLiteDonationStore.open(temporary.temporary.location)
        let warning = opened.upkeepWarning ?? ""
        #expect(warning.contains("cannot remove \(marker)"), "\(warning)")
        #expect(warning.contains("rewrites the whole file"), "\(warning)")
        #expect(rmdir(marker) == 0)
        #expect(opened.upkeepWarning == nil)
        #expect(temporary.store.upkeepWarning == nil)
    }

    /// Marked weights are folded a page of names at a time, step after step, each step within its budget, until
    /// every account is folded as a store that never marked them holds them (the names were all read at every
    /// step, quadratic in their number: a million marked accounts folded at 73 a second on a server).
    @Test func markedWeightsAreFoldedAPageAtATime() throws {
        let temporary = try TemporaryStore()
        let accounts = LearnedWeightsTable.pageOfMarkedAccounts * 2 + 10
        let donations = (0..<accounts).map { Self.donation("d\($0)", "c", Self.at.seconds - 60, account: "u\($0)") }
        _ = try temporary.store.importDonations(donations, options: ImportOptions(now: Self.at))
        let expected = try (0..<accounts).map { try temporary.store.learnedWeights(account: "u\($0)") }
        try LearnedWeightsTable.markAll(in: temporary.store.database)
        var steps = 0
        while try !LearnedWeightsTable.marked(account: nil, limit: 1, in: temporary.store.database).isEmpty {
            let report = try temporary.store.maintain(account: nil, now: Self.at, budget: .step)
            #expect(report.foldedAccounts > 0 && report.foldedAccounts <= MaintenanceBudget.step.conversations)
            steps += 1
            guard steps < 100 else { break }
        }
        #expect(steps >= 2, "folded in \(steps) steps")
        #expect(try (0..<accounts).map { try temporary.store.learnedWeights(account: "u\($0)") } == expected)
    }

    /// A command's expiry of its own account looks at that account's blocks first (`mayHaveExpiredBlocks`) and
    /// skips the walk of every account's expired blocks when it has none: each command paid for the others' (374 ms
    /// with 580,000 of them). An account with an expired block still has it expired, a large one too, whose look
    /// stops at `expiryLookLimit` blocks and leaves the finding to the walk; the other accounts keep theirs until
    /// their own commands or a store-wide expiry.
    @Test func anAccountsExpiryLooksAtItsOwnBlocks() throws {
        let temporary = try TemporaryStore(retention: Retention(maximumAgeDays: 90, idleDays: 0))
        let old = Self.at.seconds - 100 * 86_400
        let recent = Self.at.seconds - 86_400
        var donations = [
            Self.donation("o1", "c", old, account: "other"), Self.donation("s1", "c", recent, account: "fresh"),
            Self.donation("e1", "old", old, account: "small"), Self.donation("e2", "new", recent, account: "small"),
        ]
        // A large account whose one expired conversation sorts after more fresh ones than the look reads.
        let fresh = (0..<SQLiteDonationStore.expiryLookLimit).map {
            Self.donation("l\($0)", "c\(10_000 + $0)", recent, account: "large")
        }
        donations += fresh + [Self.donation("lz", "zz-old", old, account: "large")]
        // The old ones recorded when they were still kept.
        let earlier = donations.filter { $0.date.seconds == old }
        let later = donations.filter { $0.date.seconds != old }
        _ = try temporary.store.importDonations(earlier, options: ImportOptions(now: Self.at.adding(-95 * 86_400)))
        _ = try temporary.store.importDonations(later, options: ImportOptions(now: Self.at))
        func count(_ account: String) throws -> Int {
            var count = 0
            try temporary.store.forEachDonation(account: account) { _ in count += 1 }
            return count
        }
        for account in ["fresh", "small", "large"] {
            _ = try temporary.store.maintain(account: account, now: Self.at, budget: .unbounded)
        }
        #expect(try count("fresh") == 1)
        #expect(try count("small") == 1, "the expired donation of a small account stayed")
        #expect(try count("large") == fresh.count, "the expired donation of a large account stayed")
        #expect(try count("other") == 1, "another account's expiry is its own")
    }

    /// An import read the retention before it took the write lock: a `config --max-age-days` that committed while
    /// it waited did not hold for it, and donations older than the new limit were recorded (and removed later by
    /// the daily expiry, without the rewrite of the file that changing the setting does). Found by a review.
    @Test func anImportKeepsToTheRetentionInForceWhenItWrites() throws {
        let temporary = try TemporaryStore()
        let old = (0..<10).map { Self.donation("old-\($0)", "c-\($0)", Self.at.seconds - 60 * 86_400 + Double($0)) }
        let holder = try Database(path: temporary.temporary.location.databasePath)
        try holder.execute("BEGIN IMMEDIATE")
        nonisolated(unsafe) let store = temporary.store
        let report = Mutex<Result<ImportReport, any Error>?>(nil)
        let given = Atomic<Int>(0)
        DispatchQueue.global().async {
            let result = Result {
                try store.importDonations(ImportOptions(now: Self.at), progress: { _ in }, interruption: {}) {
                    let index = given.add(1, ordering: .sequentiallyConsistent).oldValue
                    return index < old.count ? NumberedDonation(line: index + 1, donation: .success(old[index])) : nil
                }
            }
            report.withLock { $0 = result }
        }
        // Once the import has its first donation it goes for the lock, and waits there while the holder shortens
        // the retention to 30 days (as `config` would).
        let asked = ContinuousClock.now + .seconds(60)
        while given.load(ordering: .sequentiallyConsistent) == 0 && ContinuousClock.now < asked { sleepSeconds(0.01) }
        sleepSeconds(0.3)
        try holder.statement(
            "INSERT OR REPLACE INTO settings(name, value) VALUES ('retention.maximumAgeDays', '30')"
        ).run()
        try holder.execute("COMMIT")
        let deadline = ContinuousClock.now + .seconds(60)
        while report.withLock({ $0 == nil }) && ContinuousClock.now < deadline { sleepSeconds(0.05) }
        let imported = try #require(try report.withLock { $0 }?.get())
        #expect(imported.recorded == 0 && imported.expired == 10, "\(imported)")
    }

    @Test func importExportImportExportIsIdentical() throws {
        let first = try TemporaryStore()
        try first.importLines(try SampleHistory.text())
        let exported = try first.export()
        #expect(exported.split(separator: "\n").count == 238)
        let second = try TemporaryStore()
        try second.importLines(exported)
        #expect(try second.export() == exported)
    }

    /// A snapshot whose JSON was damaged on disk is reported as a damaged store, whichever way it is read.
    @Test func aDamagedSnapshotIsADamagedStore() throws {
        let temporary = try TemporaryStore()
        _ = try temporary.store.record(Self.donation("d1", "c", Self.at.seconds))
        try temporary.store.database.execute(#"UPDATE snapshots SET body = '{"conversationIdentifier":'"#)
        let damaged = StoreError.Kind.notAStore
        expectError {
            _ = try temporary.store.suggestions(account: "default", context: RankingContext(at: Self.at))
        } where: { ($0 as? StoreError)?.kind == damaged && "\($0)".contains("damaged") }
        expectError {
            try temporary.store.forEachDonation(account: "default") { _ in }
        } where: { ($0 as? StoreError)?.kind == damaged }
    }

    @Test func theSameIdentifierTwiceIsANoOp() throws {
        let temporary = try TemporaryStore()
        let donation = Self.donation("d1", "c", Self.at.seconds)
        #expect(try temporary.store.record(donation) == .recorded(identifier: "d1"))
        let before = try temporary.store.suggestions(account: "default", context: RankingContext(at: Self.at))
        // Nothing is written: no commit reaches the log (rankings mirrored from the store stay current).
        let header = try #require(WALIndexHeader(connection: temporary.store.database))
        let version = header.read()
        #expect(try temporary.store.record(donation) == .duplicate(identifier: "d1"))
        #expect(header.read() == version)
        let report = try temporary.importLines(donation.jsonLine + "\n" + donation.jsonLine)
        #expect(report.recorded == 0 && report.duplicates == 2)
        #expect(try temporary.store.donationCount(account: "default") == 1)
        #expect(try temporary.store.suggestions(account: "default", context: RankingContext(at: Self.at)) == before)
    }

    /// A large import (the store's identifier keys read up front, its own merged into their buckets at its end) finds
    /// the same duplicates as a small one: donations the store already holds, and lines the file repeats.
    @Test func aLargeImportFindsTheDuplicatesASmallOneFinds() throws {
        let lines = try SampleHistory.text().split(separator: "\n").map(String.init)
        let firstHalf = lines.prefix(lines.count / 2).joined(separator: "\n")
        let everythingAndSomeAgain = (lines + lines.suffix(20)).joined(separator: "\n")
        var reports: [ImportReport] = []
        var exports: [String] = []
        for expected in [nil, 1_000_000] {
            let temporary = try TemporaryStore()
            try temporary.importLines(firstHalf, expectedDonations: expected)
            reports.append(try temporary.importLines(everythingAndSomeAgain, expectedDonations: expected))
            exports.append(try temporary.export())
        }
        #expect(reports.map(\.recorded) == [lines.count - lines.count / 2, lines.count - lines.count / 2])
        #expect(reports.map(\.duplicates) == [lines.count / 2 + 20, lines.count / 2 + 20])
        #expect(exports[0] == exports[1])
    }

    /// Two identifiers with the same 64-bit key (made here by listing another identifier's block under the key,
    /// since a real collision of the hash is once in billions) are told apart by their strings, in a small import
    /// and in a large one, where the keys are held in memory.
    @Test func identifiersThatShareAKeyAreToldApart() throws {
        let line = #"{"identifier":"x-1","date":"2026-11-29T18:03:00Z","intent":{"conversationIdentifier":"c"}}"#
        for expected in [nil, 1_000_000] {
            let temporary = try TemporaryStore()
            try temporary.importLines(
                #"{"identifier":"a-1","date":"2026-11-28T18:03:00Z","intent":{"conversationIdentifier":"c"}}"#)
            let database = temporary.store.database
            try database.write {
                let identifiers = IdentifierIndex(database: database)
                let block = try #require(try identifiers.blocks(for: StableHash.key("default", "a-1")).first)
                identifiers.add(StableHash.key("default", "x-1"), block: block)
                try identifiers.write(storeSize: 0)
            }
            let report = try temporary.importLines(line + "\n" + line, expectedDonations: expected)
            #expect(report.recorded == 1 && report.duplicates == 1, "expected \(String(describing: expected))")
            #expect(try temporary.importLines(line, expectedDonations: expected).duplicates == 1)
            // Deleting one of the two leaves the other, and the key listed for the other's block.
            #expect(try temporary.store.delete(.identifier("x-1"), account: "default").donations == 1)
            #expect(try temporary.store.delete(.identifier("x-1"), account: "default").donations == 0)
            #expect(try temporary.store.donationCount(account: "default") == 1)
            #expect(try temporary.store.delete(.identifier("a-1"), account: "default").donations == 1)
        }
    }

    /// A duplicate whose first copy is in a block the same import has already filled and written is found, in a
    /// small import (through the buckets) and a large one (through the keys in memory).
    @Test func aDuplicateInAnEarlierBlockOfTheSameImportIsFound() throws {
        let lines = (0..<200).map { index in
            #"{"identifier":"m-\#(index)-\#(String(repeating: "y", count: 60))","date":"2026-11-29T18:03:00Z","intent":{"conversationIdentifier":"c"}}"#
        }
        for expected in [nil, 1_000_000] {
            let temporary = try TemporaryStore()
            let report = try temporary.importLines(
                (lines + [lines[0], lines[150]]).joined(separator: "\n"), expectedDonations: expected)
            #expect(report.recorded == 200 && report.duplicates == 2, "expected \(String(describing: expected))")
            let blocks = try temporary.store.database.statement("SELECT COUNT(*) FROM donation_blocks").scalarInt() ?? 0
            #expect(blocks >= 3)
        }
    }

    /// A duplicate whose first copy is stored in a block this transaction adds to is found: the transaction holds
    /// only what it added to the block, and reads the stored part for the rest.
    @Test func aDuplicateInAStoredBlockThisTransactionAddsToIsFound() throws {
        func line(_ identifier: String) -> String {
            #"{"identifier":"\#(identifier)","date":"2026-11-29T18:03:00Z","intent":{"conversationIdentifier":"c"}}"#
        }
        for expected in [nil, 1_000_000] {
            let temporary = try TemporaryStore()
            try temporary.importLines(line("a-1"))
            let report = try temporary.importLines(
                [line("b-1"), line("a-1"), line("b-1")].joined(separator: "\n"), expectedDonations: expected)
            #expect(report.recorded == 1 && report.duplicates == 2, "expected \(String(describing: expected))")
            let blocks = try temporary.store.database.statement("SELECT COUNT(*) FROM donation_blocks").scalarInt()
            #expect(blocks == 1)
        }
    }

    /// Identifiers and group identifiers that Swift's `==` calls equal (canonically equivalent spellings) but whose
    /// bytes differ are different identifiers, as SQL's comparison of text says: both recorded, one deleted alone.
    @Test func canonicallyEquivalentIdentifiersStayApart() throws {
        let temporary = try TemporaryStore()
        let composed = "caf\u{E9}"
        let decomposed = "cafe\u{301}"
        for (index, identifier) in [composed, decomposed].enumerated() {
            #expect(
                try temporary.store.record(Self.donation(identifier, "c", Self.at.seconds - Double(index), group: nil))
                    == .recorded(identifier: identifier))
            var grouped = Self.donation("g\(index)", "c", Self.at.seconds - 10 - Double(index))
            grouped.groupIdentifier = identifier
            _ = try temporary.store.record(grouped)
        }
        #expect(try temporary.store.delete(.identifier(composed), account: "default").donations == 1)
        #expect(try temporary.store.delete(.groupIdentifier(decomposed), account: "default").donations == 1)
        var left: [[UInt8]] = []
        try temporary.store.forEachDonation(account: "default") { left.append(Array(($0.identifier ?? "").utf8)) }
        #expect(left == [Array("g0".utf8), Array(decomposed.utf8)])
    }

    /// A row of the identifier buckets that is not one is a damaged store, reported as such, not a crash.
    @Test func aDamagedBucketIsADamagedStore() throws {
        let temporary = try TemporaryStore()
        try temporary.importLines(
            #"{"identifier":"a","date":"2026-11-28T18:03:00Z","intent":{"conversationIdentifier":"c"}}"#)
        try temporary.store.database.execute("INSERT INTO donation_identifiers(bucket, entries) VALUES (-1, x'00')")
        #expect(throws: StoreError.self) {
            try temporary.importLines(
                #"{"identifier":"b","date":"2026-11-28T18:03:00Z","intent":{"conversationIdentifier":"c"}}"#,
                expectedDonations: 1_000_000)
        }
    }

    /// Two conversations, and two versions of one conversation, whose writer keys are equal (forced here; a real
    /// collision of the hash is once in billions) stay apart: each donation goes to its own conversation and
    /// snapshot, and a repeated version still finds its row.
    @Test func conversationsAndSnapshotsThatShareAKeyAreToldApart() throws {
        let temporary = try TemporaryStore()
        let database = temporary.store.database
        func prepared(_ id: String, _ conversation: String, _ date: Double, group: String? = nil) -> PreparedDonation {
            PreparedDonation(
                Self.donation(id, conversation, date, group: group), types: .standard, conversationKey: 42,
                snapshotKey: 7)
        }
        try database.write {
            let writer = DonationWriter(database: database, ranking: temporary.store.ranking, types: .standard)
            let at = Self.at.seconds
            for donation in [
                prepared("1", "a", at - 50), prepared("2", "b", at - 40), prepared("3", "a", at - 30, group: "Renamed"),
                prepared("4", "b", at - 20), prepared("5", "a", at - 10),
            ] {
                #expect(try writer.record(donation) != nil)
            }
            try writer.flush()
        }
        let counts = try database.uncachedStatement(
            "SELECT conversation_identifier, outgoing_count FROM conversations ORDER BY conversation_identifier")
        var outgoing: [String: Int64] = [:]
        while try counts.step() { outgoing[counts.text(0) ?? ""] = counts.int(1) }
        #expect(outgoing == ["a": 3, "b": 2])
        // "a" has two versions (plain and renamed), "b" one: three rows, though all five bodies had key 7.
        #expect(try database.statement("SELECT COUNT(*) FROM snapshots").scalarInt() == 3)
        let names = try temporary.store.suggestions(account: "default", context: RankingContext(at: Self.at))
        #expect(Set(names.map(\.conversationIdentifier)) == ["a", "b"])
        var exported = try temporary.export()
        #expect(exported.contains(#""identifier":"3""#) && exported.contains("Renamed"))
        #expect(exported.split(separator: "\n").filter { $0.contains("Renamed") }.count == 1)
        // A later writer meets "a" in the store: its versions are found in SQL by key and body, so a new version
        // with the same key is a new row, and a known one with it is found.
        try database.write {
            let writer = DonationWriter(database: database, ranking: temporary.store.ranking, types: .standard)
            #expect(try writer.record(prepared("6", "a", Self.at.seconds - 5, group: "Third name")) != nil)
            #expect(try writer.record(prepared("7", "a", Self.at.seconds - 4, group: "Renamed")) != nil)
            try writer.flush()
        }
        #expect(try database.statement("SELECT COUNT(*) FROM snapshots").scalarInt() == 4)
        exported = try temporary.export()
        #expect(exported.split(separator: "\n").filter { $0.contains("Renamed") }.count == 2)
        #expect(exported.contains("Third name"))
    }

    @Test func theMostAndMostRecentlyDonatedRanksFirst() throws {
        let temporary = try TemporaryStore()
        let day = 86_400.0
        for (index, offset) in [5.0, 3, 1, 0.01].enumerated() {
            _ = try temporary.store.record(Self.donation("a\(index)", "often", Self.at.seconds - offset * day))
        }
        _ = try temporary.store.record(Self.donation("b", "once", Self.at.seconds - 0.05 * day))
        _ = try temporary.store.record(Self.donation("c", "old", Self.at.seconds - 30 * day))
        let ranked = try temporary.store.suggestions(
            account: "default", context: RankingContext(at: Self.at), explain: true)
        #expect(ranked.map(\.conversationIdentifier) == ["often", "once", "old"])
        let first = try #require(ranked[0].explanation).terms.map(\.value)
        let second = try #require(ranked[1].explanation).terms.map(\.value)
        #expect(first.count == StoreRanking.default.base.channels.count)
        #expect(zip(first, second).allSatisfy { $0 >= $1 })
    }

    @Test func aRenameUpdatesTheSuggestionAndALateOldDonationDoesNotUndoIt() throws {
        let temporary = try TemporaryStore()
        _ = try temporary.store.record(Self.donation("1", "g", Self.at.seconds - 100, group: "Old name"))
        _ = try temporary.store.record(Self.donation("2", "g", Self.at.seconds - 50, group: "New name"))
        _ = try temporary.store.record(Self.donation("3", "g", Self.at.seconds - 500, group: "Ancient name"))
        let top = try temporary.store.suggestions(account: "default", context: RankingContext(at: Self.at))
        #expect(top.first?.speakableGroupName == "New name")
    }

    /// After deletions, the stored state must equal that of a history that never had the deleted donations,
    /// to the bit; and the stored top K must equal brute force.
    @Test(arguments: [UInt64(11), 12, 13])
    func deletionLeavesTheStateOfAHistoryThatNeverHadIt(seed: UInt64) throws {
        var random = SeededRandom(seed: seed)
        let temporary = try TemporaryStore()
        var kept: [Interaction] = []
        let kinds = ["public.jpeg", "public.url", "com.adobe.pdf"]
        for index in 0..<600 {
            let conversation = "c\(Int.random(in: 0..<25, using: &random))"
            let date = Self.at.seconds - Double(Int.random(in: 0..<400, using: &random)) * 3_600
            let direction = [InteractionDirection.outgoing, .incoming].randomElement(using: &random) ?? .outgoing
            // Identifiers of up to 400 bytes: a conversation's 24 donations fill one to three blocks, so that
            // deletions rewrite and remove blocks in the middle and at the end of a conversation.
            let identifier = "d\(index)-" + String(repeating: "x", count: Int.random(in: 0...400, using: &random))
            var donation = Self.donation(
                identifier, conversation, date, direction, types: Bool.random(using: &random) ? [kinds[index % 3]] : [])
            donation.groupIdentifier = "batch\(index % 7)"
            _ = try temporary.store.record(donation)
            kept.append(donation)
            if index % 50 == 49 {
                switch index / 50 % 4 {
                case 0:
                    let victim = "c\(Int.random(in: 0..<25, using: &random))"
                    _ = try temporary.store.delete(.conversation(victim), account: "default")
                    kept.removeAll { $0.conversationIdentifier == victim }
                case 1:
                    let victim = kept[Int.random(in: 0..<kept.count, using: &random)]
                    _ = try temporary.store.delete(.identifier(victim.identifier ?? ""), account: "default")
                    kept.removeAll { $0.identifier == victim.identifier }
                case 2:
                    let group = "batch\(Int.random(in: 0..<7, using: &random))"
                    _ = try temporary.store.delete(.groupIdentifier(group), account: "default")
                    kept.removeAll { $0.groupIdentifier == group }
                default:
                    let cutoff = Timestamp(seconds: Self.at.seconds - 300 * 3_600)
                    _ = try temporary.store.delete(.before(cutoff), account: "default")
                    kept.removeAll { $0.date < cutoff }
                }
            }
        }
        let fresh = try TemporaryStore()
        for donation in kept { _ = try fresh.store.record(donation) }
        for context in [
            RankingContext(at: Self.at, limit: 100),
            RankingContext(at: Self.at, limit: 5, contentTypes: ["public.png"]),
            RankingContext(at: Self.at.adding(86_400), limit: 8, people: ["p-c3", "p-c4"]),
        ] {
            let stored = try temporary.store.suggestions(account: "default", context: context, explain: true)
            let rebuilt = try fresh.store.suggestions(account: "default", context: context, explain: true)
            #expect(stored == rebuilt)
            let brute = try temporary.store.suggestionsByBruteForce(account: "default", context: context)
            #expect(try temporary.store.rankedConversations(account: "default", context: context) == brute)
        }
        #expect(try temporary.export() == (try fresh.export()))
    }

    @Test func blockedAndLessFeedbackShowInTheRanking() throws {
        let temporary = try TemporaryStore()
        for (index, conversation) in ["a", "a", "a", "b", "b", "c"].enumerated() {
            _ = try temporary.store.record(Self.donation("\(index)", conversation, Self.at.seconds - Double(index)))
        }
        try temporary.store.setBlocked(true, conversation: "a", account: "default")
        try temporary.store.suggestLess(conversation: "b", account: "default")
        try temporary.store.suggestLess(conversation: "b", account: "default")
        let ranked = try temporary.store.suggestions(
            account: "default", context: RankingContext(at: Self.at), explain: true)
        #expect(ranked.map(\.conversationIdentifier) == ["c", "b"])
        #expect(ranked[1].explanation?.lessFeedback == 2)
        // A block survives new donations and deletion.
        _ = try temporary.store.record(Self.donation("new", "a", Self.at.seconds))
        _ = try temporary.store.delete(.conversation("a"), account: "default")
        _ = try temporary.store.record(Self.donation("newer", "a", Self.at.seconds))
        #expect(
            !(try temporary.store.suggestions(account: "default", context: RankingContext(at: Self.at)))
                .contains { $0.conversationIdentifier == "a" })
        try temporary.store.setBlocked(false, conversation: "a", account: "default")
        #expect(
            (try temporary.store.suggestions(account: "default", context: RankingContext(at: Self.at)))
                .contains { $0.conversationIdentifier == "a" })
    }

    @Test func accountsAreWalls() throws {
        let temporary = try TemporaryStore()
        _ = try temporary.store.record(Self.donation("1", "shared-id", Self.at.seconds, account: "alice"))
        _ = try temporary.store.record(Self.donation("1", "shared-id", Self.at.seconds - 10, account: "bob"))
        _ = try temporary.store.record(Self.donation("2", "only-bob", Self.at.seconds, account: "bob"))
        #expect(
            try temporary.store.suggestions(account: "alice", context: RankingContext(at: Self.at))
                .map(\.conversationIdentifier) == ["shared-id"])
        #expect(try temporary.export(account: "alice").split(separator: "\n").count == 1)
        let report = try temporary.store.delete(.all, account: "alice")
        #expect(report.donations == 1)
        #expect(try temporary.store.donationCount(account: "bob") == 2)
        #expect(try temporary.store.suggestions(account: "bob", context: RankingContext(at: Self.at)).count == 2)
    }

    @Test func retentionExpiresOldDonationsAndHidesIdleConversations() throws {
        let temporary = try TemporaryStore(retention: Retention(maximumAgeDays: 0, idleDays: 0))
        let now = Timestamp.now()
        let day = 86_400.0
        _ = try temporary.store.record(Self.donation("old", "a", now.seconds - 100 * day))
        _ = try temporary.store.record(Self.donation("recent", "a", now.seconds - 1 * day))
        _ = try temporary.store.record(Self.donation("quiet", "b", now.seconds - 40 * day))
        let report = try temporary.store.setRetention(Retention(maximumAgeDays: 90, idleDays: 30), now: now)
        #expect(report.donations == 1)
        let ranked = try temporary.store.suggestions(
            account: "default", context: RankingContext(at: now), explain: true)
        #expect(ranked.map(\.conversationIdentifier) == ["a"])
        // The same as a store that only ever had what remains: the ranking state and the learned weights alike.
        let fresh = try TemporaryStore()
        _ = try fresh.store.record(Self.donation("recent", "a", now.seconds - 1 * day))
        _ = try fresh.store.record(Self.donation("quiet", "b", now.seconds - 40 * day))
        #expect(
            try temporary.store.learnedWeights(account: "default") == fresh.store.learnedWeights(account: "default"))
        // (The fresh store keeps idle conversations in its list: only `a` is compared.)
        #expect(
            ranked.map(\.explanation?.logScore)
                == (try fresh.store.suggestions(account: "default", context: RankingContext(at: now), explain: true))
                .filter { $0.conversationIdentifier == "a" }.map(\.explanation?.logScore))
        #expect(try temporary.store.record(Self.donation("too-old", "c", now.seconds - 91 * day), now: now) == .expired)
    }

    @Test func anInvalidLineLeavesTheStoreAsItWas() throws {
        let temporary = try TemporaryStore()
        try temporary.importLines(Self.donation("keep", "a", Self.at.seconds).jsonLine)
        let before = try temporary.export()
        let lines = [
            Self.donation("x", "b", Self.at.seconds).jsonLine,
            #"{"date": "not a date", "intent": {"conversationIdentifier": "c"}}"#,
        ]
        #expect(throws: InputError.self) { try temporary.importLines(lines.joined(separator: "\n")) }
        #expect(try temporary.export() == before)
        let report = try temporary.importLines(lines.joined(separator: "\n"), skipInvalid: true)
        #expect(report.recorded == 1 && report.rejected.count == 1 && report.rejected[0].line == 2)
    }

    /// `yes x | suggest import - --skip-invalid` took 1.5 GB in 8 seconds when every refused line was kept to be
    /// reported: the report keeps the first ones and counts the rest.
    @Test func skippedLinesAreCountedNotAllKept() throws {
        let temporary = try TemporaryStore()
        let lines = [Self.donation("x", "b", Self.at.seconds).jsonLine] + Array(repeating: "x", count: 250)
        let report = try temporary.importLines(lines.joined(separator: "\n"), skipInvalid: true)
        #expect(report.recorded == 1 && report.rejectedCount == 250)
        #expect(report.rejected.count == ImportReport.keptRejections && report.rejected.first?.line == 2)
    }

    /// A store deleted under an open connection: the connection refuses to write into the unlinked file, and to
    /// read it, once it has found it gone; a store created again at the same path in the same process (an app that
    /// wipes its container and starts over) is a new store, which works.
    @Test func aStoreDeletedUnderAConnectionIsRefusedAndANewOneAtItsPathWorks() throws {
        let directory = try TemporaryDirectory("gone")
        let location = StoreLocation(directory: directory.path + "/store")
        let old = try SQLiteDonationStore.open(location)
        #expect(try old.record(Self.donation("a", "c", Self.at.seconds), now: Self.at) == .recorded(identifier: "a"))
        _ = try old.fileIdentity()
        #expect(system("rm -rf '\(directory.path)/store'") == 0)
        #expect(throws: StoreError.self) { try old.record(Self.donation("b", "c", Self.at.seconds), now: Self.at) }
        let refused = #expect(throws: StoreError.self) { try old.donationCount(account: "default") }
        #expect(refused?.message.contains("deleted or moved") == true, "\(String(describing: refused))")

        let new = try SQLiteDonationStore.open(location)
        #expect(try new.record(Self.donation("d", "c", Self.at.seconds), now: Self.at) == .recorded(identifier: "d"))
        #expect(try new.donationCount(account: "default") == 1)
        #expect(throws: StoreError.self) { try old.donationCount(account: "default") }
    }

    /// The log and its index deleted under an open connection (an operator's `rm suggest.sqlite-wal
    /// suggest.sqlite-shm` beside a running server): the connection refuses to write, and its store's health says
    /// so, rather than acknowledge donations into a log that the next process to write replaces with its own (which
    /// left the store "malformed" and every acknowledged donation unreadable).
    @Test func aLogDeletedUnderAConnectionIsRefused() throws {
        let directory = try TemporaryDirectory("log-gone")
        let location = StoreLocation(directory: directory.path)
        let store = try SQLiteDonationStore.open(location)
        #expect(try store.record(Self.donation("a", "c", Self.at.seconds), now: Self.at) == .recorded(identifier: "a"))
        for suffix in ["-wal", "-shm"] { #expect(unlink(location.databasePath + suffix) == 0) }
        let refused = #expect(throws: StoreError.self) {
            try store.record(Self.donation("b", "c", Self.at.seconds), now: Self.at)
        }
        #expect(refused?.message.contains("or its log beside it") == true, "\(String(describing: refused))")
        #expect(throws: StoreError.self) { try store.checkHealth() }
    }

    /// A store whose database file is a link: SQLite keeps the log beside the link's target, which the check of the
    /// log reads; a stale file beside the link, removed, is nothing to it.
    @Test func theLogOfALinkedDatabaseIsTheOneBesideItsTarget() throws {
        let directory = try TemporaryDirectory("linked")
        #expect(mkdir(directory.path + "/store", 0o700) == 0 && mkdir(directory.path + "/elsewhere", 0o700) == 0)
        _ = try SQLiteDonationStore.open(StoreLocation(directory: directory.path + "/elsewhere"))
        #expect(rename(directory.path + "/elsewhere/suggest.sqlite", directory.path + "/elsewhere/db.sqlite") == 0)
        #expect(symlink(directory.path + "/elsewhere/db.sqlite", directory.path + "/store/suggest.sqlite") == 0)
        let stale = directory.path + "/store/suggest.sqlite-wal"
        #expect(creat(stale, 0o600) >= 0)
        let store = try SQLiteDonationStore.open(StoreLocation(directory: directory.path + "/store"))
        #expect(try store.record(Self.donation("a", "c", Self.at.seconds), now: Self.at) == .recorded(identifier: "a"))
        #expect(unlink(stale) == 0)
        #expect(try store.record(Self.donation("b", "c", Self.at.seconds), now: Self.at) == .recorded(identifier: "b"))
    }

    /// A store found gone in the middle of a write lets go of its write lock: the rollback went through the
    /// statement runner, which refuses a gone file, and the lock stayed, so every other process's write to the
    /// store (moved, here, not deleted) waited out its timeout.
    @Test func aStoreFoundGoneInAWriteLetsGoOfItsLock() throws {
        let directory = try TemporaryDirectory("gone-lock")
        let store = try SQLiteDonationStore.open(StoreLocation(directory: directory.path + "/store"))
        #expect(try store.record(Self.donation("a", "c", Self.at.seconds), now: Self.at) == .recorded(identifier: "a"))
        #expect(rename(directory.path + "/store", directory.path + "/moved") == 0)
        #expect(throws: StoreError.self) { try store.record(Self.donation("b", "c", Self.at.seconds), now: Self.at) }
        let other = try Database(path: directory.path + "/moved/suggest.sqlite", busyTimeout: 500)
        try other.execute("BEGIN IMMEDIATE; COMMIT;")
    }

    /// One store named two ways in one process (a symbolic link to its directory, a `.` in the path) has one write
    /// gate, as it has one file: two services that spelled it differently serialized their writes on two gates,
    /// leaving SQLite's busy timeout to part them.
    @Test func oneStoreNamedTwoWaysHasOneWriteGate() throws {
        let directory = try TemporaryDirectory("one-gate")
        _ = try SQLiteDonationStore.open(StoreLocation(directory: directory.path + "/store"))
        #expect(symlink(directory.path + "/store", directory.path + "/link") == 0)
        let gate = WriteGate.forDatabase(at: directory.path + "/store/suggest.sqlite")
        #expect(WriteGate.forDatabase(at: directory.path + "/link/suggest.sqlite") === gate)
        #expect(WriteGate.forDatabase(at: directory.path + "/store/./suggest.sqlite") === gate)
        #expect(WriteGate.forDatabase(at: directory.path + "/other/suggest.sqlite") !== gate)
    }

    /// A long read (a server's export) waits while a deletion's scrub of the log is owed and a read keeps it from
    /// being done: exports that overlapped one another under a stream of donations kept a deleted conversation in
    /// the log for as long as they went on (70 s where each was limited to 12). Once the reads under way end, the
    /// next long read cuts the log first.
    @Test func aLongReadWaitsForADeletionsScrub() throws {
        let directory = try TemporaryDirectory("long-read")
        let location = StoreLocation(directory: directory.path)
        let store = try SQLiteDonationStore.open(location)
        for index in 0..<20 {
            _ = try store.record(Self.donation("s\(index)", "secret", Self.at.seconds - Double(index)), now: Self.at)
        }
        try store.admitLongRead()
        // Another connection's read of the log, under way through the deletion.
        let reader = try Database(path: location.databasePath)
        try reader.execute("BEGIN")
        _ = try reader.statement("SELECT COUNT(*) FROM donation_blocks").scalarInt()
        let report = try store.delete(.conversation("secret"), account: "default")
        #expect(report.logTruncated == false)
        let refused = #expect(throws: StoreError.self) { try store.admitLongRead() }
        #expect(refused?.kind == .busy)
        try reader.execute("COMMIT")
        try store.admitLongRead()
        var info = stat()
        #expect(stat(location.databasePath + "-wal", &info) != 0 || info.st_size == 0)
    }

    /// Maintenance says when it found the learned weights learned under another version's rule and marked them
    /// all: once at an upgrade; again and again, in a server's log, while another version's process writes the
    /// store (an older and a newer server folded every account back and forth, and nothing showed it).
    @Test func maintenanceSaysWhenTheWeightsWereLearnedUnderAnotherRule() throws {
        let directory = try TemporaryDirectory("weights-rule")
        let location = StoreLocation(directory: directory.path)
        let store = try SQLiteDonationStore.open(location)
        _ = try store.record(Self.donation("a", "c", Self.at.seconds), now: Self.at)
        #expect(try store.maintain(account: nil, now: Self.at).weightsRuleChanged == false)
        let other = try Database(path: location.databasePath)
        try other.execute(
            "UPDATE settings SET value = 'another version' WHERE name = '\(SQLiteDonationStore.weightsSetting)'")
        let report = try store.maintain(account: nil, now: Self.at)
        #expect(report.weightsRuleChanged && report.foldedAccounts == 1)
        #expect(try store.maintain(account: nil, now: Self.at).weightsRuleChanged == false)
    }

    /// A long-running process's checkpoint makes the deletion reserve again once there is room: a server that spent
    /// it on a full disk met the next full disk without it, its deletions refused (`store_full`) until a restart.
    @Test func aCheckpointMakesTheDeletionReserveAgain() throws {
        let directory = try TemporaryDirectory("reserve")
        let location = StoreLocation(directory: directory.path)
        let store = try SQLiteDonationStore.open(location)
        let reserve = location.databasePath + "-reserve"
        var info = stat()
        #expect(stat(reserve, &info) == 0 && info.st_size == 8 << 20)
        #expect(unlink(reserve) == 0)
        try store.checkpoint()
        #expect(stat(reserve, &info) == 0 && info.st_size == 8 << 20)
    }

    /// An import that writes what it holds each time it passes its memory budget leaves the store an import in one
    /// go leaves, table by table, value by value (the learned weights, re-read after each write, included): the
    /// budget bounds an import's memory (a history whose every line names a thousand new people took 1.5 GB for
    /// 170 MB) without changing a bit of what it records.
    /// A large import (one expected to bring 100,000 donations or more) keeps every identifier key in memory and
    /// collects the additions to the index in one list: the same with it.
    @Test(arguments: [nil, 200_000])
    func anImportWrittenAlongTheWayLeavesTheSameStore(expectedDonations: Int?) throws {
        var random = SeededRandom(seed: 9)
        var lines: [String] = []
        for index in 0..<3_000 {
            let account = "a\(Int.random(in: 0..<3, using: &random))"
            let conversation = Int.random(in: 0..<150, using: &random)
            let people = (0..<Int.random(in: 1...4, using: &random)).map {
                Person(
                    customIdentifier: "p\(conversation)-\($0)",
                    displayName: "P \(Int.random(in: 0..<3, using: &random))")
            }
            let types = [["public.jpeg"], ["public.url"], ["com.example.sticker"], []][
                Int.random(in: 0..<4, using: &random)]
            let interaction = Interaction(
                account: account, identifier: "d\(index % 2_900)",
                groupIdentifier: conversation % 5 == 0 ? "g\(conversation % 3)" : nil,
                date: Timestamp(seconds: Self.at.seconds - Double(3_000 - index) * 600),
                direction: Bool.random(using: &random) ? .outgoing : .incoming,
                intent: SendMessageIntent(
                    conversationIdentifier: "c\(conversation)",
                    speakableGroupName: conversation % 5 == 0 ? "Group \(Int.random(in: 0..<2, using: &random))" : nil,
                    recipients: people, contentTypes: types))
            lines.append(interaction.jsonLine)
        }
        let text = lines.joined(separator: "\n")
        let whole = try TemporaryStore()
        let report = try whole.importLines(text, expectedDonations: expectedDonations)
        let flushed = try TemporaryStore()
        flushed.store.importMemoryBudget = 2_048  // a write every few donations
        #expect(try flushed.importLines(text, expectedDonations: expectedDonations) == report)
        #expect(report.recorded + report.duplicates == 3_000 && report.duplicates > 10, "\(report)")

        try flushed.store.database.execute("ATTACH DATABASE '\(whole.directory)/suggest.sqlite' AS whole")
        let tables = try flushed.store.database.statement(
            """
            SELECT name FROM main.sqlite_master
            WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name != 'schema_migrations' ORDER BY name
            """)
        var names: [String] = []
        while try tables.step() { names.append(tables.text(0) ?? "") }
        #expect(names.contains("conversations") && names.contains("learned_weights") && names.count > 8)
        for table in names {
            let compared = try flushed.store.database.statement(
                """
                SELECT (SELECT COUNT(*) FROM main.\(table)), (SELECT COUNT(*) FROM whole.\(table)),
                    (SELECT COUNT(*) FROM (SELECT * FROM main.\(table) EXCEPT SELECT * FROM whole.\(table)))
                """)
            #expect(try compared.step())
            #expect(
                compared.int(0) == compared.int(1) && compared.int(2) == 0,
                "\(table): \(compared.int(0)) rows against \(compared.int(1)), \(compared.int(2)) differ")
        }
        for account in ["a0", "a1", "a2"] {
            #expect(try flushed.export(account: account) == whole.export(account: account))
        }
    }

    /// An account whose conversations came through more services than a list of all of them merges
    /// (`StoredRankingSource.mergedServicesLimit`) ranks from every conversation sorted at once, as it ranks from the
    /// merged lists below that: against brute force, at the limit and past it, with equal keys across services,
    /// conversations with no service, and another account's services beside. (Merged, 10,000 services took a query
    /// 7.5 s and 150 MB: one statement stepping for each.)
    @Test(arguments: [StoredRankingSource.mergedServicesLimit, StoredRankingSource.mergedServicesLimit + 1, 300])
    func anAccountOfManyServicesRanksAsBruteForceDoes(_ services: Int) throws {
        let temporary = try TemporaryStore()
        let start = Self.at.seconds - 50_000
        var donations: [Interaction] = []
        for index in 0..<(services * 2) {
            let conversation = index % (services + services / 7)
            // Ten conversations at a time donate at the same moment: their channel keys tie across services.
            let direction: InteractionDirection = index % 3 == 0 ? .incoming : .outgoing
            var donation = Self.donation(
                "d\(index)", "c-\(conversation)", start + Double(index / 10 * 10), direction,
                types: index % 4 == 1 ? ["public.jpeg"] : [])
            donation.intent.serviceName = conversation % 7 == 6 ? nil : "svc-\(conversation)"
            donations.append(donation)
            var other = Self.donation("o\(index)", "o-\(index % 9)", start + Double(index), account: "other")
            other.intent.serviceName = "svc-\(index % 9)"
            donations.append(other)
        }
        _ = try temporary.store.importDonations(donations, options: ImportOptions(now: Self.at))
        for context in [
            RankingContext(at: Self.at, limit: 8), RankingContext(at: Self.at, limit: services),
            RankingContext(at: Self.at, limit: 1), RankingContext(at: Self.at, limit: 5, serviceName: "svc-3"),
            RankingContext(at: Self.at, limit: 5, contentTypes: ["public.jpeg"]),
        ] {
            let ranked = try temporary.store.rankedConversations(account: "default", context: context)
            #expect(!ranked.isEmpty)
            #expect(ranked == (try temporary.store.suggestionsByBruteForce(account: "default", context: context)))
        }
        // A statement for each service and channel, kept as long as the connection: 1,200 for 300 services.
        let merged = 4 * StoredRankingSource.mergedServicesLimit
        #expect(temporary.store.database.preparedStatementCount < merged + 60)
    }
}
