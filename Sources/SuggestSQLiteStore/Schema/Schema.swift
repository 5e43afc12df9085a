/// The store's schema, as numbered migrations recorded in the database itself (`schema_migrations`).
///
/// A migration runs once, inside the write transaction that records it. A store whose newest recorded migration
/// is above `Schema.latestVersion` was written by a newer `suggest` and is refused rather than guessed at.
enum Schema {
    /// Each migration's SQL, then the Swift code it needs (`after`), if any, in the same transaction.
    static let migrations: [(version: Int, sql: String, after: (@Sendable (Database) throws -> Void)?)] = [
        (
            1,
            """
            CREATE TABLE conversations(
                id INTEGER PRIMARY KEY,
                account TEXT NOT NULL,
                conversation_identifier TEXT NOT NULL,
                latest_snapshot_id INTEGER,
                latest_date REAL NOT NULL,
                service_name TEXT,
                c0 REAL NOT NULL, c1 REAL NOT NULL, c2 REAL NOT NULL, c3 REAL NOT NULL,
                content_total REAL NOT NULL,
                last_date REAL NOT NULL,
                last_outgoing_date REAL,
                outgoing_count INTEGER NOT NULL,
                incoming_count INTEGER NOT NULL,
                engaged_count INTEGER NOT NULL,
                is_group INTEGER NOT NULL,
                UNIQUE(account, conversation_identifier));
            -- One index per decay channel: the sorted access of the threshold algorithm.
            CREATE INDEX conversations_by_c0 ON conversations(account, c0 DESC);
            CREATE INDEX conversations_by_c1 ON conversations(account, c1 DESC);
            CREATE INDEX conversations_by_c2 ON conversations(account, c2 DESC);
            CREATE INDEX conversations_by_c3 ON conversations(account, c3 DESC);

            -- What an intent said of its conversation (names, people, images), once per distinct version:
            -- a rename adds a snapshot, repeated messages share one.
            CREATE TABLE snapshots(
                id INTEGER PRIMARY KEY,
                conversation_id INTEGER NOT NULL,
                body TEXT NOT NULL,
                is_group INTEGER NOT NULL,
                UNIQUE(conversation_id, body));

            CREATE TABLE donations(
                id INTEGER PRIMARY KEY,
                account TEXT NOT NULL,
                identifier TEXT NOT NULL,
                conversation_id INTEGER NOT NULL,
                snapshot_id INTEGER NOT NULL,
                group_identifier TEXT,
                date REAL NOT NULL,
                direction INTEGER NOT NULL,
                engaged INTEGER NOT NULL,
                content_types TEXT);
            CREATE UNIQUE INDEX donations_by_identifier ON donations(account, identifier);
            CREATE INDEX donations_by_conversation ON donations(conversation_id);
            CREATE INDEX donations_by_date ON donations(date);
            CREATE INDEX donations_by_group ON donations(account, group_identifier) WHERE group_identifier IS NOT NULL;

            -- Decayed sums per content kind (public.image, public.url, ...), for context-aware ranking: read by
            -- random access only, as shares of conversations.content_total.
            CREATE TABLE conversation_content(
                conversation_id INTEGER NOT NULL,
                account TEXT NOT NULL,
                kind TEXT NOT NULL,
                sum REAL NOT NULL,
                PRIMARY KEY(conversation_id, kind)) WITHOUT ROWID;

            -- Who takes part in each conversation, by every key a caller may name them with.
            CREATE TABLE conversation_people(
                account TEXT NOT NULL,
                person_key TEXT NOT NULL,
                conversation_id INTEGER NOT NULL,
                PRIMARY KEY(account, person_key, conversation_id)) WITHOUT ROWID;
            CREATE INDEX conversation_people_by_conversation ON conversation_people(conversation_id);

            -- The person's choices about a conversation; they outlive its donations (a block survives deletion).
            CREATE TABLE preferences(
                account TEXT NOT NULL,
                conversation_identifier TEXT NOT NULL,
                blocked INTEGER NOT NULL DEFAULT 0,
                less_feedback INTEGER NOT NULL DEFAULT 0,
                PRIMARY KEY(account, conversation_identifier)) WITHOUT ROWID;

            CREATE TABLE settings(name TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
            """,
            nil
        ),
        (
            2,
            // Donations are found by identifier and snapshots by body through 64-bit keys (`StableHash`): an index
            // of integers is a third of the size of one of the strings (at 10M donations, 200 MB against 600 MB,
            // which no longer fits the page cache of an import), and its searches compare integers. The keys are
            // not unique: every look-up compares the strings too, and the writer checks before it inserts.
            """
            ALTER TABLE donations ADD COLUMN identifier_key INTEGER NOT NULL DEFAULT 0;
            UPDATE donations SET identifier_key = suggest_key(account, identifier);
            DROP INDEX donations_by_identifier;
            CREATE INDEX donations_by_identifier_key ON donations(identifier_key);

            ALTER TABLE snapshots RENAME TO snapshots_before_keys;
            CREATE TABLE snapshots(
                id INTEGER PRIMARY KEY,
                conversation_id INTEGER NOT NULL,
                body TEXT NOT NULL,
                is_group INTEGER NOT NULL,
                body_key INTEGER NOT NULL);
            INSERT INTO snapshots(id, conversation_id, body, is_group, body_key)
                SELECT id, conversation_id, body, is_group, suggest_key(body) FROM snapshots_before_keys;
            DROP TABLE snapshots_before_keys;
            CREATE INDEX snapshots_by_body_key ON snapshots(conversation_id, body_key);
            """,
            nil
        ),
        (
            3,
            // Deletion by group identifier finds its conversations here, then their donations through
            // `donations_by_conversation`, instead of through an index of every donation's group identifier: a
            // store has a few of these rows per conversation against one index entry per donation, and building
            // that index was a ninth of a 10M import.
            """
            CREATE TABLE conversation_groups(
                account TEXT NOT NULL,
                group_identifier TEXT NOT NULL,
                conversation_id INTEGER NOT NULL,
                PRIMARY KEY(account, group_identifier, conversation_id)) WITHOUT ROWID;
            CREATE INDEX conversation_groups_by_conversation ON conversation_groups(conversation_id);
            INSERT OR IGNORE INTO conversation_groups(account, group_identifier, conversation_id)
                SELECT account, group_identifier, conversation_id FROM donations WHERE group_identifier IS NOT NULL;
            DROP INDEX donations_by_group;
            """,
            nil
        ),
        (
            4,
            // Donations in blocks of one conversation's consecutive donations (`DonationBlock`, `BlockLog`) instead
            // of a row each with three index entries: at 10M donations, inserting the rows and building their
            // indexes at the end of an import took about 4 µs a donation, more than the 200,000 a second an import
            // is meant to reach leave for everything. Deletion by conversation, group or date reads a conversation's
            // few blocks; the identifiers are found through `IdentifierIndex`.
            """
            CREATE TABLE donation_blocks(
                id INTEGER PRIMARY KEY,
                conversation_id INTEGER NOT NULL,
                -- The sequence number of its first donation when it was created (a lower bound of all of them).
                first_sequence INTEGER NOT NULL,
                oldest_date REAL NOT NULL,
                count INTEGER NOT NULL,
                donations BLOB NOT NULL);
            CREATE INDEX donation_blocks_by_conversation ON donation_blocks(conversation_id);
            CREATE INDEX donation_blocks_by_date ON donation_blocks(oldest_date);
            -- The order `export` reads blocks in, to merge them back into recording order.
            CREATE INDEX donation_blocks_by_sequence ON donation_blocks(first_sequence);
            CREATE TABLE donation_identifiers(bucket INTEGER PRIMARY KEY, entries BLOB NOT NULL);
            """,
            { database in try BlockMigration.run(database) }
        ),
        (
            5,
            // What migration 4 moved into blocks, with its indexes. (Its own step, so that the SQL names every table
            // a fresh store has: `tables` reads them there.)
            "DROP TABLE donations;",
            nil
        ),
        (
            6,
            // Sorted lists for the selective parts of a query (`SortedListScope`): a service's conversations in the
            // order of each channel, and the conversations that received a content kind, with their channel keys
            // beside their sum, in that order. Without them, a query for a rare service or a kind of content walked
            // most of an account's conversations before it could stop (90 ms where a plain list takes 2).
            """
            CREATE INDEX conversations_by_service_c0 ON conversations(account, service_name, c0 DESC);
            CREATE INDEX conversations_by_service_c1 ON conversations(account, service_name, c1 DESC);
            CREATE INDEX conversations_by_service_c2 ON conversations(account, service_name, c2 DESC);
            CREATE INDEX conversations_by_service_c3 ON conversations(account, service_name, c3 DESC);
            ALTER TABLE conversation_content ADD COLUMN c0 REAL NOT NULL DEFAULT -9e999;
            ALTER TABLE conversation_content ADD COLUMN c1 REAL NOT NULL DEFAULT -9e999;
            ALTER TABLE conversation_content ADD COLUMN c2 REAL NOT NULL DEFAULT -9e999;
            ALTER TABLE conversation_content ADD COLUMN c3 REAL NOT NULL DEFAULT -9e999;
            UPDATE conversation_content SET (c0, c1, c2, c3) =
                (SELECT c.c0, c.c1, c.c2, c.c3 FROM conversations c WHERE c.id = conversation_content.conversation_id);
            CREATE INDEX conversation_content_by_c0 ON conversation_content(account, kind, c0 DESC);
            CREATE INDEX conversation_content_by_c1 ON conversation_content(account, kind, c1 DESC);
            CREATE INDEX conversation_content_by_c2 ON conversation_content(account, kind, c2 DESC);
            CREATE INDEX conversation_content_by_c3 ON conversation_content(account, kind, c3 DESC);
            """,
            nil
        ),
        (
            7,
            // Each account's learned weights (`LearnedWeights`), written in the transaction of every donation: per
            // channel the logarithm of the account's mass for people (`pt`) and groups (`gt`), the learned shares
            // (`ps`, `gs`), and how many sends they were learned from. `fold` is 1 when they must be folded again
            // from the account's donations (an expiry that stopped part-way, a write by a store with fixed
            // weights, this upgrade): every existing account starts so, and `maintain` folds it.
            """
            CREATE TABLE learned_weights(
                account TEXT PRIMARY KEY,
                pt0 REAL NOT NULL, pt1 REAL NOT NULL, pt2 REAL NOT NULL, pt3 REAL NOT NULL,
                gt0 REAL NOT NULL, gt1 REAL NOT NULL, gt2 REAL NOT NULL, gt3 REAL NOT NULL,
                ps0 REAL NOT NULL, ps1 REAL NOT NULL, ps2 REAL NOT NULL, ps3 REAL NOT NULL,
                gs0 REAL NOT NULL, gs1 REAL NOT NULL, gs2 REAL NOT NULL, gs3 REAL NOT NULL,
                targets INTEGER NOT NULL,
                fold INTEGER NOT NULL DEFAULT 0) WITHOUT ROWID;
            CREATE INDEX learned_weights_to_fold ON learned_weights(account) WHERE fold = 1;
            INSERT INTO learned_weights(
                account, pt0, pt1, pt2, pt3, gt0, gt1, gt2, gt3, ps0, ps1, ps2, ps3, gs0, gs1, gs2, gs3, targets, fold)
                SELECT DISTINCT account, -9e999, -9e999, -9e999, -9e999, -9e999, -9e999, -9e999, -9e999,
                    0, 0, 0, 0, 0, 0, 0, 0, 0, 1
                FROM conversations;
            """,
            nil
        ),
        (
            8,
            // The sorted lists of all an account's conversations are read by merging the lists of its services
            // (`StoredRankingSource`), which hold the same rows: the four indexes of all of them cost every donation
            // four more index entries moved, about a quarter of a donation's pages and time, and answered nothing
            // the service indexes cannot.
            """
            DROP INDEX conversations_by_c0;
            DROP INDEX conversations_by_c1;
            DROP INDEX conversations_by_c2;
            DROP INDEX conversations_by_c3;
            """,
            nil
        ),
        (
            9,
            // `latest_snapshot_id` is the snapshot a conversation is shown by (`ShownDonation`): the latest donation
            // that describes it, dated here (NULL while none has), else its latest.
            "ALTER TABLE conversations ADD COLUMN display_date REAL;",
            { database in try ShownSnapshotMigration.run(database) }
        ),
        (
            10,
            // Each snapshot's `is_group` under the rule that leaves out the user, repeats and nameless recipients;
            // the conversations follow with the policy's new fingerprint.
            "",
            { database in try GroupFlagMigration.run(database) }
        ),
        (
            11,
            // Each expert's weight while its kind's mass is stale (`LearnedWeights.personStaleShares`,
            // `groupStaleShares`): `pz` for people, `gz` for groups, starting as each expert's one share of before,
            // so that an account ranks as it did until it is folded again under the policy's new fingerprint
            // (each account by the first command or server upkeep that uses it; a reader that may not write never).
            """
            ALTER TABLE learned_weights ADD COLUMN pz0 REAL NOT NULL DEFAULT 0;
            ALTER TABLE learned_weights ADD COLUMN pz1 REAL NOT NULL DEFAULT 0;
            ALTER TABLE learned_weights ADD COLUMN pz2 REAL NOT NULL DEFAULT 0;
            ALTER TABLE learned_weights ADD COLUMN pz3 REAL NOT NULL DEFAULT 0;
            ALTER TABLE learned_weights ADD COLUMN gz0 REAL NOT NULL DEFAULT 0;
            ALTER TABLE learned_weights ADD COLUMN gz1 REAL NOT NULL DEFAULT 0;
            ALTER TABLE learned_weights ADD COLUMN gz2 REAL NOT NULL DEFAULT 0;
            ALTER TABLE learned_weights ADD COLUMN gz3 REAL NOT NULL DEFAULT 0;
            UPDATE learned_weights SET pz0 = ps0, pz1 = ps1, pz2 = ps2, pz3 = ps3, gz0 = gs0, gz1 = gs1, gz2 = gs2, gz3 = gs3;
            """,
            nil
        ),
        (
            12,
            // New identifier entries go to recent rows of `donation_identifiers`, past its buckets, and are merged
            // into the buckets a range at a time (`IdentifierIndex`). Nothing to change in a store: the version
            // keeps a suggest that reads the buckets alone from opening it, and missing duplicates.
            "",
            nil
        ),
    ]

    static var latestVersion: Int { migrations.last?.version ?? 0 }

    /// The oldest schema this version reads without migrating it, for a process that may not write the store:
    /// migration 9 added a column only the writer uses; migration 11 the stale shares of the learned weights, for
    /// which such a reader takes each expert's one share (`LearnedWeightsTable.read`).
    static let oldestReadableVersion = 8

    /// Every table the migrations up to `latestVersion` create and do not drop, and `schema_migrations`: read from
    /// their SQL, so that a new migration's tables count without a list to keep up to date. A database with other tables (besides
    /// SQLite's own `sqlite_…`) at a version this suggest knows is not a suggest store.
    static let tables: Set<String> = tables(atVersion: latestVersion)

    /// The tables every schema from the first to `latestVersion` holds, `schema_migrations` aside. A database at a
    /// version past `latestVersion` that holds none of them is no newer store: it is another application's, whose
    /// `schema_migrations` has our columns and versions of its own (dates, as Rails writes them).
    static let lastingTables = tables(atVersion: 1).intersection(tables).subtracting(["schema_migrations"])

    /// The tables of a store at `version`: those its migrations create and do not drop, and `schema_migrations`.
    static func tables(atVersion version: Int) -> Set<String> {
        // A scan of the SQL's bytes: `firstRange(of:)` would load the generic string-search machinery at start
        // (a tenth of a millisecond of type metadata on every command).
        var names: Set<String> = ["schema_migrations"]
        let create = Array("CREATE TABLE ".utf8)
        let drop = Array("DROP TABLE ".utf8)
        let ifNotExists = Array("IF NOT EXISTS ".utf8)
        let ifExists = Array("IF EXISTS ".utf8)
        for migration in migrations where migration.version <= version {
            let sql = Array(migration.sql.utf8)
            var offset = 0
            while offset < sql.count {
                let creates = matches(create, in: sql, at: offset)
                guard creates || matches(drop, in: sql, at: offset) else {
                    offset += 1
                    continue
                }
                offset += creates ? create.count : drop.count
                let condition = creates ? ifNotExists : ifExists
                if matches(condition, in: sql, at: offset) { offset += condition.count }
                let start = offset
                while offset < sql.count && isIdentifier(sql[offset]) { offset += 1 }
                let name = String(decoding: sql[start..<offset], as: UTF8.self)
                if creates { names.insert(name) } else { names.remove(name) }
            }
        }
        return names
    }

    /// Whether `sql` names `identifier` as a whole word (`applied_at`, not `applied_at_utc`), compared byte for byte.
    static func mentions(_ sql: String, _ identifier: String) -> Bool {
        let sql = Array(sql.utf8)
        let word = Array(identifier.utf8)
        for offset in sql.indices where matches(word, in: sql, at: offset) {
            let before = offset == 0 || !isIdentifier(sql[offset - 1])
            let after = offset + word.count == sql.count || !isIdentifier(sql[offset + word.count])
            if before && after { return true }
        }
        return false
    }

    /// A byte that can continue an SQL identifier: `applied_atUTC` is one word, not `applied_at` and more.
    private static func isIdentifier(_ byte: UInt8) -> Bool {
        (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")) || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
            || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || byte == UInt8(ascii: "_")
    }

    private static func matches(_ word: [UInt8], in sql: [UInt8], at offset: Int) -> Bool {
        offset + word.count <= sql.count && !word.indices.contains { sql[offset + $0] != word[$0] }
    }
}
