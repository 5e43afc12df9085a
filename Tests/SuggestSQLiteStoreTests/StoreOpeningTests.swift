import Dispatch
import SuggestCore
import SuggestTestSupport
import Synchronization
import Testing

@testable import SuggestSQLiteStore

#if canImport(Glibc)
    import Glibc
#endif

/// What opening a store sets up before any command's work: the policy fingerprint, and when the write-ahead log is
/// checkpointed. (The schema's tables are checked in FaultTests.)
@Suite struct StoreOpeningTests {
    static func size(_ path: String) -> Int? {
        var info = stat()
        return stat(path, &info) == 0 ? Int(info.st_size) : nil
    }

    /// Another connection in a read transaction, until its `COMMIT`: what keeps a checkpoint from copying the log
    /// past its snapshot, or from cutting it.
    static func readerHoldingASnapshot(of directory: TemporaryDirectory) throws -> Database {
        let reader = try Database(path: directory.location.databasePath)
        try reader.execute("BEGIN")
        _ = try reader.statement("SELECT COUNT(*) FROM conversations").scalarInt()
        return reader
    }

    static func donation(_ index: Int) -> Interaction {
        Interaction(
            identifier: "d-\(index)", date: Timestamp(seconds: 1_796_000_000 + Double(index)), direction: .outgoing,
            intent: SendMessageIntent(
                conversationIdentifier: "c-\(index % 7)", speakableGroupName: "Group \(index % 7)",
                recipients: [Person(customIdentifier: "p-\(index % 5)", displayName: "Person \(index % 5)")]))
    }

    /// A process out of file descriptors cannot open the store for a moment: that is `unavailable` (the server's
    /// 503 `store_unavailable`, to retry), not a read-only store, which a probe's server reported for a GET.
    @Test(arguments: [EMFILE, ENFILE])
    func runningOutOfFileDescriptorsIsAMomentsTroubleNotAReadOnlyStore(_ number: Int32) {
        let error = StoreError.from(
            SQLiteError(code: 14, message: "unable to open database file", systemErrorNumber: number),
            path: "/srv/suggest/suggest.sqlite")
        #expect(error.kind == .unavailable)
        #expect(error.message.contains("too many files are open") && error.message.contains("retry"))
    }

    /// A write past the process's limit on file size is room run out, as a full disk is, and said apart from one by a
    /// flag of its own (the server's 503 and `import`'s warning name the limit), not by words in its message.
    @Test func aLimitOnFileSizeIsToldApartFromAFullDisk() {
        let path = "/srv/suggest/suggest.sqlite"
        let limit = StoreError.from(
            SQLiteError(code: 778, message: "disk I/O error", systemErrorNumber: EFBIG), path: path)
        #expect(limit.kind == .diskFull && limit.isFileSizeLimit)
        let full = StoreError.from(SQLiteError(code: 13, message: "database or disk is full"), path: path)
        #expect(full.kind == .diskFull && !full.isFileSizeLimit)
        #expect(!StoreError(.diskFull, "the disk holding a limit on file size is full").isFileSizeLimit)
    }

    /// The fingerprint is stored in every store: if its text changed, every store would recompute every
    /// conversation at its next open. These are the texts stores hold for the learned default's channels and for
    /// the fixed policy. It changed on purpose when a content kind's lists came to carry the kind's share in their
    /// keys (";kinds:share"), when the stores moved to the learned default's channels, and when its fourth channel
    /// became `recency` (and `memory` took an engaged share's bonus), and when a group came to count the people other
    /// than the user (";groups:people") and a conversation's people its senders (";senders"), and when a
    /// conversation came to keep at most 64 content kinds (";kinds:64", which the weights' text leaves out: no
    /// weight reads a kind): stores written before rebuilt their state once.
    @Test func theDefaultPolicyFingerprintsKeepTheirText() throws {
        let directory = try TemporaryDirectory("open")
        let store = try SQLiteDonationStore.open(directory.location)
        let learned =
            "300.0:1.0:64.0:64.0:0.0:1.0:sum;86400.0:0.5:1.0:1.0:0.0:1.0:latest;2592000.0:1.0:0.1:0.1:0.5:1.0:sum;"
            + "300.0:1.0:1.0:1.0:0.0:1.0:latest;content:2592000.0;kinds:share;groups:people;senders"
        #expect(store.policyFingerprint == learned + ";kinds:64")
        #expect(try store.setting("ranking.policy") == store.policyFingerprint)
        // The weights' fingerprint: the channels', then the learner's constants (2 pseudo-sends, 32 sends, an even
        // prior over the four channels).
        #expect(
            store.weightsFingerprint
                == learned + ";learned:2.0:32:0.25:0.25:0.25:0.25;kinds:moved;log-responsibilities;stale:8.0")
        #expect(try store.setting(SQLiteDonationStore.weightsSetting) == store.weightsFingerprint)
        let fixed = try SQLiteDonationStore.open(
            StoreLocation(directory: directory.path + "/fixed"), ranking: .fixed(.default))
        #expect(
            fixed.policyFingerprint
                == "300.0:1.0:64.0:64.0:0.5:0.000244140625:sum;86400.0:0.5:1.0:1.0:0.5:0.0:latest;"
                + "2592000.0:1.0:0.1:0.1:0.5:1.0:sum;content:2592000.0;kinds:share;groups:people;senders;kinds:64")
        #expect(fixed.weightsFingerprint == nil)
    }

    /// SQLite's default: the last connection to close copies the log into the database and deletes it.
    @Test func byDefaultClosingTheStoreRemovesTheLog() throws {
        let directory = try TemporaryDirectory("open")
        do {
            let store = try SQLiteDonationStore.open(directory.location)
            _ = try store.record(Self.donation(1))
            #expect(Self.size(directory.log) ?? 0 > 0)
        }
        #expect(Self.size(directory.log) == nil)
    }

    /// A process that had the store open when a newer suggest migrated it writes nothing more (it would write by
    /// the older rules), and says so, its health check too (a server's readiness); it still reads. A migration
    /// marks the schema in `user_version`; an empty file another tool gave a `user_version` still becomes a store.
    @Test func aStoreMigratedWhileOpenRefusesOlderWrites() throws {
        let directory = try TemporaryDirectory("open")
        let store = try SQLiteDonationStore.open(directory.location)
        _ = try store.record(Self.donation(1))
        #expect(try store.database.statement("PRAGMA user_version").scalarInt() == Int64(Schema.latestVersion))
        let newer = try SQLiteDonationStore.open(directory.location)
        try newer.database.execute("PRAGMA user_version = \(Schema.latestVersion + 1)")
        expectError {
            try store.record(Self.donation(2))
        } where: { ($0 as? StoreError)?.kind == .newerSchema && "\($0)".contains("newer suggest") }
        expectError {
            try store.checkHealth()
        } where: { ($0 as? StoreError)?.kind == .newerSchema }
        #expect(try store.donationCount(account: "default") == 1)

        let other = try TemporaryDirectory("open")
        let empty = try Database(path: other.location.databasePath)
        try empty.execute("PRAGMA user_version = 99")
        let fresh = try SQLiteDonationStore.open(other.location)
        #expect(try fresh.record(Self.donation(1)) == .recorded(identifier: "d-1"))
        #expect(try fresh.database.statement("PRAGMA user_version").scalarInt() == Int64(Schema.latestVersion))
    }

    /// A command's store: the log stays when it closes (no checkpoint, no fsync), is truncated once a commit
    /// leaves it at the limit, never grows much past it across processes' opens, and `checkpoint()` empties it.
    @Test func withCheckpointsEveryPagesTheLogStaysBoundedAcrossOpens() throws {
        let directory = try TemporaryDirectory("open")
        let pages = 40
        let frame = 4096 + 24
        var largest = 0
        var truncations = 0
        var previous = 0
        for index in 0..<60 {
            // One open per donation, as one `suggest donate` process each.
            let store = try SQLiteDonationStore.open(directory.location, checkpoints: .everyPages(pages))
            #expect(try store.record(Self.donation(index)) == .recorded(identifier: "d-\(index)"))
            let size = Self.size(directory.log) ?? 0
            largest = max(largest, size)
            if size < previous { truncations += 1 }
            previous = size
        }
        #expect(Self.size(directory.log) != nil, "the log is left in place at close")
        #expect(truncations >= 2, "the log was truncated \(truncations) times")
        // At most the limit plus one donation's pages (a donation writes about a dozen).
        #expect(largest <= 32 + (pages + 30) * frame, "the log reached \(largest) bytes")

        let store = try SQLiteDonationStore.open(directory.location, checkpoints: .everyPages(pages))
        try store.checkpoint()
        #expect(Self.size(directory.log) == 0)
        #expect(try store.donationCount(account: "default") == 60)
    }

    /// A server's writing connection: a commit that leaves the log at the limit starts it over in place, so the file
    /// keeps the size it reached instead of being cut and grown again, and the log still never grows much past the
    /// limit. Nothing committed is lost.
    @Test func withCheckpointsEveryPagesInPlaceTheLogIsWrittenOverNotCut() throws {
        let directory = try TemporaryDirectory("open")
        let pages = 40
        let frame = 4096 + 24
        let store = try SQLiteDonationStore.open(directory.location, checkpoints: .everyPagesInPlace(pages))
        var largest = 0
        var smallest = Int.max
        var restarts = 0
        var previousSalt: [UInt8] = []
        for index in 0..<60 {
            #expect(try store.record(Self.donation(index)) == .recorded(identifier: "d-\(index)"))
            let size = Self.size(directory.log) ?? 0
            largest = max(largest, size)
            if index > 20 { smallest = min(smallest, size) }
            // The log's salts (bytes 16 to 23 of its header) change whenever the log starts over.
            let salt = Array(try readFile(directory.log).dropFirst(16).prefix(8))
            if !previousSalt.isEmpty && salt != previousSalt { restarts += 1 }
            previousSalt = salt
        }
        #expect(restarts >= 2, "the log was started over \(restarts) times")
        #expect(smallest >= pages * frame, "the log's file was cut to \(smallest) bytes")
        #expect(largest <= 32 + (pages + 30) * frame, "the log reached \(largest) bytes")
        #expect(try store.donationCount(account: "default") == 60)
    }

    /// A reader in the middle of a long read (a slow export) while a conversation is deleted: the deletion tries to
    /// cut the log for a second, then answers `logTruncated: false` with the scrub owed, and a writer of another
    /// connection is not held meanwhile. Each try used to wait in SQLite's busy handler (30 s) holding the log's
    /// write lock: the deletion, and every donation of every tenant of a server, waited for the reader.
    @Test func aDeletionDoesNotWaitForAReaderNorHoldWritersBehindIt() throws {
        let directory = try TemporaryDirectory("open")
        let store = try SQLiteDonationStore.open(directory.location)
        let other = try SQLiteDonationStore.open(directory.location)
        for index in 0..<20 { _ = try store.record(Self.donation(index)) }
        let reader = try Database(path: directory.path + "/suggest.sqlite")
        try reader.execute("BEGIN")
        #expect(try reader.statement("SELECT COUNT(*) FROM conversations").scalarInt() == 7)
        defer { try? reader.execute("COMMIT") }

        // Another connection writes while the deletion tries to cut the log: it waits for a try, not for them all.
        nonisolated(unsafe) let deleter = store
        nonisolated(unsafe) let writer = other
        let outcome = Mutex<(report: DeletionReport?, deleting: Duration, written: Duration?)>((nil, .zero, nil))
        DispatchQueue.concurrentPerform(iterations: 2) { index in
            let started = ContinuousClock.now
            if index == 0 {
                let report = try? deleter.delete(.conversation("c-3"), account: Interaction.defaultAccount)
                outcome.withLock { $0.report = report; $0.deleting = ContinuousClock.now - started }
            } else {
                sleepSeconds(0.3)
                let writing = ContinuousClock.now
                let recorded = try? writer.record(Self.donation(100))
                outcome.withLock { $0.written = recorded == nil ? nil : ContinuousClock.now - writing }
            }
        }
        let (deleted, deleting, written) = outcome.withLock { $0 }
        let report = try #require(deleted)
        #expect(report.donations == 3)
        #expect(!report.logTruncated, "the reader still holds its snapshot")
        #expect(store.database.owesLogScrub)
        // A second of tries, not the busy handler's 30 s: a bound far from both.
        #expect(deleting < .seconds(10), "the deletion waited \(deleting) for the reader")
        let wrote = try #require(written, "the other connection's write failed")
        #expect(wrote < .milliseconds(700), "a writer waited \(wrote) behind the deletion's tries")
    }

    /// A deletion's rewrite puts the file's new pages in the log; the deleted rows stay in the old pages of the
    /// database file until the log is cut. The cut was owed only once a deletion had tried it and failed, so a
    /// process killed between the rewrite and the cut (a server's `kill -9`, or its SIGTERM past `--grace`), or an
    /// opener that settled a killed deletion's rewrite while another process read, left nothing owed, and the
    /// deleted names in the file through any number of reading commands (found by a review, with `kill -9` and a
    /// reader's snapshot). Now the cut is owed from the moment a rewrite is, and again when a rewrite begins.
    @Test func aRewriteLeavesTheCutOwedUntilItIsMade() throws {
        let directory = try TemporaryDirectory("open")
        let store = try SQLiteDonationStore.open(directory.location)
        for index in 0..<20 { _ = try store.record(Self.donation(index)) }
        _ = try store.truncateLog()
        #expect(!store.database.owesLogScrub && !store.database.owesFileRewrite)

        // What a deletion notes before its commit, and all that a process killed after the commit leaves.
        store.database.oweFileRewrite()
        #expect(store.database.owesLogScrub, "a rewrite owed is a cut owed")

        // A checkpoint cuts the log before anyone rewrites the file; then an opener rewrites it while another
        // process's snapshot keeps the log from being cut.
        _ = try store.truncateLog()
        #expect(!store.database.owesLogScrub && store.database.owesFileRewrite)
        let reader = try Self.readerHoldingASnapshot(of: directory)
        #expect(!store.settleOwedRewrite(), "the reader keeps the log from being cut")
        #expect(!store.database.owesFileRewrite, "the file was rewritten")
        #expect(store.database.owesLogScrub, "its old pages are still in the file: the cut is owed")
        try reader.execute("COMMIT")

        let next = try SQLiteDonationStore.open(directory.location)
        #expect(!next.database.owesLogScrub, "the next opener cut the log")
    }

    /// SQLite flushes the log only when a checkpoint copies it, and copies nothing past the snapshot of the oldest
    /// reader: while an export read, a server's checkpoint each second flushed nothing, and the donations it
    /// acknowledged meanwhile were in the page cache alone (a review watched `fdatasync` with strace). The
    /// checkpoint now flushes the log itself when a reader kept part of it from being copied.
    @Test func aCheckpointThatAReaderHoldsBackFlushesTheLog() throws {
        let directory = try TemporaryDirectory("open")
        let store = try SQLiteDonationStore.open(directory.location, checkpoints: .everyPagesInPlace(65_536))
        _ = try store.record(Self.donation(0))
        try store.checkpoint()
        _ = try store.record(Self.donation(1))
        try store.checkpoint()
        #expect(store.database.logFlushes == 0, "nothing held back: SQLite's copy flushed the log")

        let reader = try Self.readerHoldingASnapshot(of: directory)
        for index in 2..<6 { _ = try store.record(Self.donation(index)) }
        try store.checkpoint()
        let flushed = store.database.logFlushes
        #expect(flushed > 0, "the commits after the reader's snapshot are flushed")
        try store.checkpoint()
        #expect(store.database.logFlushes == flushed, "a log unchanged since is not flushed again")

        // A command's store checkpoints in its commits, and flushes the log itself when a reader holds it back.
        let command = try SQLiteDonationStore.open(directory.location, checkpoints: .everyPages(1))
        for index in 6..<9 { _ = try command.record(Self.donation(index)) }
        #expect(command.database.logFlushes > 0, "a command's commit that the reader held back is flushed")
        try reader.execute("COMMIT")
    }

    /// While a deletion's scrub of the log is owed (it found the log busy), a server's connections cut the log where
    /// they would write it over in place: the checkpoint while writes go on, and the commit that reaches the limit.
    /// The first cut settles the debt.
    @Test func anOwedScrubIsACutNotARestart() throws {
        let directory = try TemporaryDirectory("open")
        let pages = 40
        let writer = try SQLiteDonationStore.open(directory.location, checkpoints: .everyPagesInPlace(pages))
        let checkpointer = try SQLiteDonationStore.open(directory.location, checkpoints: .everyPagesInPlace(pages))
        _ = try writer.record(Self.donation(0))
        try checkpointer.checkpoint()
        _ = try writer.record(Self.donation(1))
        try checkpointer.checkpoint()
        #expect(Self.size(directory.log) ?? 0 > 0, "writes went on: the log is written over in place")

        writer.database.owesLogScrub = true
        _ = try writer.record(Self.donation(2))
        try checkpointer.checkpoint()
        #expect(Self.size(directory.log) == 0, "a scrub is owed: the checkpoint cuts the log")
        #expect(!writer.database.owesLogScrub, "the cut settled it, for every connection of the process")

        // The commit that reaches the limit: it cuts while the scrub is owed, and writes over in place after.
        var index = 3
        func recordUntilTheLogStartsOver() throws -> Int {
            var largest = 0
            while true {
                _ = try writer.record(Self.donation(index))
                index += 1
                let size = Self.size(directory.log) ?? 0
                if size < largest || index > 200 { return size }
                largest = size
            }
        }
        writer.database.owesLogScrub = true
        #expect(try recordUntilTheLogStartsOver() == 0)
        #expect(!writer.database.owesLogScrub)
        // In place the file keeps its size (only written over from its start), so the loop ends on its cap.
        #expect(try recordUntilTheLogStartsOver() > 0)
    }

    /// A restart of the log copies what the checkpoint before it left while this process's writers wait, so it is
    /// skipped when that is more than a little: a server's group of requests commits tens of thousands of frames at
    /// once, and copying them held its writer about 200 ms. The log then grows on, to the commit that reaches the
    /// limit, or to the next checkpoint that finds it all copied.
    @Test func aRestartDoesNotHoldWritersToCopyALargeCommit() throws {
        let directory = try TemporaryDirectory("open")
        let writer = try SQLiteDonationStore.open(directory.location, checkpoints: .everyPagesInPlace(65_536))
        let checkpointer = try SQLiteDonationStore.open(directory.location, checkpoints: .everyPagesInPlace(65_536))
        _ = try writer.record(Self.donation(0))
        try checkpointer.checkpoint()
        let index = try #require(WALIndexHeader(connection: checkpointer.database))
        // One commit of another connection of more frames than a restart may copy: rows of a page each.
        let rows = SQLiteDonationStore.restartRemainderFrames + 200
        try writer.database.write {
            let insert = try writer.database.statement("INSERT INTO settings(name, value) VALUES (?, ?)")
            for row in 0..<rows {
                try insert.run([.text("filler-\(row)"), .text(String(repeating: "x", count: 4_000))])
            }
        }
        let frames = try #require(index.frames)
        #expect(frames > rows)
        #expect(index.framesNotCopied == frames)
        let databaseSize = Self.size(directory.path + "/suggest.sqlite")

        #expect(try !checkpointer.restartLogIfMostlyCopied(), "nothing copied: the restart would copy it all")
        #expect(Self.size(directory.path + "/suggest.sqlite") == databaseSize, "nothing was copied")
        #expect(index.frames == frames, "the log was not started over")

        try checkpointer.database.checkpointWithoutWaiting()
        #expect(index.framesNotCopied == 0)
        #expect(try checkpointer.restartLogIfMostlyCopied(), "all copied: the restart copies nothing")
        // The next commit writes the log from its start.
        _ = try writer.record(Self.donation(1))
        #expect(try #require(index.frames) < frames)
        #expect(try writer.donationCount(account: "default") == 2)
    }

    /// A server's checkpoint, while other connections go on committing, copies the log and has it started over in
    /// place (the file keeps its size), and cuts it to nothing only once nothing was committed since its last one;
    /// a connection's first checkpoint, which cannot know, cuts it too. Nothing committed is lost either way.
    @Test func aCheckpointCutsTheLogOnlyOnceWritesHaveStopped() throws {
        let directory = try TemporaryDirectory("open")
        let writer = try SQLiteDonationStore.open(directory.location, checkpoints: .everyPages(65_536))
        let checkpointer = try SQLiteDonationStore.open(directory.location, checkpoints: .everyPages(65_536))
        _ = try writer.record(Self.donation(0))
        try checkpointer.checkpoint()
        #expect(Self.size(directory.log) == 0, "a first checkpoint cuts the log")
        _ = try writer.record(Self.donation(1))
        try checkpointer.checkpoint()
        let restarted = Self.size(directory.log) ?? 0
        #expect(restarted > 0, "a commit came in since the last checkpoint: the log is started over, not cut")
        _ = try writer.record(Self.donation(2))
        try checkpointer.checkpoint()
        #expect(Self.size(directory.log) ?? 0 > 0)
        try checkpointer.checkpoint()
        #expect(Self.size(directory.log) == 0, "nothing came in since the last checkpoint: the log is cut")
        let reader = try SQLiteDonationStore.open(directory.location, checkpoints: .everyPages(65_536))
        #expect(try reader.donationCount(account: "default") == 3)
    }
}
