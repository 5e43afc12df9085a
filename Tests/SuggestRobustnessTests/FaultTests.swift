import SuggestCore
import SuggestTestSupport
import Testing

@testable import SuggestSQLiteStore

#if canImport(Glibc)
    import Glibc
#endif

/// A store that cannot be used: every command says so in one line on standard error and exits 1, never crashes,
/// and never "repairs" the store by starting over: the files are left exactly as they were.
@Suite(.serialized) struct FaultTests {
    /// Every command that opens the store, reading or writing.
    static let commands: [[String]] = [
        ["list"], ["list", "--json"], ["export"], ["donate", "--conversation", "c-new"],
        ["donate", "--json"], ["import", "-"], ["delete", "--conversation", "c-1"], ["delete", "--all"],
        ["delete", "--everything"], ["block", "--conversation", "c-1"], ["block", "--list"],
        ["unblock", "--conversation", "c-1"], ["feedback", "--less", "--conversation", "c-1"],
        ["config"], ["config", "--max-age-days", "5"],
        ["share", "--attachment", "public.url=https://example.com"],
    ]

    /// Standard input for the commands that read it.
    static let input = Array(
        #"{"identifier":"f-1","date":"2026-11-29T18:03:00Z","intent":{"conversationIdentifier":"c-new"}}"#.utf8 + [10])

    /// Every file below the store directory, by relative path, with its bytes: what "left as it was" compares.
    /// The `-shm` file counts by its presence only: it is SQLite's index of the write-ahead log, not data, and the
    /// first connection of every process rebuilds it from the log (suggest leaves it in place between commands).
    static func snapshot(_ directory: String) throws -> [String: [UInt8]] {
        var files: [String: [UInt8]] = [:]
        for name in directoryEntries(directory) {
            var info = stat()
            guard lstat(directory + "/" + name, &info) == 0 else { continue }
            if info.st_mode & S_IFMT == S_IFDIR {
                for (inner, bytes) in try snapshot(directory + "/" + name) { files[name + "/" + inner] = bytes }
                files[name + "/"] = []
            } else {
                files[name] = name.hasSuffix("-shm") ? [] : try readFile(directory + "/" + name)
            }
        }
        return files
    }

    /// Runs every command against `store` and expects a one-line error with exit 1 that says `words`, and the
    /// store's files unchanged. Returns the distinct messages, for the record.
    @discardableResult
    static func expectEveryCommandFails(
        store: String, scratch: String, saying words: [String], wrapper: [String] = [],
        commands: [[String]] = FaultTests.commands, sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> Set<String> {
        let before = try snapshot(store)
        var messages: Set<String> = []
        for command in commands {
            let outcome = try Suggest.run(
                command + ["--store", store], input: input, scratch: scratch, wrapper: wrapper, timeout: 60)
            let name = command.joined(separator: " ")
            #expect(outcome.status == 1, "\(name): \(outcome)", sourceLocation: sourceLocation)
            #expect(outcome.errorLines.count == 1, "\(name): \(outcome)", sourceLocation: sourceLocation)
            #expect(
                outcome.error.hasPrefix("suggest \(command[0]): "), "\(name): \(outcome)",
                sourceLocation: sourceLocation)
            #expect(outcome.output == "", "\(name): \(outcome)", sourceLocation: sourceLocation)
            #expect(
                words.contains { outcome.error.contains($0) }, "\(name): expected one of \(words): \(outcome.error)",
                sourceLocation: sourceLocation)
            messages.insert(String(outcome.error.drop { $0 != ":" }.dropFirst(2)))
        }
        #expect(try snapshot(store) == before, "the store's files changed", sourceLocation: sourceLocation)
        return messages
    }

    /// A store directory holding a real store with a small history.
    static func realStore(_ label: String) throws -> StoreFixture {
        let fixture = try StoreFixture(label)
        try fixture.importLines(Donations.lines(Donations.make(count: 300, prefix: "s", conversations: 30, seed: 12)))
        return fixture
    }

    @Test func randomBytesAtTheDatabasePath() throws {
        let fixture = try StoreFixture("fault-garbage")
        #expect(mkdir(fixture.store, 0o700) == 0)
        var random = SeededRandom(seed: 99)
        try writeFile(
            fixture.store + "/suggest.sqlite", (0..<16_384).map { _ in UInt8(truncatingIfNeeded: random.next()) })
        try Self.expectEveryCommandFails(
            store: fixture.store, scratch: fixture.scratch, saying: ["is not a suggest store or is damaged"])
    }

    /// A real store whose pages after the first were overwritten: the header still says SQLite.
    @Test func aDamagedStore() throws {
        let fixture = try Self.realStore("fault-damaged")
        var bytes = try readFile(fixture.store + "/suggest.sqlite")
        var random = SeededRandom(seed: 7)
        for index in 8_192..<bytes.count { bytes[index] = UInt8(truncatingIfNeeded: random.next()) }
        try writeFile(fixture.store + "/suggest.sqlite", bytes)
        try Self.expectEveryCommandFails(
            store: fixture.store, scratch: fixture.scratch, saying: ["is not a suggest store or is damaged"])
    }

    @Test func aTruncatedStore() throws {
        let fixture = try Self.realStore("fault-truncated")
        let bytes = try readFile(fixture.store + "/suggest.sqlite")
        try writeFile(fixture.store + "/suggest.sqlite", Array(bytes.prefix(bytes.count / 3)))
        try Self.expectEveryCommandFails(
            store: fixture.store, scratch: fixture.scratch, saying: ["is not a suggest store or is damaged"])
    }

    /// A store directory whose database another tool wrote with `statements`: every command refuses it, saying one
    /// of `words`, and leaves it as it was.
    static func expectEveryCommandRefusesADatabase(
        _ label: String, written statements: [String], saying words: [String],
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let fixture = try StoreFixture(label)
        #expect(mkdir(fixture.store, 0o700) == 0, sourceLocation: sourceLocation)
        do {
            let foreign = try Database(path: fixture.store + "/suggest.sqlite")
            for statement in statements { try foreign.execute(statement) }
        }
        try expectEveryCommandFails(
            store: fixture.store, scratch: fixture.scratch, saying: words, sourceLocation: sourceLocation)
    }

    @Test func anotherApplicationsDatabase() throws {
        try Self.expectEveryCommandRefusesADatabase(
            "fault-foreign",
            written: ["CREATE TABLE notes(body TEXT); INSERT INTO notes VALUES ('someone else''s data')"],
            saying: ["is a SQLite database but not a suggest store"])
    }

    /// An empty database in UTF-16 is not taken over: a store's blocks grow by SQL's `||`, which in UTF-16 drops the
    /// last byte of an odd length (found by reading SQLite's concatenation, 2026-12-06).
    @Test func anEmptyDatabaseInUTF16() throws {
        // The encoding is fixed once the file has a header: a table made and dropped leaves it empty.
        try Self.expectEveryCommandRefusesADatabase(
            "fault-utf16", written: ["PRAGMA encoding = 'UTF-16le'; CREATE TABLE t(a); DROP TABLE t"],
            saying: ["a suggest store is UTF-8"])
    }

    /// Regression: a database of another application that also keeps a `schema_migrations` table (Rails, Ecto,
    /// golang-migrate all name theirs so) was taken for a suggest store: its journal mode was switched to WAL (its
    /// file changed) and the migration failed with "table schema_migrations has no column named applied_at", or,
    /// with a version recorded, it was called "written by a newer suggest".
    @Test(arguments: [[], ["INSERT INTO schema_migrations VALUES ('20231010123456')"]])
    func anotherApplicationsDatabaseWithSchemaMigrations(_ rows: [String]) throws {
        try Self.expectEveryCommandRefusesADatabase(
            "fault-rails",
            written: [
                "CREATE TABLE schema_migrations(version VARCHAR NOT NULL PRIMARY KEY); "
                    + "CREATE TABLE users(id INTEGER PRIMARY KEY, name TEXT); INSERT INTO users VALUES (1, 'alice')"
            ] + rows,
            saying: ["is a SQLite database but not a suggest store"])
    }

    /// A `schema_migrations` of suggest's very columns, in a database of none of the tables every suggest schema
    /// holds, at a version past this suggest's (a date): another application's, not "written by a newer suggest".
    @Test func anotherApplicationsDatabaseWithSuggestsMigrationsTableAndADatedVersion() throws {
        try Self.expectEveryCommandRefusesADatabase(
            "fault-dated",
            written: [
                "CREATE TABLE schema_migrations(version INTEGER PRIMARY KEY, applied_at REAL NOT NULL); "
                    + "INSERT INTO schema_migrations VALUES (20231201, 0); CREATE TABLE users(id INTEGER PRIMARY KEY)"
            ],
            saying: ["is a SQLite database but not a suggest store"])
    }

    /// The same with every other table of a store by name: the names alone do not make a file suggest's, its
    /// `schema_migrations` must be suggest's too.
    @Test(arguments: [
        "CREATE TABLE schema_migrations(version VARCHAR NOT NULL PRIMARY KEY)",
        "CREATE TABLE schema_migrations(id INTEGER PRIMARY KEY, applied_at REAL NOT NULL)",
    ])
    func anotherApplicationsDatabaseWithSuggestsTableNames(_ migrationsTable: String) throws {
        let fixture = try StoreFixture("fault-rails-names")
        #expect(mkdir(fixture.store, 0o700) == 0)
        do {
            let foreign = try Database(path: fixture.store + "/suggest.sqlite")
            try foreign.execute(migrationsTable)
            for name in Schema.tables.sorted() where name != "schema_migrations" {
                try foreign.execute("CREATE TABLE \(name)(id INTEGER PRIMARY KEY)")
            }
        }
        try Self.expectEveryCommandFails(
            store: fixture.store, scratch: fixture.scratch, saying: ["is a SQLite database but not a suggest store"])
    }

    /// How a store's `schema_migrations` is told from another tool's: by a whole word of its CREATE text.
    @Test func aMigrationsTableIsSuggestsByItsAppliedAtColumn() {
        #expect(
            Schema.mentions(
                "CREATE TABLE schema_migrations(version INTEGER PRIMARY KEY, applied_at REAL NOT NULL)", "applied_at"))
        #expect(Schema.mentions("applied_at", "applied_at"))
        #expect(
            !Schema.mentions(
                #"CREATE TABLE "schema_migrations" ("version" varchar NOT NULL PRIMARY KEY)"#, "applied_at"))
        #expect(!Schema.mentions("CREATE TABLE schema_migrations(version, applied_at_utc)", "applied_at"))
        #expect(!Schema.mentions("CREATE TABLE schema_migrations(version, last_applied_at)", "applied_at"))
        #expect(!Schema.mentions("CREATE TABLE schema_migrations(version, applied_atUTC)", "applied_at"))
    }

    /// The tables a store may hold are read from the migrations' SQL: all of a fresh store's, and no other.
    @Test func theKnownTablesAreThoseOfAFreshStore() throws {
        let fixture = try Self.realStore("fault-tables")
        let database = try Database(path: fixture.store + "/suggest.sqlite")
        let select = try database.statement("SELECT name FROM sqlite_master WHERE type = 'table'")
        try select.reset()
        var names: Set<String> = []
        while try select.step() { if let name = select.text(0) { names.insert(name) } }
        #expect(names == Schema.tables)
    }

    /// A suggest store's migrations table beside tables suggest never makes, at a version suggest knows: not a
    /// store to migrate into.
    @Test func aStoreWithTablesSuggestDoesNotMake() throws {
        let fixture = try Self.realStore("fault-extra-table")
        do {
            let database = try Database(path: fixture.store + "/suggest.sqlite")
            try database.execute("CREATE TABLE invoices(id INTEGER PRIMARY KEY, total REAL)")
        }
        try Self.expectEveryCommandFails(
            store: fixture.store, scratch: fixture.scratch, saying: ["is a SQLite database but not a suggest store"])
    }

    @Test func aStoreWrittenByANewerSuggest() throws {
        let fixture = try Self.realStore("fault-newer")
        do {
            let database = try Database(path: fixture.store + "/suggest.sqlite")
            try database.execute("INSERT INTO schema_migrations(version, applied_at) VALUES (99, 0)")
        }
        try Self.expectEveryCommandFails(
            store: fixture.store, scratch: fixture.scratch, saying: ["written by a newer suggest"])
        // And the store is still whole for the newer version: the row is there, nothing was migrated or dropped.
        let database = try Database(path: fixture.store + "/suggest.sqlite")
        #expect(try database.statement("SELECT MAX(version) FROM schema_migrations").scalarInt() == 99)
        #expect(try database.statement("SELECT SUM(count) FROM donation_blocks").scalarInt() == 300)
    }

    @Test func aStoreThatIsARegularFile() throws {
        let fixture = try StoreFixture("fault-file")
        try writeFile(fixture.store, "not a directory\n")
        try Self.expectEveryCommandFails(
            store: fixture.store, scratch: fixture.scratch, saying: ["is a file, not a directory"])
        #expect(try readFile(fixture.store) == Array("not a directory\n".utf8))
        // A store below a regular file.
        let below = try Suggest.run(["list", "--store", fixture.store + "/inner"], scratch: fixture.scratch)
        #expect(below.status == 1 && below.errorLines.count == 1 && below.error.contains("is a file, not a directory"))
    }

    /// Regression: a directory where the database file belongs was reported as "check that the directory is
    /// writable", which sends the person looking in the wrong place.
    @Test func aDirectoryAtTheDatabasePath() throws {
        let fixture = try StoreFixture("fault-directory")
        #expect(mkdir(fixture.store, 0o700) == 0 && mkdir(fixture.store + "/suggest.sqlite", 0o700) == 0)
        try Self.expectEveryCommandFails(
            store: fixture.store, scratch: fixture.scratch, saying: ["is a directory, not a file"])
    }

    // MARK: Read-only stores

    /// Root ignores permission bits, so a read-only store is made three ways: a read-only bind mount (EROFS, as a
    /// read-only volume), the immutable attribute on the directory and its files (`chattr +i`: no file may be
    /// created in it or changed; the directory alone is not enough, since suggest leaves the write-ahead log and
    /// its index in place between commands, so a write creates no file), and running `suggest` as `nobody`
    /// through `setpriv` in a directory owned by root (EACCES).
    enum ReadOnlyMethod: String, CaseIterable, Sendable {
        case bindMount = "read-only bind mount"
        case immutableDirectory = "chattr +i on the directory and its files"
        case otherUser = "run as nobody"
    }

    @Test(arguments: ReadOnlyMethod.allCases)
    func aReadOnlyStore(_ method: ReadOnlyMethod) throws {
        let fixture = try Self.realStore("fault-readonly")
        try fixture.succeed(["block", "--conversation", "c-2"])
        let listed = try fixture.succeed(["list", "--json", "--at", Donations.at.rfc3339])
        let exported = try fixture.succeed(["export"])
        let share = ["share", "--attachment", "public.url=https://example.com"]
        let shared = try fixture.succeed(share)
        var store = fixture.store
        var wrapper: [String] = []
        var undo: () -> Void = {}
        defer { undo() }
        switch method {
        case .bindMount:
            let mountPoint = fixture.root("readonly")
            guard geteuid() == 0, mkdir(mountPoint, 0o755) == 0,
                runTool("/usr/bin/mount", ["--bind", fixture.store, mountPoint], scratch: fixture.scratch).ok
            else { try Test.cancel("\(method.rawValue): needs root and mount(8)") }
            undo = { runTool("/usr/bin/umount", ["-l", mountPoint], scratch: fixture.scratch) }
            let remount = runTool("/usr/bin/mount", ["-o", "remount,bind,ro", mountPoint], scratch: fixture.scratch)
            guard remount.ok else { try Test.cancel("\(method.rawValue): remount failed: \(remount.output)") }
            store = mountPoint
        case .immutableDirectory:
            let paths = [fixture.store] + directoryEntries(fixture.store).map { fixture.store + "/" + $0 }
            let set = runTool("/usr/bin/chattr", ["+i"] + paths, scratch: fixture.scratch)
            guard geteuid() == 0, set.ok else { try Test.cancel("\(method.rawValue): \(set.output)") }
            undo = { runTool("/usr/bin/chattr", ["-i"] + paths, scratch: fixture.scratch) }
        case .otherUser:
            guard geteuid() == 0, access("/usr/bin/setpriv", X_OK) == 0 else {
                try Test.cancel("\(method.rawValue): needs root and setpriv(1)")
            }
            // nobody may enter every directory on the way and read the files, but write none of them.
            for path in [fixture.root.path, fixture.store, fixture.scratch] { chmod(path, 0o755) }
            chmod(fixture.scratch, 0o777)
            chmod(fixture.store + "/suggest.sqlite", 0o644)
            wrapper = ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
        }
        // `share` without --send or --cancel only reads.
        let writes = Self.commands.filter {
            !["list", "export", "block --list", "config"].contains($0.joined(separator: " "))
                && $0 != ["list", "--json"] && $0.first != "share"
        }
        let messages = try Self.expectEveryCommandFails(
            store: store, scratch: fixture.scratch, saying: ["read-only", "writable"], wrapper: wrapper,
            commands: writes)
        // Reading may fail the same way (SQLite needs to create the -shm file of a WAL database to read it when it
        // is missing, and to write it to rebuild it); if it works, it shows the store as it is.
        for (command, expected) in [
            (["list", "--json", "--at", Donations.at.rfc3339], listed), (["export"], exported), (share, shared),
        ] {
            let outcome = try Suggest.run(command + ["--store", store], scratch: fixture.scratch, wrapper: wrapper)
            if outcome.status == 0 {
                #expect(outcome.output == expected)
            } else {
                #expect(outcome.status == 1 && outcome.errorLines.count == 1, "\(outcome)")
            }
        }
        print("read-only (\(method.rawValue)): \(messages.sorted().joined(separator: " | "))")
        undo()
        undo = {}
        // Writable again: everything is still there.
        #expect(try StoreCheck.count(store: fixture.store) == 300)
        #expect(try fixture.succeed(["export"]) == exported)
    }

    /// A store of the schema before (8), read by a user who may not write it: read as it is, as the version before
    /// read it; every read failed "read-only" after the upgrade, since migration 9 needs a write. So did every read
    /// after an upgrade that changed the policy's fingerprint (its rebuild needs a write too; a probe of the
    /// upgrade found it). The first command that may write migrates and rebuilds it.
    @Test func aStoreOfTheSchemaBeforeIsReadByAUserWhoMayNotWriteIt() throws {
        guard geteuid() == 0, access("/usr/bin/setpriv", X_OK) == 0 else {
            try Test.cancel("needs root and setpriv(1)")
        }
        let fixture = try Self.realStore("fault-readonly-old")
        let list = ["list", "--json", "--at", Donations.at.rfc3339]
        let listed = try fixture.succeed(list)
        let exported = try fixture.succeed(["export"])
        let path = fixture.store + "/suggest.sqlite"
        do {
            // Back to schema 8, leaving the log and its index in place, as a command of that version left them.
            let database = try Database(path: path)
            try database.setCheckpointOnClose(false)
            let staleShares = ["pz", "gz"].flatMap { kind in (0..<4).map { "\(kind)\($0)" } }
            try database.execute(
                "BEGIN; ALTER TABLE conversations DROP COLUMN display_date; "
                    + staleShares.map { "ALTER TABLE learned_weights DROP COLUMN \($0); " }.joined()
                    + "DELETE FROM schema_migrations WHERE version >= 9; "
                    + "UPDATE settings SET value = 'the policy of a version before' WHERE name = 'ranking.policy'; "
                    // Its weights learned under the rule before the stale shares, as such a store's are.
                    + "UPDATE settings SET value = 'the weights of a version before' WHERE name = 'ranking.weights'; "
                    + "COMMIT;")
        }
        for directory in [fixture.root.path, fixture.store, fixture.scratch] { chmod(directory, 0o755) }
        chmod(fixture.scratch, 0o777)
        // The database, its log and the log's index readable by others (SQLite reads a WAL store it may not write
        // only through both).
        for file in directoryEntries(fixture.store) { chmod(fixture.store + "/" + file, 0o644) }
        let nobody = ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
        let exporting = try Suggest.run(
            ["export", "--store", fixture.store], scratch: fixture.scratch, wrapper: nobody)
        #expect(exporting.status == 0 && exporting.output == exported, "\(exporting)")
        // Ranked with each expert's one share of schema 8 as both its fresh and its stale share (the stale shares
        // are learned only once a writer migrates the store): as many suggestions, in the order those weights give.
        let listing = try Suggest.run(list + ["--store", fixture.store], scratch: fixture.scratch, wrapper: nobody)
        #expect(listing.status == 0, "\(listing)")
        #expect(
            listing.output.split(separator: "\"rank\":").count == listed.split(separator: "\"rank\":").count,
            "\(listing)")
        // A write says read-only, whether it reads first (an existing conversation's row, which names a column of
        // schema 9) or not.
        for conversation in ["c-new", "c-1"] {
            let write = try Suggest.run(
                ["donate", "--conversation", conversation, "--store", fixture.store], scratch: fixture.scratch,
                wrapper: nobody)
            #expect(write.status == 1 && write.error.contains("read-only"), "\(write)")
        }
        let version = { () throws -> Int64? in
            try Database(path: path, readOnly: true).statement("SELECT MAX(version) FROM schema_migrations").scalarInt()
        }
        #expect(try version() == 8, "a reader migrated nothing")
        // The first command that may write migrates and rebuilds, and says so before the wait; the next is quiet.
        let upgrading = try Suggest.run(list + ["--store", fixture.store], scratch: fixture.scratch)
        // Folded again, the weights are those of the store before the downgrade, and so is the ranking.
        #expect(upgrading.status == 0 && upgrading.output == listed, "\(upgrading)")
        #expect(upgrading.error.contains("rebuilding the store's state once"), "\(upgrading.error)")
        let after = try Suggest.run(list + ["--store", fixture.store], scratch: fixture.scratch)
        #expect(after.status == 0 && after.output == listed && after.error.isEmpty, "\(after)")
        #expect(try version() == Int64(Schema.latestVersion))
    }

    // MARK: A full disk

    /// A store on a 1 MiB tmpfs: once the disk is full, writes fail with a one-line "full" error and record
    /// nothing; the store still opens, holds what it held, and works again once there is room.
    @Test func aFullDisk() throws {
        let fixture = try StoreFixture("fault-full")
        let disk = try SmallDisk(in: fixture, size: "1m")
        defer { disk.unmount() }
        let store = disk.path + "/store"
        func run(_ arguments: [String], input: [UInt8]? = nil) throws -> ProcessOutcome {
            try Suggest.run(arguments + ["--store", store], input: input, scratch: fixture.scratch)
        }
        let first = Donations.make(count: 300, prefix: "d", conversations: 30, seed: 21)
        #expect(try run(["import", "-", "--quiet"], input: Donations.bytes(first)).status == 0)
        let exported = try run(["export"]).output

        let filled = disk.fill()

        let more = Donations.make(count: 3_000, prefix: "m", conversations: 30, seed: 22)
        var messages: Set<String> = []
        var importFailed = false
        for (arguments, input) in [
            (["import", "-", "--quiet"], Donations.bytes(more)),
            (["donate", "--conversation", "c-full", "--group-name", String(repeating: "x", count: 4_000)], nil),
            (["delete", "--conversation", "c-1"], nil), (["list"], nil), (["export"], nil),
        ] as [([String], [UInt8]?)] {
            let outcome = try run(arguments, input: input)
            // A small write may still fit in pages SQLite already has, and a read may work; a failure must be clean
            // and say what is wrong (even a read fails when SQLite cannot size the -shm file it needs).
            if outcome.status != 0 {
                #expect(outcome.status == 1 && outcome.errorLines.count == 1, "\(arguments[0]): \(outcome)")
                #expect(outcome.error.contains("is full"), "\(arguments[0]): \(outcome)")
                messages.insert(String(outcome.error.drop { $0 != ":" }.dropFirst(2)))
                if arguments[0] == "import" { importFailed = true }
            }
        }
        #expect(importFailed, "an import of 3000 donations fitted on a full disk?")
        // A new store on the full disk fails cleanly too.
        let fresh = try Suggest.run(
            ["donate", "--conversation", "c", "--store", disk.path + "/fresh"], scratch: fixture.scratch)
        #expect(fresh.status == 1 && fresh.errorLines.count == 1 && fresh.error.contains("is full"), "\(fresh)")

        // With room again: nothing was half recorded, the store holds exactly what it held, and it works.
        disk.empty()
        #expect(try run(["export"]).output == exported)
        #expect(try StoreCheck.rankingDifferences(store: store) == [])
        let retried = try run(["import", "-", "--quiet"], input: Donations.bytes(more))
        #expect(retried.status == 0, "\(retried)")
        #expect(try StoreCheck.count(store: store) == 3_300)
        #expect(try StoreCheck.rankingDifferences(store: store) == [])
        print("full disk (\(filled / 1024) KiB filler): \(messages.sorted().joined(separator: " | "))")
    }

    /// Deleting is what a person does when the disk is full and something must go; SQLite needs room in its log for
    /// any deletion, so the store keeps a reserve (`DeletionReserve`) that a deletion failing for a full disk
    /// spends. A 40 MiB tmpfs, a store with a conversation of distinctive names, the disk then filled: the
    /// deletion succeeds and leaves no trace in any file, a donation still fails cleanly, and wiping works too.
    @Test func aDeletionRunsOnAFullDisk() throws {
        let fixture = try StoreFixture("fault-full-delete")
        let disk = try SmallDisk(in: fixture, size: "40m")
        defer { disk.unmount() }
        let store = disk.path + "/store"
        func run(_ arguments: [String], input: [UInt8]? = nil) throws -> ProcessOutcome {
            try Suggest.run(arguments + ["--store", store], input: input, scratch: fixture.scratch)
        }
        let secret = PrivacyTests.secretDonations(
            conversation: "conv-pangolin-9182", prefix: "pangolin", names: ["Pangolin Appreciation Circle"],
            people: ["Wilhelmina Threnody"], start: Donations.start + 1_000, count: 2_000)
        let history = Donations.make(count: 3_000, prefix: "d", conversations: 30, seed: 23) + secret
        #expect(try run(["import", "-", "--quiet"], input: Donations.bytes(history)).status == 0)
        #expect(fileSize(store + "/suggest.sqlite-reserve") == 8 << 20)

        let filled = disk.fill()
        let blocked = try run([
            "donate", "--conversation", "c-new", "--group-name", String(repeating: "x", count: 4_000),
        ])
        #expect(blocked.status == 1 && blocked.error.contains("is full"), "\(blocked)")

        let deleted = try run(["delete", "--conversation", "conv-pangolin-9182"])
        #expect(deleted.status == 0 && deleted.output.hasPrefix("deleted 2000 donations"), "\(deleted)")
        let secrets = ["conv-pangolin-9182", "Pangolin Appreciation Circle", "Wilhelmina Threnody", "pangolin-0"]
        for file in try filesIn(store) {
            for text in secrets where contains(file.bytes, Array(text.utf8)) {
                Issue.record("'\(text)' is still in \(file.name)")
            }
        }
        #expect(try StoreCheck.count(store: store) == 3_000)
        #expect(try StoreCheck.rankingDifferences(store: store) == [])
        let wiped = try run(["delete", "--everything"])
        #expect(wiped.status == 0 && wiped.output == "wiped the store: 3000 donations deleted\n", "\(wiped)")
        print("a deletion on a full disk (\(filled / 1024) KiB filler): \(deleted.output.split(separator: "\n")[0])")
    }

    /// Wiping is the last resort on a full disk, and a store larger than the reserve could not be wiped: one
    /// transaction's log holds every freed page, overwritten (a probe's 21 MB store). Such a wipe goes in steps,
    /// each log cut before the next. A 60 MiB tmpfs, a store of about 20 MB of names, the disk then filled.
    /// Under a low limit of open files, `import` and `eval` succeed or fail with one line (exit 1), never by a
    /// signal: at `ulimit -n 7` or `8`, the thread that reads the input started Dispatch, which found no descriptor
    /// for its events and stopped the process with an illegal instruction, saying nothing; and at 6, now and then,
    /// Dispatch's monitor of its workers found none for `/proc/PID/stat` (a full run beside three other processes).
    /// Below `DispatchPool.fewestDescriptors` both commands now refuse to start, saying why.
    @Test func aLowLimitOfOpenFilesIsAFailureNotACrash() throws {
        let fixture = try StoreFixture("fault-descriptors")
        try fixture.keepEverything()
        let lines = (0..<50).map { #"{"identifier":"f-\#($0)","date":\#(1_796_000_000 + $0),"intent":{"conversationIdentifier":"c-\#($0 % 3)"}}"# }
        let history = fixture.root("history.jsonl")
        try writeFile(history, lines.joined(separator: "\n") + "\n")
        var imported = false
        // From too few to open the store up to enough for the whole import. The child gets only its three standard
        // descriptors: one it inherited from the test process (anything opened without close-on-exec, as Redis
        // sockets were) would count against the limit, and in CI no limit up to 32 left the import room.
        // (Not under a redirection of the loop: bash keeps standard error's saved copy on a high descriptor then.)
        let onlyStandardDescriptors = #"for n in $(ls /proc/$$/fd); do (( n > 2 )) && eval "exec $n>&-"; done"#
        for limit in 5...32 where !imported {
            for command in [["import", history, "--store", fixture.store], ["eval", history]] {
                let outcome = try Suggest.run(
                    command, scratch: fixture.scratch,
                    wrapper: ["/bin/bash", "-c", onlyStandardDescriptors + #"; ulimit -n \#(limit) && exec "$0" "$@""#])
                #expect(outcome.status == 0 || outcome.status == 1, "ulimit -n \(limit), \(command[0]): \(outcome)")
                if outcome.status == 1 { #expect(outcome.errorLines.count == 1, "ulimit -n \(limit): \(outcome)") }
                if command[0] == "import" && outcome.status == 0 { imported = true }
            }
        }
        #expect(imported)
        #expect(try StoreCheck.count(store: fixture.store) == 50)
    }

    /// Under a limit on address space, `import` and `eval` succeed, or fail with one line, never wait for ever nor
    /// die of a signal: where no thread could be started (`ulimit -v 20000`), Dispatch retried the refused thread
    /// every second and the command waited for ever; at 100 MB, each parsing thread's heap of glibc (64 MB of
    /// address space reserved) was refused and the process died (SIGSEGV). The command refuses to start, saying
    /// why, and under a limit all threads share one heap.
    @Test func aLowLimitOfAddressSpaceIsAFailureNotAHangOrACrash() throws {
        let fixture = try StoreFixture("fault-address-space")
        try fixture.keepEverything()
        // Lines with names and people, enough of them to keep both parsing threads busy.
        let lines = (0..<20_000).map { index in
            #"{"date":\#(1_796_000_000 + index),"direction":"outgoing","intent":{"conversationIdentifier":"c-\#(index % 400)","#
                + #""speakableGroupName":"Group \#(index % 400)","recipients":[{"customIdentifier":"p-\#(index % 977)","#
                + #""displayName":"Person \#(index % 977)"},{"customIdentifier":"q-\#(index % 331)","displayName":"#
                + #""Other \#(index % 331)"}],"contentTypes":["public.jpeg"]}}"#
        }
        let history = fixture.root("history.jsonl")
        try writeFile(history, lines.joined(separator: "\n") + "\n")
        for command in [["import", history, "--store", fixture.store], ["eval", history]] {
            let refused = try Suggest.run(
                command, scratch: fixture.scratch, wrapper: ["/bin/sh", "-c", #"ulimit -v 20000 && exec "$0" "$@""#],
                timeout: 60)
            #expect(!refused.timedOut && refused.status == 1, "\(command[0]): \(refused)")
            #expect(refused.errorLines.count == 1 && refused.error.contains("refuses new threads"), "\(refused)")
            let done = try Suggest.run(
                command, scratch: fixture.scratch, wrapper: ["/bin/sh", "-c", #"ulimit -v 100000 && exec "$0" "$@""#],
                timeout: 60)
            #expect(done.status == 0, "\(command[0]) at 100 MB: \(done)")
        }
        #expect(try StoreCheck.count(store: fixture.store) == 20_000)
    }

    /// A limit on file size (`ulimit -f`) that an import runs into is said as such, and the import records nothing:
    /// it was "I/O error on the store ... disk I/O error", which reads as a failing disk, and a server counted it
    /// as a store failure rather than a full one.
    @Test func aLimitOnFileSizeIsSaidAsSuch() throws {
        let fixture = try StoreFixture("fault-file-size")
        try fixture.keepEverything()
        let lines = (0..<20_000).map { index in
            #"{"date":\#(1_796_000_000 + index),"intent":{"conversationIdentifier":"c-\#(index % 700)","#
                + #""speakableGroupName":"Group \#(index % 700)"}}"#
        }
        let history = fixture.root("history.jsonl")
        try writeFile(history, lines.joined(separator: "\n") + "\n")
        let outcome = try Suggest.run(
            ["import", history, "--store", fixture.store], scratch: fixture.scratch,
            wrapper: ["/bin/sh", "-c", #"ulimit -f 1000 && exec "$0" "$@""#])
        #expect(outcome.status == 1 && outcome.errorLines.count == 1, "\(outcome)")
        #expect(outcome.error.contains("limit on file size"), "\(outcome)")
        #expect(try StoreCheck.count(store: fixture.store) == 0)
    }

    /// An import on a disk that fills up records everything and exits 0, or records nothing and says so, whatever
    /// room is left: with room for its log but not for the database file's growth, it was recorded whole, then
    /// exited 1 saying "nothing was changed" (its checkpoint failed after the commit), and a retry recorded the
    /// lines without an identifier twice.
    @Test func anImportOnAFillingDiskIsAllOrNothingAsItSays() throws {
        let fixture = try StoreFixture("fault-full-import")
        let disk = try SmallDisk(in: fixture, size: "20m")
        defer { disk.unmount() }
        let store = disk.path + "/store"
        let lines = (0..<5_000).map { index in
            #"{"date":\#(1_796_000_000 + index),"direction":"outgoing","intent":{"conversationIdentifier":"c-\#(index % 50)","speakableGroupName":"Group \#(index)"}}"#
        }.joined(separator: "\n") + "\n"
        for kilobytes in stride(from: 128, through: 2_560, by: 128) {
            removeTree(store)
            #expect(try Suggest.run(["config", "--max-age-days", "0", "--store", store], scratch: fixture.scratch).status == 0)
            disk.fill(leaving: kilobytes << 10)
            let imported = try Suggest.run(["import", "-", "--quiet", "--store", store], input: Array(lines.utf8), scratch: fixture.scratch)
            disk.empty()
            let count = try StoreCheck.count(store: store)
            if imported.status == 0 {
                #expect(count == 5_000, "\(kilobytes) KB free: \(imported)")
                #expect(imported.error.isEmpty || imported.error.contains("do not import them again"), "\(imported)")
            } else {
                #expect(count == 0 && imported.error.contains("nothing was changed"), "\(kilobytes) KB free: \(count) recorded, \(imported)")
            }
        }
    }

    @Test func aStoreLargerThanTheReserveIsWipedOnAFullDisk() throws {
        let fixture = try StoreFixture("fault-full-wipe")
        let disk = try SmallDisk(in: fixture, size: "60m")
        defer { disk.unmount() }
        let store = disk.path + "/store"
        let donations = (0..<5_000).map { index in
            Interaction(
                identifier: "w-\(index)", date: Timestamp(seconds: Donations.start + Double(index)),
                direction: .outgoing,
                intent: SendMessageIntent(
                    conversationIdentifier: "conv-okapi-\(index % 20)",
                    speakableGroupName: "Okapi \(index) " + String(repeating: "x", count: 3_000)))
        }
        let imported = try Suggest.run(
            ["import", "-", "--quiet", "--store", store], input: Donations.bytes(donations), scratch: fixture.scratch)
        #expect(imported.status == 0, "\(imported)")
        #expect(fileSize(store + "/suggest.sqlite") > 16 << 20)
        _ = disk.fill()
        let wiped = try Suggest.run(["delete", "--everything", "--store", store], scratch: fixture.scratch)
        #expect(wiped.status == 0 && wiped.output == "wiped the store: 5000 donations deleted\n", "\(wiped)")
        #expect(try StoreCheck.count(store: store) == 0)
        for file in try filesIn(store) where contains(file.bytes, Array("conv-okapi".utf8)) {
            Issue.record("a wiped name is still in \(file.name)")
        }
        // With a few MB free, far less than the file's size, the next command shrinks the emptied file: the room a
        // rewrite needs is the pages still used, not the file (which kept the debt for ever).
        disk.free(4 << 20)
        #expect(try Suggest.run(["list", "--store", store], scratch: fixture.scratch).status == 0)
        #expect(fileSize(store + "/suggest.sqlite") < 1 << 20)
        #expect(access(store + "/suggest.sqlite-rewrite", F_OK) != 0)
    }

    /// A disk filled by imports, the last one recorded but its checkpoint refused: its commit stays in the log
    /// until the database file can grow to take it, and no log can be started over before. The wipe's steps could
    /// not cut the log, so the wipe stopped part-way (57,000 of 154,000 donations, by hand) saying "nothing was
    /// changed". It now copies the log first, in the reserve's room.
    @Test func aStoreWhoseImportsFilledTheDiskIsWipedWhole() throws {
        let fixture = try StoreFixture("fault-full-wipe-imports")
        let disk = try SmallDisk(in: fixture, size: "40m")
        defer { disk.unmount() }
        let store = disk.path + "/store"
        var recorded = 0
        var checkpointRefused = false
        for batch in 0..<60 {
            let donations = (0..<2_000).map { index in
                let number = batch * 2_000 + index
                return Interaction(
                    identifier: "f-\(number)", date: Timestamp(seconds: Donations.start + Double(number) / 100),
                    direction: .outgoing,
                    intent: SendMessageIntent(
                        conversationIdentifier: "conv-okapi-\(index % 500)",
                        speakableGroupName: String(repeating: "N", count: 200) + String(number)))
            }
            let imported = try Suggest.run(
                ["import", "-", "--quiet", "--store", store], input: Donations.bytes(donations),
                scratch: fixture.scratch)
            guard imported.status == 0 else { break }
            recorded += donations.count
            checkpointRefused = checkpointRefused || imported.error.contains("the checkpoint after them failed")
        }
        #expect(checkpointRefused, "no import left its commit in the log: the disk never filled as it should")
        let wiped = try Suggest.run(["delete", "--everything", "--store", store], scratch: fixture.scratch)
        #expect(wiped.status == 0 && wiped.output == "wiped the store: \(recorded) donations deleted\n", "\(wiped)")
        #expect(try StoreCheck.count(store: store) == 0)
    }
}

/// A small tmpfs in a fixture's root for one test (`defer { disk.unmount() }`): a disk to fill. Needs root and
/// mount(8); the test is cancelled, saying why, where it cannot have one.
final class SmallDisk {
    let path: String
    private let scratch: String

    init(in fixture: StoreFixture, size: String) throws {
        path = fixture.root("disk")
        scratch = fixture.scratch
        guard geteuid() == 0, mkdir(path, 0o755) == 0,
            runTool("/usr/bin/mount", ["-t", "tmpfs", "-o", "size=\(size)", "tmpfs", path], scratch: scratch).ok
        else { try Test.cancel("a full disk needs root and mount(8) for a small tmpfs") }
    }

    func unmount() { runTool("/usr/bin/umount", ["-l", path], scratch: scratch) }

    /// Fills what is left of the disk with a file of its own.
    /// - Returns: how many bytes it took.
    func fill() -> Int {
        var filled = 0
        let filler = open(path + "/filler", O_WRONLY | O_CREAT, 0o644)
        let block = [UInt8](repeating: 0x55, count: 4_096)
        while block.withUnsafeBytes({ write(filler, $0.baseAddress, $0.count) }) > 0 { filled += 4_096 }
        close(filler)
        return filled
    }

    /// Fills the disk but for `bytes`.
    func fill(leaving bytes: Int) {
        var disk = statvfs()
        guard statvfs(path, &disk) == 0 else { return }
        let available = Int(disk.f_bavail) * Int(disk.f_frsize)
        let filler = open(path + "/filler", O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        let block = [UInt8](repeating: 0x55, count: 4_096)
        var left = available - bytes
        while left >= block.count, block.withUnsafeBytes({ write(filler, $0.baseAddress, $0.count) }) > 0 { left -= block.count }
        close(filler)
    }

    /// Gives back what `fill()` took.
    func empty() { unlink(path + "/filler") }

    /// Gives back `bytes` of what `fill()` took.
    func free(_ bytes: Int) {
        var info = stat()
        guard stat(path + "/filler", &info) == 0 else { return }
        truncate(path + "/filler", max(0, info.st_size - off_t(bytes)))
    }
}
