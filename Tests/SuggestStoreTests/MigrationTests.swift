import SuggestCore
import SuggestTestSupport
import Testing

@testable import SuggestStore

#if canImport(Glibc)
    import Glibc
#endif

/// A store written before the key columns (schema 1) opens at the latest schema with every key filled, so that
/// duplicates, deletion by identifier and snapshot reuse behave as in a store that always had them; one written
/// before the conversations' group identifiers (schema 2) finds its groups.
@Suite struct MigrationTests {
    /// Turns a store back into the exact shape migration 2 left: no `conversation_groups`, the group index back.
    static func downgradeToSchema2(_ path: String) throws {
        let database = try Database(path: path)
        try database.execute(
            """
            BEGIN;
            DROP TABLE conversation_groups;
            \(try schema1Statement("CREATE INDEX donations_by_group"))
            DELETE FROM schema_migrations WHERE version >= 3;
            COMMIT;
            """)
    }

    /// Turns a store back into the exact shape migration 1 made: the keys gone, the unique indexes back.
    static func downgradeToSchema1(_ path: String) throws {
        try downgradeToSchema2(path)
        let database = try Database(path: path)
        try database.execute(
            """
            BEGIN;
            DROP INDEX donations_by_identifier_key;
            ALTER TABLE donations DROP COLUMN identifier_key;
            CREATE UNIQUE INDEX donations_by_identifier ON donations(account, identifier);
            DROP INDEX snapshots_by_body_key;
            ALTER TABLE snapshots RENAME TO snapshots_with_keys;
            \(try schema1Statement("CREATE TABLE snapshots("))
            INSERT INTO snapshots SELECT id, conversation_id, body, is_group FROM snapshots_with_keys;
            DROP TABLE snapshots_with_keys;
            DELETE FROM schema_migrations WHERE version >= 2;
            COMMIT;
            """)
    }

    /// The statement of migration 1's SQL that starts with `prefix`, up to its semicolon.
    static func schema1Statement(_ prefix: String) throws -> String {
        let sql = Schema.migrations[0].sql
        guard let start = sql.firstRange(of: prefix), let end = sql[start.lowerBound...].firstIndex(of: ";") else {
            throw StoreError(.failed, "migration 1 has no statement starting with \(prefix)")
        }
        return String(sql[start.lowerBound...end])
    }

    /// `donations` recorded (retention off), the store taken back by `downgrade`, then opened again, which migrates
    /// it; its export must not change. Returns the migrated store and that export.
    private static func migratedStore(
        of donations: [Interaction], in directory: TemporaryDirectory, downgrade: (String) throws -> Void
    ) throws -> (store: DonationStore, export: [String]) {
        do {
            let store = try DonationStore.open(directory.location)
            try store.setRetention(Retention(maximumAgeDays: 0, idleDays: 0))
            for donation in donations { _ = try store.donate(donation) }
        }
        let before = try export(directory.location)
        try downgrade(directory.location.databasePath)
        let store = try DonationStore.open(directory.location)
        #expect(try export(directory.location) == before)
        return (store, before)
    }

    @Test func aSchema1StoreGetsItsKeys() throws {
        let directory = try TemporaryDirectory("open")
        let donations = (0..<40).map(StoreOpeningTests.donation)
        let (store, _) = try Self.migratedStore(of: donations, in: directory, downgrade: Self.downgradeToSchema1)
        let version = try store.database.statement("SELECT MAX(version) FROM schema_migrations").scalarInt()
        #expect(version == Int64(Schema.latestVersion))
        // Every key equals what the writer computes now.
        let stale = try store.database.statement(
            "SELECT COUNT(*) FROM donations WHERE identifier_key != suggest_key(account, identifier)"
        ).scalarInt()
        #expect(stale == 0)
        let snapshots = try store.database.statement("SELECT COUNT(*) FROM snapshots").scalarInt()
        // The same donations again are duplicates, and add no snapshot.
        for donation in donations {
            #expect(try store.donate(donation) == .duplicate(identifier: donation.identifier ?? ""))
        }
        var renamed = donations[0]
        renamed.identifier = "new"
        _ = try store.donate(renamed)
        #expect(try store.database.statement("SELECT COUNT(*) FROM snapshots").scalarInt() == snapshots)
        // Deletion by identifier finds a donation written before the migration.
        let report = try store.delete(.identifier("d-3"), account: "default")
        #expect(report.donations == 1)
    }

    @Test func aSchema2StoreFindsItsGroups() throws {
        let directory = try TemporaryDirectory("open")
        var donations = (0..<40).map(StoreOpeningTests.donation)
        for index in donations.indices where index % 3 != 0 { donations[index].groupIdentifier = "g-\(index % 4)" }
        let (store, before) = try Self.migratedStore(of: donations, in: directory, downgrade: Self.downgradeToSchema2)
        let groupIndexes = try store.database.statement(
            "SELECT COUNT(*) FROM sqlite_master WHERE name = 'donations_by_group'"
        ).scalarInt()
        #expect(groupIndexes == 0)
        let pairs = Set(donations.compactMap { donation in donation.groupIdentifier.map { "\($0) \(donation.conversationIdentifier)" } })
        #expect(try store.database.statement("SELECT COUNT(*) FROM conversation_groups").scalarInt() == Int64(pairs.count))
        // Deletion by group identifier finds donations written before the migration, and only those.
        let report = try store.delete(.groupIdentifier("g-1"), account: "default")
        #expect(report.donations == donations.filter { $0.groupIdentifier == "g-1" }.count)
        #expect(try Self.export(directory.location).count == before.count - report.donations)
        let left = try store.database.statement(
            "SELECT COUNT(*) FROM conversation_groups WHERE group_identifier = 'g-1'"
        ).scalarInt()
        #expect(left == 0)
    }

    static func export(_ location: StoreLocation) throws -> [String] {
        let store = try DonationStore.open(location)
        var lines: [String] = []
        try store.forEachDonation(account: "default") { lines.append($0.jsonLine) }
        return lines
    }
}
