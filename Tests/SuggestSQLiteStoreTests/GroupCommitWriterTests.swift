import Dispatch
import SuggestCore
import SuggestTestSupport
import Synchronization
import Testing

@testable import SuggestSQLiteStore

#if canImport(Glibc)
    import Glibc
#endif

/// A server's connections record through one `GroupCommitWriter`: every donation acknowledged is stored once, a
/// repeated identifier is a duplicate whichever thread sent it, a refused batch takes nothing of anyone else's work
/// with it, and the store then holds exactly the log that the same donations recorded one by one would.
@Suite struct GroupCommitWriterTests {
    static let now = Timestamp(seconds: 1_796_000_000)

    /// A server's connections: each with the writer, as `StoreOpening.serving` opens them.
    struct Server {
        let directory: TemporaryDirectory
        let location: StoreLocation
        let writer: GroupCommitWriter

        init() throws {
            directory = try TemporaryDirectory("group-commit")
            location = StoreLocation(directory: directory.path)
            let location = location
            let store = try SQLiteDonationStore.open(location)
            _ = try store.setRetention(Retention(maximumAgeDays: 0, idleDays: 0), now: GroupCommitWriterTests.now)
            writer = GroupCommitWriter {
                try SQLiteDonationStore.open(location, checkpoints: .everyPagesInPlace(16_384))
            }
        }

        /// Opens a connection of the server, from any thread.
        var connect: @Sendable () throws -> SQLiteDonationStore {
            let location = location
            let writer = writer
            return {
                try SQLiteDonationStore.open(location, checkpoints: .everyPagesInPlace(16_384), groupCommit: writer)
            }
        }

        func connection() throws -> SQLiteDonationStore { try connect() }
    }

    static func donation(_ identifier: String, conversation: Int, second: Int) -> Interaction {
        Interaction(
            account: "default", identifier: identifier, date: now.adding(Double(second - 100_000)),
            direction: second % 3 == 0 ? .incoming : .outgoing,
            intent: SendMessageIntent(conversationIdentifier: "c\(conversation)"))
    }

    static func export(_ store: SQLiteDonationStore) throws -> [String] {
        var lines: [String] = []
        try store.forEachDonation(account: "default") { lines.append($0.jsonLine) }
        return lines.sorted()
    }

    /// A store that keeps every donation, and a writer whose pieces may wait a second.
    static func storeWaitingAtMostASecond(_ name: String) throws -> (
        TemporaryDirectory, StoreLocation, GroupCommitWriter
    ) {
        let directory = try TemporaryDirectory(name)
        let location = StoreLocation(directory: directory.path)
        _ = try SQLiteDonationStore.open(location).setRetention(Retention(maximumAgeDays: 0, idleDays: 0), now: now)
        return (
            directory, location, GroupCommitWriter(maximumWait: .seconds(1)) { try SQLiteDonationStore.open(location) }
        )
    }

    /// A request waits at most the writer's `maximumWait` from the moment it is queued, whatever groups waited for
    /// another process's write lock before it: the second of two requests queued while the first waited got a wait
    /// of its own, about half as long again in all, and could be recorded after a client that gave up at the limit
    /// had left.
    @Test func aPieceWaitsAtMostItsTimeWhateverWaitedBeforeIt() throws {
        let (directory, location, writer) = try Self.storeWaitingAtMostASecond("group-commit-wait")
        defer { withExtendedLifetime(directory) {} }
        let first = try SQLiteDonationStore.open(location, groupCommit: writer)
        let second = try SQLiteDonationStore.open(location, groupCommit: writer)
        // Another process's write lock, held until both requests have their answers.
        let holder = try Database(path: location.databasePath)
        try holder.execute("BEGIN IMMEDIATE")
        let outcomes = Mutex<[String: (waited: Duration, recorded: Bool)]>([:])
        let firstQueued = DispatchSemaphore(value: 0)
        let requests = DispatchGroup()
        for (name, store) in [("first", first), ("second", second)] {
            nonisolated(unsafe) let store = store
            // A queue of its own, so a thread of its own: the global queue runs at most a thread per core, and
            // the second request would wait for the first's thread.
            DispatchQueue(label: "request " + name).async(group: requests) {
                if name == "first" {
                    firstQueued.signal()
                } else {
                    // Queued while the first waits for the lock, a third of the way through its time.
                    firstQueued.wait()
                    usleep(300_000)
                }
                let started = ContinuousClock.now
                let recorded =
                    (try? store.record(Self.donation(name, conversation: 1, second: 1), now: Self.now)) != nil
                outcomes.withLock { $0[name] = (ContinuousClock.now - started, recorded) }
            }
        }
        requests.wait()
        try holder.execute("COMMIT")
        let seen = outcomes.withLock { $0 }
        #expect(seen["first"]?.recorded == false && seen["second"]?.recorded == false, "\(seen)")
        #expect((seen["second"]?.waited ?? .seconds(60)) < .milliseconds(1_200), "\(seen)")
        #expect(try Self.export(SQLiteDonationStore.open(location)).isEmpty)
    }

    /// A piece is judged when its turn comes, not only when its group is taken: a group that waited for this
    /// process's own write lock (a deletion's, here a write held 2.5 s) wrote a piece past its time, and one whose
    /// oldest piece had little time left took the younger ones down with it.
    @Test func aPieceIsJudgedWhenItsTurnComes() throws {
        let (directory, location, writer) = try Self.storeWaitingAtMostASecond("group-commit-turn")
        defer { withExtendedLifetime(directory) {} }
        let outcomes = Mutex<[String: Bool]>([:])
        let requests = DispatchGroup()
        func request(_ name: String, after delay: UInt32, store: SQLiteDonationStore) {
            nonisolated(unsafe) let store = store
            DispatchQueue(label: "request " + name).async(group: requests) {
                usleep(delay)
                let recorded =
                    (try? store.record(Self.donation(name, conversation: 1, second: 1), now: Self.now)) != nil
                outcomes.withLock { $0[name] = recorded }
            }
        }
        // This process's write lock, held 2.5 s by a connection of its own (as a deletion holds it).
        nonisolated(unsafe) let held = try Database(path: location.databasePath)
        let holding = DispatchSemaphore(value: 0)
        DispatchQueue(label: "holder").async(group: requests) {
            try? held.write {
                holding.signal()
                usleep(2_500_000)
            }
        }
        holding.wait()
        request("gated", after: 0, store: try SQLiteDonationStore.open(location, groupCommit: writer))
        requests.wait()
        #expect(outcomes.withLock { $0["gated"] } == false)

        // Another process's lock, held 1.3 s: a piece at 0, then two in the next group at 0.1 s and 0.9 s. The
        // group waits as long as its youngest may: the 0.1 s piece's time runs out, the 0.9 s piece is written.
        let other = try Database(path: location.databasePath)
        try other.execute("BEGIN IMMEDIATE")
        request("first", after: 0, store: try SQLiteDonationStore.open(location, groupCommit: writer))
        request("older", after: 100_000, store: try SQLiteDonationStore.open(location, groupCommit: writer))
        request("younger", after: 900_000, store: try SQLiteDonationStore.open(location, groupCommit: writer))
        usleep(1_300_000)
        try other.execute("COMMIT")
        requests.wait()
        let seen = outcomes.withLock { $0 }
        #expect(seen["first"] == false && seen["older"] == false && seen["younger"] == true, "\(seen)")
        #expect(try Self.export(SQLiteDonationStore.open(location)).count == 1)
    }

    /// A server's share goes through the writer: the conversation is looked for in the writer's own transaction, so
    /// a share to one deleted since (here by another connection, before the write) records nothing.
    @Test func aShareThroughTheWriterRecordsOnlyToAConversationThatStillExists() throws {
        let server = try Server()
        let connection = try server.connection()
        let other = try server.connection()
        _ = try connection.record(Self.donation("d1", conversation: 7, second: 1), now: Self.now)
        var share = Self.donation("s1", conversation: 7, second: 2)
        share.direction = .outgoing
        share.isEngagedSuggestion = true
        #expect(try connection.recordShare(share, now: Self.now) == .recorded(identifier: "s1"))
        _ = try other.delete(.conversation("c7"), account: "default")
        share.identifier = "s2"
        #expect(try connection.recordShare(share, now: Self.now) == nil)
        #expect(try Self.export(other).isEmpty)
    }

    @Test func concurrentRequestsAreEachStoredOnceAsIfRecordedOneByOne() throws {
        let server = try Server()
        let threads = 8
        let perThread = 60
        // Every thread sends the identifiers d0, d1, …: thread t sends the odd ones of its range and some of the
        // next thread's, so that the same identifier arrives from two threads at once.
        let outcomes = Mutex<[String: [String]]>([:])
        let failures = Mutex<[String]>([])
        let connect = server.connect
        DispatchQueue.concurrentPerform(iterations: threads) { thread in
            do {
                let store = try connect()
                for step in 0..<perThread {
                    let number = thread * perThread + step + (step % 4 == 0 ? perThread : 0)
                    let donation = Self.donation("d\(number)", conversation: number % 13, second: number)
                    let outcome = try store.record(donation, now: Self.now)
                    let kind: String
                    switch outcome {
                    case .recorded: kind = "recorded"
                    case .duplicate: kind = "duplicate"
                    case .expired: kind = "expired"
                    }
                    outcomes.withLock { $0["d\(number)", default: []].append(kind) }
                }
            } catch {
                failures.withLock { $0.append("\(error)") }
            }
        }
        #expect(failures.withLock { $0 } == [])
        let seen = outcomes.withLock { $0 }
        for (identifier, kinds) in seen {
            #expect(kinds.filter { $0 == "recorded" }.count == 1, "\(identifier): \(kinds)")
            #expect(kinds.allSatisfy { $0 != "expired" }, "\(identifier): \(kinds)")
        }
        let statistics = server.writer.statistics
        #expect(statistics.pieces == threads * perThread)
        #expect((1...statistics.pieces).contains(statistics.groups))

        // The same donations, one by one, on a store of their own: the same log. (Not the same ranking: the
        // learned weights depend on the order the donations arrived in, which the threads decided.)
        let reference = try TemporaryDirectory("group-commit-reference")
        let one = try SQLiteDonationStore.open(StoreLocation(directory: reference.path))
        _ = try one.setRetention(Retention(maximumAgeDays: 0, idleDays: 0), now: Self.now)
        for identifier in seen.keys.sorted() {
            let number = Int(identifier.dropFirst())!
            _ = try one.record(Self.donation(identifier, conversation: number % 13, second: number), now: Self.now)
        }
        #expect(try Self.export(try server.connection()) == Self.export(one))
    }

    @Test func aRefusedBatchTakesOnlyItselfBack() throws {
        let server = try Server()
        let good = (0..<50).map { Self.donation("g\($0)", conversation: $0 % 7, second: $0) }
        let failures = Mutex<[String]>([])
        let refusals = Atomic<Int>(0)
        let connect = server.connect
        DispatchQueue.concurrentPerform(iterations: 4) { thread in
            do {
                let store = try connect()
                if thread == 0 {
                    // A batch whose last line is invalid, again and again, beside the others' good donations.
                    for round in 0..<20 {
                        var lines = (0..<5).map {
                            NumberedDonation(
                                line: $0 + 1,
                                donation: .success(Self.donation("bad\(round)-\($0)", conversation: 1, second: $0)))
                        }
                        lines.append(
                            NumberedDonation(
                                line: 6, donation: .failure(InputError(field: "date", message: "not a date"))))
                        var iterator = lines.makeIterator()
                        do {
                            _ = try store.importDonations(
                                ImportOptions(now: Self.now, expectedDonations: 6), progress: { _ in }, interruption: {}
                            ) { iterator.next() }
                        } catch is InputError {
                            refusals.add(1, ordering: .relaxed)
                        }
                    }
                } else {
                    for donation in good where Int(donation.identifier!.dropFirst())! % 3 == thread - 1 {
                        _ = try store.record(donation, now: Self.now)
                    }
                }
            } catch {
                failures.withLock { $0.append("\(error)") }
            }
        }
        #expect(failures.withLock { $0 } == [])
        #expect(refusals.load(ordering: .relaxed) == 20)
        let stored = try Self.export(try server.connection())
        #expect(stored.count == good.count)
        #expect(!stored.contains { $0.contains("\"bad") })
        // `/metrics` counts what was kept: the good donations, not the refused batches (counted as carried).
        #expect(server.writer.statistics.pieces == good.count)
    }

    /// On a full disk every request that does not fit fails with the store's one-line "full" error, nothing is half
    /// recorded, and the writer works again once there is room.
    @Test func aFullDiskFailsEveryRequestOfAGroupWithItsOwnError() throws {
        let scratch = try TemporaryDirectory("group-commit-full")
        let disk = scratch.path + "/disk"
        guard geteuid() == 0, mkdir(disk, 0o755) == 0,
            (try? ChildProcess(
                executable: "/usr/bin/mount", arguments: ["-t", "tmpfs", "-o", "size=1m", "tmpfs", disk],
                environment: [:], inputPath: nil, scratch: scratch.path
            ).wait().status) == 0
        else { try Test.cancel("a full disk needs root and mount(8) for a small tmpfs") }
        defer {
            _ = try? ChildProcess(
                executable: "/usr/bin/umount", arguments: ["-l", disk], environment: [:], inputPath: nil,
                scratch: scratch.path
            ).wait()
        }
        let location = StoreLocation(directory: disk + "/store")
        // A log that is truncated every 100 pages, as the command line's: SQLite's default of 1,000 would fill
        // the 1 MiB disk before it is ever truncated.
        let first = try SQLiteDonationStore.open(location, checkpoints: .everyPages(100))
        _ = try first.setRetention(Retention(maximumAgeDays: 0, idleDays: 0), now: Self.now)
        _ = try first.importDonations(
            (0..<50).map { Self.donation("f\($0)", conversation: $0 % 5, second: $0) },
            options: ImportOptions(now: Self.now))
        try first.checkpoint()
        let before = try Self.export(first)
        let writer = GroupCommitWriter { try SQLiteDonationStore.open(location, checkpoints: .everyPages(100)) }
        let connect = { @Sendable in
            try SQLiteDonationStore.open(location, checkpoints: .everyPages(100), groupCommit: writer)
        }
        let filler = open(disk + "/filler", O_WRONLY | O_CREAT, 0o644)
        let block = [UInt8](repeating: 0x55, count: 4_096)
        while block.withUnsafeBytes({ write(filler, $0.baseAddress, $0.count) }) > 0 {}
        close(filler)

        // Donations large enough not to fit in what SQLite already holds.
        let name = String(repeating: "x", count: 3_000)
        let errors = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 4) { thread in
            guard let store = try? connect() else { return }
            for step in 0..<10 {
                var donation = Self.donation("full-\(thread)-\(step)", conversation: 100 + thread, second: step)
                donation.intent.speakableGroupName = name + "\(thread)-\(step)"
                do {
                    _ = try store.record(donation, now: Self.now)
                } catch {
                    errors.withLock { $0.append("\(error)") }
                }
            }
        }
        let seen = errors.withLock { $0 }
        #expect(!seen.isEmpty, "40 donations of 3 KB fitted on a full disk?")
        #expect(seen.allSatisfy { $0.contains("full") && !$0.contains("savepoint") }, "\(Set(seen))")

        unlink(disk + "/filler")
        let after = try connect()
        let recorded = try Self.export(after)
        // Whatever was acknowledged is there in full; what failed left nothing.
        #expect(recorded.count == before.count + (40 - seen.count))
        #expect(Set(before).isSubset(of: Set(recorded)))
        #expect(
            try after.record(Self.donation("again", conversation: 1, second: 99_000), now: Self.now)
                == .recorded(identifier: "again"))
    }

    @Test func aWriterThatCannotOpenFailsItsRequestsAndIsTriedAgain() throws {
        let directory = try TemporaryDirectory("group-commit-open")
        let location = StoreLocation(directory: directory.path)
        let attempts = Atomic<Int>(0)
        let writer = GroupCommitWriter {
            if attempts.add(1, ordering: .relaxed).newValue == 1 {
                throw StoreError(.unavailable, "the disk is not there yet")
            }
            return try SQLiteDonationStore.open(location)
        }
        let store = try SQLiteDonationStore.open(location, groupCommit: writer)
        let donation = Self.donation("x1", conversation: 1, second: 99_000)
        #expect(throws: StoreError.self) { try store.record(donation, now: Self.now) }
        #expect(try Self.export(store) == [])
        #expect(try store.record(donation, now: Self.now) == .recorded(identifier: "x1"))
        #expect(try Self.export(store).count == 1)
    }

    /// Runs `requests` (name, work) each on a thread of its own while another connection holds the write lock:
    /// the first is a group of its own, waiting for the lock; the others are queued behind it, in order, and the
    /// lock is let go once `queued` pieces wait for `writer` (those of the others that reach it), so that they make
    /// the next group together. Returns what each request's work gave or threw.
    static func groupedWhileLocked(
        _ location: StoreLocation, writer: GroupCommitWriter, queued: Int,
        _ requests: [(String, @Sendable () throws -> String)]
    ) throws -> [String: String] {
        let outcomes = Mutex<[String: String]>([:])
        let holder = try Database(path: location.databasePath)
        try holder.execute("BEGIN IMMEDIATE")
        let all = DispatchGroup()
        for (index, (name, work)) in requests.enumerated() {
            let started = DispatchSemaphore(value: 0)
            // A queue of its own, so a thread of its own (see `aPieceWaitsAtMostItsTimeWhateverWaitedBeforeIt`).
            DispatchQueue(label: "request " + name).async(group: all) {
                started.signal()
                let outcome: String
                do { outcome = try work() } catch { outcome = "\(type(of: error)): \(error)" }
                outcomes.withLock { $0[name] = outcome }
            }
            started.wait()
            if index == 0 {
                // The first is taken alone: the writer holds it, waiting for the lock, before the others come.
                usleep(100_000)
                try #require(writer.piecesWaiting == 0)
            } else {
                usleep(20_000)  // in order
            }
        }
        let deadline = ContinuousClock.now + .seconds(20)
        while writer.piecesWaiting < queued, ContinuousClock.now < deadline { usleep(5_000) }
        #expect(writer.piecesWaiting == queued)
        try holder.execute("COMMIT")
        all.wait()
        return outcomes.withLock { $0 }
    }

    /// The pieces of a group record into one writer: batches, single donations and a share, a duplicate across two
    /// batches, a batch refused for its last line. What they store is what the same donations give recorded one by
    /// one in the order they were committed: the same log, the same ranking, score for score.
    @Test func aGroupsPiecesShareOneWriterAndStoreWhatOneByOneWould() throws {
        let server = try Server()
        let seed = try server.connection()
        for step in 0..<12 {
            _ = try seed.record(Self.donation("seed\(step)", conversation: step % 4, second: step), now: Self.now)
        }
        let connect = server.connect
        @Sendable func batch(_ prefix: String, _ count: Int, invalidLast: Bool = false, repeating: String? = nil) throws
            -> String
        {
            var lines = (0..<count).map {
                NumberedDonation(
                    line: $0 + 1,
                    donation: .success(Self.donation("\(prefix)\($0)", conversation: $0 % 5, second: 100 + $0)))
            }
            if let repeating {
                lines[3] = NumberedDonation(
                    line: 4, donation: .success(Self.donation(repeating, conversation: 2, second: 150)))
            }
            if invalidLast {
                lines.append(
                    NumberedDonation(
                        line: count + 1, donation: .failure(InputError(field: "date", message: "not a date"))))
            }
            var iterator = lines.makeIterator()
            let report = try connect().importDonations(
                ImportOptions(now: Self.now, expectedDonations: lines.count), progress: { _ in }, interruption: {}
            ) { iterator.next() }
            return "recorded \(report.recorded), duplicates \(report.duplicates)"
        }
        @Sendable func single(_ identifier: String, conversation: Int, second: Int) throws -> String {
            "\(try connect().record(Self.donation(identifier, conversation: conversation, second: second), now: Self.now))"
        }
        let outcomes = try Self.groupedWhileLocked(
            server.location, writer: server.writer, queued: 5,
            [
                ("lead", { try single("lead", conversation: 1, second: 90) }),
                ("a", { try batch("a", 20) }),
                ("s1", { try single("s1", conversation: 1, second: 200) }),
                (
                    "share",
                    {
                        var share = Self.donation("share1", conversation: 2, second: 210)
                        share.isEngagedSuggestion = true
                        return "\(String(describing: try connect().recordShare(share, now: Self.now)))"
                    }
                ),
                ("b", { try batch("b", 8, repeating: "a5") }),
                ("refused", { try batch("r", 6, invalidLast: true) }),
                ("s2", { try single("s2", conversation: 9, second: 220) }),
            ])
        #expect(outcomes["a"] == "recorded 20, duplicates 0")
        #expect(outcomes["b"] == "recorded 7, duplicates 1")
        #expect(outcomes["refused"]?.hasPrefix("InputError") == true, "\(outcomes)")
        #expect(outcomes["share"]?.contains("recorded") == true, "\(outcomes)")
        // The seeds one by one, the lead alone, then the five that reached the writer (the refused batch did not)
        // together.
        let statistics = server.writer.statistics
        #expect(statistics.pieces == 12 + 1 + 5 && statistics.groups == 12 + 1 + 1, "\(statistics)")

        let donations = try Self.expectSameAsOneByOne(try server.connection())
        #expect(!donations.contains { $0.identifier?.hasPrefix("r") == true })
    }

    /// Expects `stored` to hold what its donations give recorded one by one, in the order it keeps them, on a store
    /// of their own: the same log and the same ranking, score for score. Returns those donations.
    @discardableResult
    static func expectSameAsOneByOne(_ stored: SQLiteDonationStore) throws -> [Interaction] {
        var donations: [Interaction] = []
        try stored.forEachDonation(account: "default") { donations.append($0) }
        let reference = try TemporaryDirectory("group-commit-one-by-one")
        let one = try SQLiteDonationStore.open(StoreLocation(directory: reference.path))
        _ = try one.setRetention(Retention(maximumAgeDays: 0, idleDays: 0), now: now)
        for donation in donations { _ = try one.record(donation, now: now) }
        #expect(try export(stored) == export(one))
        let context = RankingContext(at: now)
        #expect(
            try stored.suggestions(account: "default", context: context, explain: true)
                == one.suggestions(account: "default", context: context, explain: true))
        return donations
    }

    /// A piece that fails after it began to record into its group's writer cannot be taken back by its savepoint:
    /// its group fails, the piece with its own error and the others with one that says to send them again, and
    /// nothing of the group is stored. One that fails before it records anything fails alone.
    @Test func aPieceThatFailsAfterItBeganToRecordFailsItsGroup() throws {
        let server = try Server()
        let writer = server.writer
        @Sendable func piece(_ identifier: String, failing: Bool, afterRecording: Bool) throws -> String {
            try writer.commit { store in
                if failing && !afterRecording { throw InputError(field: "intent", message: "refused before") }
                let outcome = try store.withDonationWriter {
                    try $0.record(Self.donation(identifier, conversation: 3, second: 5))
                }
                if failing { throw InputError(field: "intent", message: "refused after") }
                return outcome ?? "duplicate"
            }
        }
        let late = try Self.groupedWhileLocked(
            server.location, writer: writer, queued: 3,
            [
                ("lead", { try piece("lead", failing: false, afterRecording: false) }),
                ("before", { try piece("x1", failing: false, afterRecording: false) }),
                ("failing", { try piece("x2", failing: true, afterRecording: true) }),
                ("after", { try piece("x3", failing: false, afterRecording: false) }),
            ])
        #expect(late["lead"] == "lead")
        #expect(late["failing"]?.contains("refused after") == true, "\(late)")
        for name in ["before", "after"] {
            #expect(
                late[name]?.hasPrefix("StoreError") == true && late[name]?.contains("send it again") == true, "\(late)")
        }
        #expect(try Self.export(server.connection()).map { $0.contains("\"lead\"") } == [true])
        #expect(writer.statistics == .init(groups: 1, pieces: 1), "\(writer.statistics)")

        let early = try Self.groupedWhileLocked(
            server.location, writer: writer, queued: 3,
            [
                ("lead", { try piece("lead2", failing: false, afterRecording: false) }),
                ("before", { try piece("y1", failing: false, afterRecording: false) }),
                ("failing", { try piece("y2", failing: true, afterRecording: false) }),
                ("after", { try piece("y3", failing: false, afterRecording: false) }),
            ])
        #expect(early["failing"]?.contains("refused before") == true, "\(early)")
        #expect(early["before"] == "y1" && early["after"] == "y3", "\(early)")
        #expect(try Self.export(server.connection()).count == 4)
        // The failing piece was rolled back alone, in a group that kept the other two.
        #expect(writer.statistics == .init(groups: 3, pieces: 4), "\(writer.statistics)")
    }

    /// A piece that records nothing but has the group's writer write what it holds (as an import over its memory
    /// budget does), then fails: the writing happened inside its savepoint, so rolling it back alone would drop the
    /// other pieces' donations while they were acknowledged. Its group fails instead, and nothing of it is stored.
    @Test func aPieceThatFailsAfterTheWriterWroteFailsItsGroup() throws {
        let server = try Server()
        let writer = server.writer
        @Sendable func recording(_ identifier: String) throws -> String {
            try writer.commit { store in
                try store.withDonationWriter { try $0.record(Self.donation(identifier, conversation: 4, second: 7)) }
                    ?? "duplicate"
            }
        }
        let outcomes = try Self.groupedWhileLocked(
            server.location, writer: writer, queued: 3,
            [
                ("lead", { try recording("lead") }),
                ("first", { try recording("z1") }),
                (
                    "flushing",
                    {
                        try writer.commit { store -> String in
                            try store.flushGroupWriting()
                            throw InputError(field: "intent", message: "refused after a write")
                        }
                    }
                ),
                ("last", { try recording("z3") }),
            ])
        #expect(outcomes["lead"] == "lead")
        #expect(outcomes["flushing"]?.contains("refused after a write") == true, "\(outcomes)")
        for name in ["first", "last"] {
            #expect(outcomes[name]?.contains("send it again") == true, "\(outcomes)")
        }
        #expect(try Self.export(server.connection()).count == 1)
        #expect(writer.statistics == .init(groups: 1, pieces: 1), "\(writer.statistics)")

        // A store's failure (SQLite's full disk, raised here by hand after a donation) fails the others with the
        // store's own error, not with one that says to send them again into a full disk.
        let full = try Self.groupedWhileLocked(
            server.location, writer: writer, queued: 2,
            [
                ("lead", { try recording("lead2") }),
                ("first", { try recording("w1") }),
                (
                    "failing",
                    {
                        try writer.commit { store -> String in
                            _ = try store.withDonationWriter {
                                try $0.record(Self.donation("w2", conversation: 5, second: 8))
                            }
                            throw SQLiteError(code: 13, message: "database or disk is full")
                        }
                    }
                ),
            ])
        for name in ["first", "failing"] {
            #expect(full[name]?.hasPrefix("StoreError") == true && full[name]?.contains("full") == true, "\(full)")
        }
        #expect(try Self.export(server.connection()).count == 2)
    }

    /// A server's JSON Lines body (`importBatch`) is checked whole on its request's thread and parsed again while
    /// the writer records it: a line that does not parse, or a date too far ahead, refuses its batch alone, with its
    /// line number, and the batches beside it in the group store what a single reading of each stores elsewhere.
    @Test func aBatchReadTwiceStoresWhatOneReadingStores() throws {
        let server = try Server()
        let connect = server.connect
        @Sendable func body(_ prefix: String, _ count: Int, replacing line: Int? = nil, with text: String = "")
            -> [UInt8]
        {
            var lines = (0..<count).map { index in
                let donation = Self.donation("\(prefix)\(index)", conversation: index % 6, second: 300 + index)
                return donation.jsonLine
            }
            if let line { lines[line - 1] = text }
            return Array((lines.joined(separator: "\n") + "\n").utf8)
        }
        let parsed = Atomic<Int>(0)
        let parse: @Sendable (UnsafeBufferPointer<UInt8>) -> Result<Interaction, InputError> = { bytes in
            parsed.add(1, ordering: .relaxed)
            return Result { () throws(InputError) in try Interaction(jsonBytes: bytes, defaultAccount: "default") }
        }
        @Sendable func send(_ bytes: [UInt8]) throws -> String {
            let report = try connect().importBatch(
                bytes, options: ImportOptions(now: Self.now, expectedDonations: 50), parse: parse)
            return "recorded \(report.recorded)"
        }
        let future =
            #"{"identifier": "later", "date": 2796000000, "direction": "outgoing", "intent": {"conversationIdentifier": "c1"}}"#
        let bodies = [
            ("lead", body("lead", 3)), ("a", body("a", 30)), ("bad", body("bad", 10, replacing: 4, with: "{")),
            ("later", body("later", 10, replacing: 2, with: future)), ("b", body("b", 25)),
        ]
        // The two refused never reach the writer.
        let outcomes = try Self.groupedWhileLocked(
            server.location, writer: server.writer, queued: 2, bodies.map { name, bytes in (name, { try send(bytes) }) }
        )
        #expect(outcomes["a"] == "recorded 30" && outcomes["b"] == "recorded 25" && outcomes["lead"] == "recorded 3")
        #expect(
            outcomes["bad"]?.hasPrefix("InputError") == true && outcomes["bad"]?.contains("line 4") == true,
            "\(outcomes)")
        #expect(
            outcomes["later"]?.hasPrefix("InputError") == true && outcomes["later"]?.contains("line 2") == true,
            "\(outcomes)")

        // Each line of a recorded batch read twice (3, 30 and 25 lines); the refused ones up to their bad line.
        #expect(parsed.load(ordering: .relaxed) == 2 * (3 + 30 + 25) + 4 + 2)
        #expect(server.writer.statistics == .init(groups: 2, pieces: 3), "\(server.writer.statistics)")

        // What one reading of each stores: the donations recorded one by one, in the order the store keeps them.
        #expect(try Self.expectSameAsOneByOne(try server.connection()).count == 58)
    }
}
