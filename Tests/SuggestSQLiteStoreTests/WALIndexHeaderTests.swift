import SuggestCore
import SuggestTestSupport
import Testing

@testable import SuggestSQLiteStore

/// The log index's header, read from memory, tells a commit from no commit exactly as `PRAGMA data_version` does:
/// it changes at every commit of any connection and every start of the log over, and at nothing else.
@Suite struct WALIndexHeaderTests {
    static let now = Timestamp(seconds: 1_796_000_000)

    static func donation(_ index: Int) -> Interaction {
        Interaction(
            identifier: "d\(index)", date: now.adding(-Double(index)), direction: .outgoing,
            intent: SendMessageIntent(conversationIdentifier: "c\(index % 7)"))
    }

    @Test func theHeaderChangesWithEveryCommitAndNothingElse() throws {
        let stored = try TemporaryStore()
        let path = stored.temporary.location.databasePath
        let watcher = try Database(path: path)
        func dataVersion() throws -> Int64? { try watcher.statement("PRAGMA data_version").scalarInt() }
        _ = try dataVersion()
        let header = try #require(WALIndexHeader(connection: watcher))

        var last = try #require(header.read())
        var lastVersion = try dataVersion()
        /// Whether the header and `data_version` both changed since the last look, or both did not.
        func changed() throws -> Bool {
            let now = try #require(header.read())
            let version = try dataVersion()
            defer { (last, lastVersion) = (now, version) }
            #expect((now != last) == (version != lastVersion), "the header and data_version disagree")
            return now != last
        }

        // Reads, by this connection and another, change nothing.
        _ = try stored.store.suggestions(account: "default", context: RankingContext(at: Self.now))
        _ = try watcher.statement("SELECT COUNT(*) FROM settings").scalarInt()
        #expect(try !changed())

        // Every commit does: a donation, a batch, a preference.
        _ = try stored.store.record(Self.donation(1), now: Self.now)
        #expect(try changed())
        _ = try stored.store.importDonations((2..<50).map(Self.donation))
        #expect(try changed())
        try stored.store.setBlocked(true, conversation: "c3", account: "default")
        #expect(try changed())
        #expect(try !changed())

        // Copying the log into the database changes nothing stored; starting it over does count.
        try stored.store.checkpoint()
        _ = try changed()
        #expect(try !changed())
        _ = try stored.store.record(Self.donation(60), now: Self.now)
        #expect(try changed())
        let other = try SQLiteDonationStore.open(stored.temporary.location)
        _ = try other.record(Self.donation(61), now: Self.now)
        #expect(try changed())
    }

    @Test func aDatabaseWithoutALogIndexHasNoHeader() throws {
        let directory = try TemporaryDirectory("no-index")
        // A database in the default rollback journal mode has no log index.
        let database = try Database(path: directory.path + "/plain.sqlite")
        try database.execute("CREATE TABLE t(x)")
        #expect(WALIndexHeader(connection: database) == nil)
    }
}
