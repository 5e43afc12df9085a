import SuggestCore
import SuggestTestSupport
import Testing

@testable import SuggestSQLiteStore

#if canImport(Glibc)
    import Glibc
#endif

/// A store written before the key columns (schema 1) opens at the latest schema with every key filled, so that
/// duplicates, deletion by identifier and snapshot reuse behave as in a store that always had them; one written
/// before the conversations' group identifiers (schema 2) finds its groups; one written before the blocks of
/// donations (schema 3) has its donation rows moved into blocks, in their order.
@Suite struct MigrationTests {
    /// Turns a store back into the shape migration 10 left: no stale shares in `learned_weights`, and the weights'
    /// fingerprint of then (without `;stale:`), so that the next maintenance folds every account again.
    static func downgradeToSchema10(_ path: String) throws {
        let database = try Database(path: path)
        var drops = ""
        for kind in ["pz", "gz"] {
            for channel in 0..<4 { drops += "ALTER TABLE learned_weights DROP COLUMN \(kind)\(channel);\n" }
        }
        try database.execute("BEGIN; \(drops) DELETE FROM schema_migrations WHERE version >= 11;")
        if let weights = try database.setting(SQLiteDonationStore.weightsSetting) {
            try database.uncachedStatement("UPDATE settings SET value = ? WHERE name = ?").run([
                .text(weights.replacing(";stale:8.0", with: "")), .text(SQLiteDonationStore.weightsSetting),
            ])
        }
        try database.execute("COMMIT")
    }

    /// Turns a store back into the exact shape migration 8 left: no `display_date`, and each conversation shown by
    /// its latest donation, whatever that donation said (the later recorded of equal dates).
    static func downgradeToSchema8(_ path: String) throws {
        try downgradeToSchema10(path)
        let database = try Database(path: path)
        try database.execute("BEGIN")
        let blocks = try database.uncachedStatement(
            "SELECT conversation_id, donations FROM donation_blocks ORDER BY conversation_id, id")
        var latest: [Int64: (date: Double, snapshot: Int64)] = [:]
        while try blocks.step() {
            for donation in try DonationBlock.decode(blocks.blob(1)) {
                if let known = latest[blocks.int(0)], donation.date < known.date { continue }
                latest[blocks.int(0)] = (donation.date, donation.snapshotID)
            }
        }
        let update = try database.uncachedStatement("UPDATE conversations SET latest_snapshot_id = ? WHERE id = ?")
        for (conversation, shown) in latest { try update.run([.integer(shown.snapshot), .integer(conversation)]) }
        try database.execute(
            "ALTER TABLE conversations DROP COLUMN display_date; DELETE FROM schema_migrations WHERE version >= 9; COMMIT;")
    }

    /// Turns a store back into the exact shape migration 7 left: an index of all of an account's conversations per
    /// channel.
    static func downgradeToSchema7(_ path: String) throws {
        try downgradeToSchema8(path)
        let database = try Database(path: path)
        var creates = ""
        for channel in 0..<4 { creates += try migrationStatement("CREATE INDEX conversations_by_c\(channel) ", in: 1) }
        try database.execute("BEGIN; \(creates) DELETE FROM schema_migrations WHERE version >= 8; COMMIT;")
    }

    /// Turns a store back into the exact shape migration 6 left: no learned weights.
    static func downgradeToSchema6(_ path: String) throws {
        try downgradeToSchema7(path)
        let database = try Database(path: path)
        try database.execute(
            """
            BEGIN; DROP TABLE learned_weights; DELETE FROM settings WHERE name = '\(SQLiteDonationStore.weightsSetting)';
            DELETE FROM schema_migrations WHERE version >= 7; COMMIT;
            """)
    }

    /// Turns a store back into the exact shape migration 5 left: no sorted lists by service or content kind.
    static func downgradeToSchema5(_ path: String) throws {
        try downgradeToSchema6(path)
        let database = try Database(path: path)
        var drops = ""
        for channel in 0..<4 {
            drops += "DROP INDEX conversations_by_service_c\(channel); DROP INDEX conversation_content_by_c\(channel);\n"
        }
        for channel in 0..<4 { drops += "ALTER TABLE conversation_content DROP COLUMN c\(channel);\n" }
        try database.execute("BEGIN; \(drops) DELETE FROM schema_migrations WHERE version >= 6; COMMIT;")
    }

    /// Turns a store back into the exact shape migration 3 left: a row per donation, in recording order, with its
    /// identifier key and three indexes; no blocks.
    static func downgradeToSchema3(_ path: String) throws {
        try downgradeToSchema5(path)
        let database = try Database(path: path)
        try database.execute("BEGIN")
        try database.execute(
            """
            \(try migrationStatement("CREATE TABLE donations(", in: 1))
            ALTER TABLE donations ADD COLUMN identifier_key INTEGER NOT NULL DEFAULT 0;
            """)
        let blocks = try database.uncachedStatement(
            "SELECT b.conversation_id, c.account, b.donations FROM donation_blocks b JOIN conversations c ON c.id = b.conversation_id")
        var rows: [(conversation: Int64, account: String, donation: StoredDonation)] = []
        while try blocks.step() {
            for donation in try DonationBlock.decode(blocks.blob(2)) {
                rows.append((blocks.int(0), blocks.text(1) ?? "", donation))
            }
        }
        let insert = try database.statement(
            """
            INSERT INTO donations(id, account, identifier, identifier_key, conversation_id, snapshot_id, group_identifier,
                date, direction, engaged, content_types) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """)
        for row in rows.sorted(by: { $0.donation.sequence < $1.donation.sequence }) {
            let donation = row.donation
            try insert.run([
                .integer(donation.sequence), .text(row.account), .text(donation.identifier),
                .integer(StableHash.key(row.account, donation.identifier)), .integer(row.conversation),
                .integer(donation.snapshotID), donation.groupIdentifier.map { .text($0) } ?? .null, .real(donation.date),
                .integer(Int64(donation.direction.storedCode)), .integer(donation.engaged ? 1 : 0),
                donation.contentTypes.map { .text($0) } ?? .null,
            ])
        }
        try database.execute(
            """
            \(try migrationStatement("CREATE INDEX donations_by_conversation", in: 1))
            \(try migrationStatement("CREATE INDEX donations_by_date", in: 1))
            \(try migrationStatement("CREATE INDEX donations_by_identifier_key", in: 2))
            DROP TABLE donation_blocks;
            DROP TABLE donation_identifiers;
            DELETE FROM settings WHERE name = '\(BlockLog.sequenceSetting)';
            DELETE FROM schema_migrations WHERE version >= 4;
            COMMIT;
            """)
    }

    /// Turns a store back into the exact shape migration 2 left: no `conversation_groups`, the group index back.
    static func downgradeToSchema2(_ path: String) throws {
        try downgradeToSchema3(path)
        let database = try Database(path: path)
        try database.execute(
            """
            BEGIN;
            DROP TABLE conversation_groups;
            \(try migrationStatement("CREATE INDEX donations_by_group", in: 1))
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
            \(try migrationStatement("CREATE TABLE snapshots(", in: 1))
            INSERT INTO snapshots SELECT id, conversation_id, body, is_group FROM snapshots_with_keys;
            DROP TABLE snapshots_with_keys;
            DELETE FROM schema_migrations WHERE version >= 2;
            COMMIT;
            """)
    }

    /// The statement of migration `version`'s SQL that starts with `prefix`, up to its semicolon.
    static func migrationStatement(_ prefix: String, in version: Int) throws -> String {
        let sql = Schema.migrations[version - 1].sql
        guard let start = sql.firstRange(of: prefix), let end = sql[start.lowerBound...].firstIndex(of: ";") else {
            throw StoreError(.failed, "migration \(version) has no statement starting with \(prefix)")
        }
        return String(sql[start.lowerBound...end])
    }

    /// `donations` recorded (retention off), the store taken back by `downgrade`, then opened again, which migrates
    /// it; its export must not change. Returns the migrated store and that export.
    private static func migratedStore(
        of donations: [Interaction], in directory: TemporaryDirectory, downgrade: (String) throws -> Void
    ) throws -> (store: SQLiteDonationStore, export: [String]) {
        do {
            let store = try SQLiteDonationStore.open(directory.location)
            try store.setRetention(Retention(maximumAgeDays: 0, idleDays: 0))
            for donation in donations { _ = try store.record(donation) }
        }
        let before = try export(directory.location)
        try downgrade(directory.location.databasePath)
        let store = try SQLiteDonationStore.open(directory.location)
        #expect(try export(directory.location) == before)
        return (store, before)
    }

    @Test func aSchema1StoreGetsItsKeys() throws {
        let directory = try TemporaryDirectory("open")
        let donations = (0..<40).map(StoreOpeningTests.donation)
        let (store, _) = try Self.migratedStore(of: donations, in: directory, downgrade: Self.downgradeToSchema1)
        let version = try store.database.statement("SELECT MAX(version) FROM schema_migrations").scalarInt()
        #expect(version == Int64(Schema.latestVersion))
        // Every identifier is listed under the key the writer computes now.
        let identifiers = IdentifierIndex(database: store.database)
        for donation in donations {
            #expect(try !identifiers.blocks(for: StableHash.key("default", donation.identifier ?? "")).isEmpty)
        }
        let snapshots = try store.database.statement("SELECT COUNT(*) FROM snapshots").scalarInt()
        // The same donations again are duplicates, and add no snapshot.
        for donation in donations {
            #expect(try store.record(donation) == .duplicate(identifier: donation.identifier ?? ""))
        }
        var renamed = donations[0]
        renamed.identifier = "new"
        _ = try store.record(renamed)
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

    /// Enough donations to fill several blocks of a conversation, in an order that interleaves conversations, with
    /// groups, content types and both directions: the move keeps every field and the recording order.
    @Test(arguments: [1, 100_000]) func aSchema3StoreMovesItsDonationsIntoBlocks(idSpacing: Int) throws {
        let directory = try TemporaryDirectory("open")
        var donations = (0..<600).map(StoreOpeningTests.donation)
        for index in donations.indices {
            // Long identifiers: about 90 bytes a donation, so that each conversation fills several blocks.
            donations[index].identifier = "d-\(index)-" + String(repeating: "x", count: 64)
            if index % 4 == 1 { donations[index].groupIdentifier = "g-\(index % 3)" }
            if index % 5 == 2 { donations[index].intent.contentTypes = ["public.jpeg", "public.url"] }
            if index % 2 == 0 { donations[index].direction = .incoming }
            // Out of date order: the export follows the recording order, not the dates.
            if index % 9 == 0 { donations[index].date = donations[index].date.adding(-10_000) }
        }
        // Row ids far apart (as after years of deletions): each block spans at most `DonationBlock.maximumSpan`
        // of them, so most blocks hold a few donations, and the export merges many.
        let (store, before) = try Self.migratedStore(of: donations, in: directory) { path in
            try Self.downgradeToSchema3(path)
            try Database(path: path).execute("UPDATE donations SET id = id * \(idSpacing)")
        }
        #expect(before.count == donations.count)
        let tables = try store.database.statement(
            "SELECT COUNT(*) FROM sqlite_master WHERE name IN ('donations', 'donations_by_date')"
        ).scalarInt()
        #expect(tables == 0)
        // Several blocks for each of the 7 conversations, more when the ids are far apart.
        let blocks = try store.database.statement("SELECT COUNT(*) FROM donation_blocks").scalarInt() ?? 0
        #expect(blocks > (idSpacing == 1 ? 7 : 60))
        #expect(try store.donationCount(account: "default") == donations.count)
        for donation in donations.prefix(50) {
            #expect(try store.record(donation) == .duplicate(identifier: donation.identifier ?? ""))
        }
        // New donations follow the moved ones in the export.
        var next = StoreOpeningTests.donation(1_000)
        next.date = Timestamp(seconds: 1_700_000_000)
        _ = try store.record(next)
        #expect(try Self.export(directory.location) == before + [next.jsonLine])
        // Deletion by identifier, group and date finds donations written before the move.
        #expect(try store.delete(.identifier(donations[599].identifier ?? ""), account: "default").donations == 1)
        let group = try store.delete(.groupIdentifier("g-1"), account: "default")
        #expect(group.donations == donations.filter { $0.groupIdentifier == "g-1" }.count)
        let early = try store.delete(.before(Timestamp(seconds: 1_796_000_000)), account: "default")
        #expect(early.donations == 1 + donations.filter { $0.date.seconds < 1_796_000_000 && $0.groupIdentifier != "g-1" }.count)
        #expect(try Self.export(directory.location).count == before.count + 1 - 1 - group.donations - early.donations)
    }

    /// A store written before the scoped sorted lists (schema 5) gets them, with every content row's channel keys
    /// equal to its conversation's, and ranks for a service and for shared content as brute force does.
    @Test func aSchema5StoreGetsItsScopedLists() throws {
        let directory = try TemporaryDirectory("open")
        var donations = (0..<300).map(StoreOpeningTests.donation)
        for index in donations.indices {
            donations[index].intent.conversationIdentifier = "c-\(index % 23)"
            donations[index].intent.serviceName = index % 3 == 0 ? "sms" : "chat"
            if index % 4 == 1 { donations[index].intent.contentTypes = [index % 8 == 1 ? "public.jpeg" : "public.url"] }
            if index % 2 == 0 { donations[index].direction = .incoming }
        }
        let (store, _) = try Self.migratedStore(of: donations, in: directory, downgrade: Self.downgradeToSchema5)
        let mismatched = try store.database.statement(
            """
            SELECT COUNT(*) FROM conversation_content t JOIN conversations c ON c.id = t.conversation_id
            WHERE t.c0 IS NOT c.c0 OR t.c1 IS NOT c.c1 OR t.c2 IS NOT c.c2 OR t.c3 IS NOT c.c3
            """
        ).scalarInt()
        #expect(mismatched == 0)
        #expect(try store.database.statement("SELECT COUNT(*) FROM conversation_content").scalarInt() ?? 0 > 20)
        let at = donations.map(\.date).max() ?? .now()
        for context in [
            RankingContext(at: at, limit: 5, serviceName: "sms"), RankingContext(at: at, limit: 5, contentTypes: ["public.png"]),
            RankingContext(at: at, limit: 30, contentTypes: ["public.url", "public.jpeg"]),
        ] {
            #expect(try store.rankedConversations(account: "default", context: context)
                == (try store.suggestionsByBruteForce(account: "default", context: context)))
        }
    }

    /// A store of schema 6, written with the fixed policy as every store was before the learned weights, gets its
    /// weights table with every account marked; `maintain` rebuilds the state under the learned default's channels
    /// and folds the weights of the account it maintains (every account's for `nil`), after which the store ranks
    /// as one that only ever had the learned default: the reference store's suggestions and weights, to the bit.
    @Test func aSchema6StoreLearnsItsWeights() throws {
        let directory = try TemporaryDirectory("open")
        var donations = (0..<400).map(StoreOpeningTests.donation)
        for index in donations.indices {
            donations[index].intent.conversationIdentifier = "c-\(index % 17)"
            if index % 3 == 0 { donations[index].direction = .incoming }
            if index % 5 == 0 { donations[index].account = "bob" }
            if index % 7 == 0 { donations[index].intent.speakableGroupName = nil }
        }
        do {
            let old = try SQLiteDonationStore.open(directory.location, ranking: .fixed(.default))
            try old.setRetention(Retention(maximumAgeDays: 0, idleDays: 0))
            _ = try old.importDonations(donations)
        }
        try Self.downgradeToSchema6(directory.location.databasePath)
        let store = try SQLiteDonationStore.open(directory.location)
        #expect(try LearnedWeightsTable.marked(account: nil, in: store.database) == ["bob", "default"])
        let reference = InMemoryDonationStore()
        _ = try reference.setRetention(Retention(maximumAgeDays: 0, idleDays: 0), now: .now())
        _ = try reference.importDonations(donations)
        let first = try store.maintain(account: "default", now: .now(), budget: .unbounded)
        #expect(first.recomputedConversations == 34 && first.foldedAccounts == 1 && first.isComplete)
        #expect(try LearnedWeightsTable.marked(account: nil, in: store.database) == ["bob"])
        let second = try store.maintain(account: nil, now: .now(), budget: .unbounded)
        #expect(second.recomputedConversations == 0 && second.foldedAccounts == 1)
        #expect(try store.maintain(account: nil, now: .now(), budget: .unbounded).foldedAccounts == 0)
        let at = donations.map(\.date).max() ?? .now()
        for account in ["default", "bob"] {
            let weights = try store.learnedWeights(account: account)
            #expect(weights == (try reference.learnedWeights(account: account)))
            #expect(weights.targets > 10)
            let context = RankingContext(at: at, limit: 20)
            #expect(
                try store.suggestions(account: account, context: context, explain: true)
                    == reference.suggestions(account: account, context: context, explain: true))
        }
    }

    /// A store of schema 7 loses its indexes of all an account's conversations, and ranks as before from its
    /// service indexes merged: every context, against brute force, with conversations of three services and of
    /// none, and channel keys that tie.
    @Test func aSchema7StoreRanksFromItsServiceListsMerged() throws {
        let directory = try TemporaryDirectory("open")
        var donations = (0..<360).map(StoreOpeningTests.donation)
        let services: [String?] = ["sms", nil, "chat", "mail"]
        let first = donations.map(\.date).min() ?? .now()
        for index in donations.indices {
            donations[index].intent.conversationIdentifier = "c-\(index % 29)"
            donations[index].intent.serviceName = services[(index % 29) % services.count]
            // Conversations 0-9 get one donation each at the same moment: equal channel keys, across services.
            if index < 10 { donations[index].date = first }
            if index % 5 == 1 { donations[index].intent.contentTypes = ["public.jpeg"] }
            if index % 2 == 0 { donations[index].direction = .incoming }
        }
        let (store, _) = try Self.migratedStore(of: donations, in: directory, downgrade: Self.downgradeToSchema7)
        let indexes = try store.database.statement(
            "SELECT COUNT(*) FROM sqlite_master WHERE type = 'index' AND name LIKE 'conversations_by_c_'"
        ).scalarInt()
        #expect(indexes == 0)
        let at = donations.map(\.date).max() ?? .now()
        for context in [
            RankingContext(at: at, limit: 8), RankingContext(at: at, limit: 29), RankingContext(at: at, limit: 1),
            RankingContext(at: at, limit: 5, serviceName: "chat"), RankingContext(at: at, limit: 5, contentTypes: ["public.jpeg"]),
        ] {
            #expect(try store.rankedConversations(account: "default", context: context)
                == (try store.suggestionsByBruteForce(account: "default", context: context)))
        }
    }

    /// A store written before the stale shares gets their columns, and the first maintenance folds every account's
    /// weights under the new rule: the same weights, and the same ranking, as a store that always had it.
    @Test func aSchema10StoreLearnsTheStaleShares() throws {
        let directory = try TemporaryDirectory("open")
        let fresh = try TemporaryDirectory("open")
        let start = Timestamp(seconds: 1_790_000_000)
        // Sends after hours of silence and within minutes, to people and to a group, so that both shares learn.
        var date = start
        var donations: [Interaction] = []
        for index in 0..<300 {
            date = date.adding(index % 3 == 0 ? 9 * 3_600 : 120)
            let intent = SendMessageIntent(
                conversationIdentifier: "c\(index % 7)", speakableGroupName: index % 7 == 0 ? "G" : nil)
            donations.append(
                Interaction(
                    identifier: "d\(index)", date: date, direction: index % 2 == 0 ? .outgoing : .incoming,
                    intent: intent))
        }
        var before = LearnedWeights.empty
        let (store, _) = try Self.migratedStore(of: donations, in: directory) { path in
            before = try LearnedWeightsTable.read(account: "default", in: try Database(path: path))
            try Self.downgradeToSchema10(path)
            // A reader that cannot migrate the store reads each expert's one share as both.
            let unmigrated = try LearnedWeightsTable.read(account: "default", in: try Database(path: path))
            #expect(unmigrated.personShares == before.personShares)
            #expect(unmigrated.personStaleShares == before.personShares)
        }
        // Migrated, not folded yet: each expert's one share is its stale share too, as the reader above took it.
        let migrated = try LearnedWeightsTable.read(account: "default", in: store.database)
        #expect(migrated.personStaleShares == before.personShares && migrated.groupStaleShares == before.groupShares)
        let always = try SQLiteDonationStore.open(fresh.location)
        try always.setRetention(Retention(maximumAgeDays: 0, idleDays: 0))
        for donation in donations { _ = try always.record(donation) }
        _ = try store.maintain(account: nil)
        let weights = try store.learnedWeights(account: "default")
        #expect(weights == (try always.learnedWeights(account: "default")))
        #expect(weights.personStaleShares != SIMD4(repeating: 0) && weights.personShares != SIMD4(repeating: 0))
        let at = date.adding(60)
        #expect(
            try store.suggestions(account: "default", context: RankingContext(at: at), explain: true)
                == (try always.suggestions(account: "default", context: RankingContext(at: at), explain: true)))
    }

    /// A store written when a conversation showed its latest donation, whatever it said, shows the latest that
    /// describes it once opened (`ShownDonation`), as a store that always had the rule, and goes on so.
    @Test func aSchema8StoreShowsItsLatestDescribingDonation() throws {
        let directory = try TemporaryDirectory("open")
        let start = Timestamp(seconds: 1_790_000_000)
        let juan = Person(customIdentifier: "u-17", displayName: "Juan Chavez")
        func donation(_ conversation: String, at offset: Double, name: String? = nil, recipients: [Person] = [])
            -> Interaction
        {
            Interaction(
                account: "default", identifier: "\(conversation)-\(offset)", date: start.adding(offset),
                direction: recipients.isEmpty && name == nil ? .incoming : .outgoing,
                intent: SendMessageIntent(
                    conversationIdentifier: conversation, speakableGroupName: name,
                    sender: recipients.isEmpty && name == nil ? juan : nil, recipients: recipients))
        }
        let donations = [
            donation("c", at: 0, name: "Climbing", recipients: [juan]), donation("c", at: 10),
            donation("k", at: 5, recipients: [juan]), donation("k", at: 3, name: "Earlier"),
            donation("bare", at: 7),
        ]
        let (store, _) = try Self.migratedStore(of: donations, in: directory, downgrade: Self.downgradeToSchema8)
        let fresh = try TemporaryDirectory("fresh")
        let reference = try SQLiteDonationStore.open(fresh.location)
        try reference.setRetention(Retention(maximumAgeDays: 0, idleDays: 0))
        for donation in donations { _ = try reference.record(donation) }
        let context = RankingContext(at: start.adding(60))
        let migrated = try store.suggestions(account: "default", context: context)
        #expect(migrated == (try reference.suggestions(account: "default", context: context)))
        #expect(migrated.suggestions.first { $0.conversationIdentifier == "c" }?.speakableGroupName == "Climbing")
        // The date it was described at was kept: one more message received with its sender only changes nothing.
        for target in [store, reference] { _ = try target.record(donation("c", at: 20)) }
        let later = try store.suggestions(account: "default", context: context)
        #expect(later == (try reference.suggestions(account: "default", context: context)))
        #expect(later.suggestions.first { $0.conversationIdentifier == "c" }?.recipients.first?.displayName == "Juan Chavez")
    }

    /// A store written before a group came to count only the people other than the user, and a conversation's
    /// people its senders (schema 9, the old fingerprint): its snapshots of `[me, Ann]`, `[Bo, Bo]` and a recipient
    /// of spaces were groups, and so were their conversations; messages from Cy made no conversation Cy's. Migrated
    /// and maintained, it ranks as a store given the same donations now: the snapshots' flags follow the rule, the
    /// conversations and their people are rebuilt, the learned weights folded again; a conversation's later
    /// rebuild (a deletion) keeps it a person.
    @Test func aSchema9StoreCountsOnlyThePeopleOtherThanTheUser() throws {
        let directory = try TemporaryDirectory("open")
        let start = Timestamp(seconds: 1_790_000_000)
        let me = Person(customIdentifier: "me", isMe: true)
        let ann = Person(customIdentifier: "u-1", displayName: "Ann")
        let bo = Person(customIdentifier: "u-2", displayName: "Bo")
        let recipients: [(String, [Person])] = [
            ("with-me", [me, ann]), ("twice", [bo, bo]), ("blank", [ann, Person(displayName: "  ")]), ("alone", [ann]),
            ("pair", [ann, bo]),
        ]
        var donations: [Interaction] = []
        for step in 0..<6 {
            for (index, (conversation, people)) in recipients.enumerated() {
                donations.append(
                    Interaction(
                        account: "default", identifier: "\(conversation)-\(step)",
                        date: start.adding(Double(step * 600 + index)), direction: .outgoing,
                        intent: SendMessageIntent(conversationIdentifier: conversation, recipients: people)))
            }
            // Messages from Cy, donated with their sender only: Cy was nobody's person before.
            donations.append(
                Interaction(
                    account: "default", identifier: "from-cy-\(step)", date: start.adding(Double(step * 600 + 9)),
                    direction: .incoming,
                    intent: SendMessageIntent(conversationIdentifier: "from-cy", sender: Person(customIdentifier: "u-9"))))
        }
        let (store, _) = try Self.migratedStore(of: donations, in: directory) { path in
            // As the code before wrote them: every snapshot of more than one recipient a group, its conversation
            // too; the state and the weights under the fingerprint of then.
            try Self.downgradeToSchema10(path)
            let database = try Database(path: path)
            let old = { (text: String?) in text.map { $0.replacing(";groups:people;senders", with: "") } }
            let policy = try database.setting("ranking.policy")
            let weights = try database.setting(SQLiteDonationStore.weightsSetting)
            try database.execute(
                """
                BEGIN;
                UPDATE snapshots SET is_group = 1
                    WHERE conversation_id IN (SELECT id FROM conversations WHERE conversation_identifier != 'alone');
                UPDATE conversations SET is_group = 1 WHERE conversation_identifier != 'alone';
                DELETE FROM schema_migrations WHERE version >= 10;
                DELETE FROM conversation_people WHERE person_key = 'u-9';
                """)
            let set = try database.uncachedStatement("UPDATE settings SET value = ? WHERE name = ?")
            try set.run([.text(old(policy) ?? ""), .text("ranking.policy")])
            try set.run([.text(old(weights) ?? ""), .text(SQLiteDonationStore.weightsSetting)])
            try database.execute("COMMIT")
        }
        _ = try store.maintain(account: nil, now: start.adding(86_400), budget: .unbounded)
        let fresh = try TemporaryDirectory("fresh")
        let reference = try SQLiteDonationStore.open(fresh.location)
        try reference.setRetention(Retention(maximumAgeDays: 0, idleDays: 0))
        for donation in donations { _ = try reference.record(donation) }
        let context = RankingContext(at: start.adding(86_400))
        let migrated = try store.suggestions(account: "default", context: context, explain: true)
        #expect(migrated == (try reference.suggestions(account: "default", context: context, explain: true)))
        #expect(migrated.suggestions.filter(\.isGroup).map(\.conversationIdentifier) == ["pair"])
        #expect(try store.learnedWeights(account: "default") == reference.learnedWeights(account: "default"))
        let withCy = RankingContext(at: start.adding(86_400), people: ["u-9"])
        let found = try store.suggestions(account: "default", context: withCy)
        #expect(found == (try reference.suggestions(account: "default", context: withCy)))
        #expect(found.suggestions.first?.conversationIdentifier == "from-cy")
        // A rebuild of one conversation (its first donation deleted) reads the migrated flags.
        for target in [store, reference] { _ = try target.delete(.identifier("with-me-0"), account: "default") }
        #expect(try store.suggestions(account: "default", context: context) == reference.suggestions(account: "default", context: context))
    }

    /// A store written before a conversation kept at most `ContentSums.limit` content kinds (the fingerprint
    /// without ";kinds:64"), whose conversation gathered 150: rebuilt, it keeps the 64 a store given the same
    /// donations now keeps, the rows of the others gone, and ranks as that store does.
    @Test func aStoreOfUnboundedKindsLetsAllButTheLimitGo() throws {
        let directory = try TemporaryDirectory("open")
        let start = Timestamp(seconds: 1_790_000_000)
        let donations = (0..<3).map { (step: Int) -> Interaction in
            let kinds = (step * 50..<step * 50 + 50).map { (number: Int) in "org.example.k\(number)" }
            return Interaction(
                account: "default", identifier: "d\(step)", date: start.adding(Double(step * 600)),
                direction: .outgoing,
                intent: SendMessageIntent(
                    conversationIdentifier: "big", recipients: [Person(customIdentifier: "u-1")],
                    contentTypes: kinds))
        }
        let (store, _) = try Self.migratedStore(of: donations, in: directory) { path in
            // The rows of the kinds let go, as the code before kept them (a kept kind's sums and keys copied).
            let database = try Database(path: path)
            let kept = try database.uncachedStatement("SELECT kind FROM conversation_content")
            var keptKinds: Set<String> = []
            while try kept.step() { keptKinds.insert(kept.text(0) ?? "") }
            let copy = try database.uncachedStatement(
                """
                INSERT INTO conversation_content(conversation_id, account, kind, sum, c0, c1, c2, c3)
                SELECT conversation_id, account, ?, sum, c0, c1, c2, c3 FROM conversation_content WHERE kind = ?
                """)
            for number in 0..<150 where !keptKinds.contains("org.example.k\(number)") {
                try copy.run([.text("org.example.k\(number)"), .text("org.example.k100")])
            }
            let policy = try database.setting("ranking.policy")
            try database.uncachedStatement("UPDATE settings SET value = ? WHERE name = 'ranking.policy'")
                .run([.text(policy?.replacing(";kinds:64", with: "") ?? "")])
        }
        let count = { try store.database.statement("SELECT count(*) FROM conversation_content").scalarInt() }
        #expect(try count() == 150)
        _ = try store.maintain(account: nil, now: start.adding(86_400), budget: .unbounded)
        #expect(try count() == Int64(ContentSums.limit))
        let fresh = try TemporaryDirectory("fresh")
        let reference = try SQLiteDonationStore.open(fresh.location)
        try reference.setRetention(Retention(maximumAgeDays: 0, idleDays: 0))
        for donation in donations { _ = try reference.record(donation) }
        for number in [0, 20, 60, 149] {
            let context = RankingContext(at: start.adding(86_400), contentTypes: ["org.example.k\(number)"])
            #expect(
                try store.suggestions(account: "default", context: context, explain: true)
                    == reference.suggestions(account: "default", context: context, explain: true))
        }
    }

    /// An older version's process beside this one (an upgrade with it still running) rebuilds under its own rule,
    /// a step at a time, leaving this version's fingerprint in place until it is done: its pass is noticed (its
    /// bookmark names another policy) and what it rebuilt is redone, where this version took the store for rebuilt.
    @Test func anOlderVersionsPassUnderWayIsRedone() throws {
        let directory = try TemporaryDirectory("open")
        let start = Timestamp(seconds: 1_790_000_000)
        let donations = (0..<6).map { step in
            Interaction(
                account: "default", identifier: "d\(step)", date: start.adding(Double(step * 60)), direction: .outgoing,
                intent: SendMessageIntent(
                    conversationIdentifier: "c\(step % 2)",
                    recipients: [Person(customIdentifier: "me", isMe: true), Person(customIdentifier: "u-\(step % 2)")]))
        }
        let context = RankingContext(at: start.adding(3_600))
        let expected: SuggestionList
        do {
            let store = try SQLiteDonationStore.open(directory.location)
            try store.setRetention(Retention(maximumAgeDays: 0, idleDays: 0))
            for donation in donations { _ = try store.record(donation) }
            expected = try store.suggestions(account: "default", context: context)
            #expect(try !store.owesRebuild())
        }
        // What an older version's step left: a conversation rebuilt under its rule (a group), and its bookmark.
        let database = try Database(path: directory.location.databasePath)
        try database.execute(
            """
            UPDATE conversations SET is_group = 1 WHERE conversation_identifier = 'c0';
            INSERT OR REPLACE INTO settings(name, value) VALUES ('ranking.recompute', 'the policy of a version before@2');
            """)
        let store = try SQLiteDonationStore.open(directory.location)
        #expect(try store.owesRebuild())
        _ = try store.maintain(account: nil, now: start.adding(3_600), budget: .unbounded)
        #expect(try !store.owesRebuild())
        #expect(try store.setting("ranking.recompute") == nil)
        #expect(try store.suggestions(account: "default", context: context) == expected)
    }

    static func export(_ location: StoreLocation) throws -> [String] {
        let store = try SQLiteDonationStore.open(location)
        var lines: [String] = []
        try store.forEachDonation(account: "default") { lines.append($0.jsonLine) }
        return lines
    }
}
