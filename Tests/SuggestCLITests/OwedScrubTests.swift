import SuggestCore
import SuggestSQLiteStore
import SuggestTestSupport
import Testing

/// A deletion that finds the write-ahead log busy (another process reading) cannot cut it, and says "the old pages
/// leave it at its next checkpoint (run any suggest command later)". The debt lived in the deleting process's
/// memory, gone when it exited: a probe ran `list`, `export`, `share` and `block --list` thirty times each after
/// the reader ended, and the deleted names stayed in the files; only writes that filled the log cut it. Now a
/// marker beside the database carries the debt, and the next command that opens the store settles it.
@Suite struct OwedScrubTests {
    @Test func aReadingCommandSettlesTheScrubADeletionOwed() throws {
        let scratch = try TemporaryDirectory("owed-scrub")
        let store = scratch("store")
        let secret = "Hidden Gala \(UInt32.random(in: 100_000...999_999))"
        for index in 0..<5 {
            let donated = SuggestProcess.run([
                "donate", "--store", store, "--conversation", "gala", "--group-name", secret,
                "--date", "2026-11-29T10:0\(index):00Z",
            ])
            #expect(donated.status == 0, "\(donated.standardError)")
        }
        #expect(SuggestProcess.run(["donate", "--store", store, "--conversation", "other"]).status == 0)

        // Another process's read keeps the log busy while the deletion tries to cut it.
        let reader = try Database(path: store + "/suggest.sqlite")
        try reader.execute("BEGIN")
        _ = try reader.statement("SELECT COUNT(*) FROM conversations").scalarInt()
        let deleted = SuggestProcess.run(["delete", "--store", store, "--conversation", "gala"])
        #expect(deleted.status == 0 && deleted.standardError.contains("may stay in the store's files"), "\(deleted.standardError)")
        try reader.execute("COMMIT")
        #expect(Self.filesHolding(secret, in: store) != [], "the test needs the name still in the log here")

        // A command that only reads, once nobody else uses the log.
        #expect(SuggestProcess.run(["list", "--store", store]).status == 0)
        #expect(Self.filesHolding(secret, in: store) == [])
        #expect(!directoryEntries(store).contains("suggest.sqlite-scrub"))
    }

    /// A deletion ends by rewriting the database file (docs/storage.md: copies of rows that SQLite moved stay in
    /// pages' free space). One that did not happen, its process killed after the commit or its disk full, is owed
    /// by a marker beside the database, and the next command that opens the store rewrites the file.
    @Test func theNextCommandRewritesTheFileADeletionOwed() throws {
        let scratch = try TemporaryDirectory("owed-rewrite")
        let store = scratch("store")
        for conversation in ["gala", "other"] {
            #expect(SuggestProcess.run(["donate", "--store", store, "--conversation", conversation]).status == 0)
        }
        #expect(SuggestProcess.run(["delete", "--store", store, "--conversation", "gala"]).status == 0)
        #expect(!directoryEntries(store).contains("suggest.sqlite-rewrite"), "settled by the deletion itself")

        // Free pages that only a rewrite gives back, then the debt a killed deletion leaves.
        let database = try Database(path: store + "/suggest.sqlite")
        try database.execute(
            "INSERT INTO settings(name, value) VALUES ('filler', hex(zeroblob(200000))); DELETE FROM settings WHERE name = 'filler'")
        #expect(try database.statement("PRAGMA freelist_count").scalarInt() ?? 0 > 0)
        try writeFile(store + "/suggest.sqlite-rewrite", [])

        #expect(SuggestProcess.run(["list", "--store", store]).status == 0)
        #expect(!directoryEntries(store).contains("suggest.sqlite-rewrite"))
        #expect(try database.statement("PRAGMA freelist_count").scalarInt() == 0)
    }

    /// An unblock of a conversation never blocked deletes nothing and owes no rewrite (a review found the next
    /// command rewriting the whole file after every such call), and a command that finds a rewrite owed while
    /// another process writes does not wait for that writer (it waited 31 s: the busy timeout, then the log).
    @Test func nothingDeletedOwesNothingAndAnOwedRewriteWaitsForNoWriter() throws {
        let scratch = try TemporaryDirectory("owed-rewrite-wait")
        let store = scratch("store")
        #expect(SuggestProcess.run(["donate", "--store", store, "--conversation", "c-1"]).status == 0)
        #expect(SuggestProcess.run(["unblock", "--store", store, "--conversation", "nobody"]).status == 0)
        #expect(!directoryEntries(store).contains("suggest.sqlite-rewrite"))

        let writer = try Database(path: store + "/suggest.sqlite")
        try writer.execute("BEGIN IMMEDIATE")
        try writeFile(store + "/suggest.sqlite-rewrite", [])
        let began = monotonicSeconds()
        let listed = SuggestProcess.run(["list", "--store", store])
        #expect(listed.status == 0, "\(listed.standardError)")
        #expect(monotonicSeconds() - began < 10)
        #expect(directoryEntries(store).contains("suggest.sqlite-rewrite"), "still owed: the writer held the store")
        try writer.execute("COMMIT")
        #expect(SuggestProcess.run(["list", "--store", store]).status == 0)
        #expect(!directoryEntries(store).contains("suggest.sqlite-rewrite"))
    }

    /// The store's files whose bytes hold `text`.
    static func filesHolding(_ text: String, in directory: String) -> [String] {
        directoryEntries(directory).filter { name in
            guard let bytes = try? readFile(directory + "/" + name) else { return false }
            return bytes.firstRange(of: Array(text.utf8)) != nil
        }
    }
}
