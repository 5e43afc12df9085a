import SuggestSQLiteStore
import SuggestTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Where the store is (issue 13, item 7): an empty name is a usage error, only the store's own directory is
/// created, the XDG rules for `HOME` and `XDG_DATA_HOME` hold, and reading a store that is not there creates
/// nothing.
@Suite struct StoreLocationTests {
    let root: TemporaryDirectory
    var scratch: String { root("scratch") }

    init() throws {
        root = try TemporaryDirectory("location")
        mkdir(root("scratch"), 0o755)
    }

    /// Runs `suggest` from `scratch` as its working directory, with `HOME` and the other variables as given
    /// (`nil`: unset).
    func run(_ arguments: [String], variables: [String: String?] = [:]) throws -> ProcessOutcome {
        var script = #"cd "$SCRATCH_DIRECTORY" && exec env"#
        for (name, value) in variables.sorted(by: { $0.key < $1.key }) {
            script += value.map { " \(name)='\($0)'" } ?? " -u \(name)"
        }
        script += #" "$0" "$@""#
        return try Suggest.run(
            arguments, scratch: scratch, environment: ["SCRATCH_DIRECTORY": scratch],
            wrapper: ["/bin/sh", "-c", script])
    }

    @Test(arguments: [
        (["list", "--store", ""], [String: String?]()), (["donate", "--conversation", "c", "--store="], [:]),
        (["list"], ["SUGGEST_STORE": ""]), (["donate", "--conversation", "c"], ["SUGGEST_STORE": ""]),
    ])
    func anEmptyStoreNameIsAUsageError(_ arguments: [String], _ variables: [String: String?]) throws {
        let outcome = try run(arguments, variables: variables)
        #expect(outcome.status == 64 && outcome.errorLines.count == 1, "\(outcome)")
        #expect(outcome.error.contains("empty"), "\(outcome)")
        // Not the default store either.
        #expect(!fileExists(scratch + "/.local"))
    }

    @Test func onlyTheStoresOwnDirectoryIsCreated() throws {
        let deep = root("nonexistent") + "/a/b"
        let outcome = try run(["donate", "--conversation", "c", "--store", deep])
        #expect(outcome.status == 1 && outcome.errorLines.count == 1, "\(outcome)")
        #expect(outcome.error.contains("\(root("nonexistent"))/a does not exist"), "\(outcome)")
        #expect(!fileExists(root("nonexistent")))
        // One level is fine, relative too.
        #expect(try run(["donate", "--conversation", "c", "--store", root("one")]).status == 0)
        #expect(try run(["donate", "--conversation", "c", "--store", "relative"]).status == 0)
        #expect(fileExists(scratch + "/relative/suggest.sqlite"))
        #expect(
            try run(["donate", "--conversation", "c"], variables: ["SUGGEST_STORE": root("one") + "/x/y"]).status == 1)
        #expect(!fileExists(root("one") + "/x"))
    }

    @Test func withoutHomeThereIsNoDefaultStore() throws {
        for variables: [String: String?] in [
            ["HOME": nil], ["HOME": ""], ["HOME": "relative"], ["HOME": nil, "XDG_DATA_HOME": "rel"],
        ] {
            let outcome = try run(["donate", "--conversation", "c"], variables: variables)
            #expect(
                outcome.status == 64 && outcome.error.contains("give --store DIR or set SUGGEST_STORE"), "\(outcome)")
        }
        #expect(
            directoryEntries(scratch).filter { !$0.hasPrefix("in-") && !$0.hasPrefix("out-") && !$0.hasPrefix("err-") }
                == [])
        // `--store` needs no HOME.
        #expect(try run(["donate", "--conversation", "c", "--store", root("s")], variables: ["HOME": nil]).status == 0)
    }

    @Test func aRelativeDataHomeIsIgnoredAndAnAbsoluteOneUsed() throws {
        let home = root("home")
        mkdir(home, 0o755)
        let relative = try run(["config", "--idle-days", "1"], variables: ["HOME": home, "XDG_DATA_HOME": "data"])
        #expect(
            relative.status == 0 && relative.output.contains("store         \(home)/.local/share/suggest\n"),
            "\(relative)")
        #expect(!fileExists(scratch + "/data"))
        var info = stat()
        #expect(stat(home + "/.local/share/suggest", &info) == 0 && info.st_mode & 0o777 == 0o700)
        // The default location makes the directories XDG asks for: XDG_DATA_HOME itself and suggest in it.
        let absolute = try run(
            ["config", "--idle-days", "1"], variables: ["HOME": home, "XDG_DATA_HOME": root("xdg")])
        #expect(
            absolute.status == 0 && absolute.output.contains("store         \(root("xdg"))/suggest\n"), "\(absolute)")
        // But not a missing HOME.
        let missing = try run(["config", "--idle-days", "1"], variables: ["HOME": root("gone")])
        #expect(missing.status == 1 && missing.error.contains("\(root("gone")) does not exist"), "\(missing)")
        #expect(!fileExists(root("gone")))
    }

    /// Commands that read or remove say "no such store" (exit 1) and create nothing.
    @Test(arguments: [
        ["list"], ["list", "--json"], ["export"], ["block", "--list"], ["unblock", "--conversation", "c"],
        ["delete", "--all"], ["delete", "--conversation", "c"], ["config"], ["config", "--json"],
        ["feedback", "--reset", "--conversation", "c"],
        ["share", "--attachment", "public.url=https://example.com", "--pick", "1", "--send"],
    ])
    func readingAStoreThatIsNotThereCreatesNothing(_ command: [String]) throws {
        let missing = root("missing")
        let outcome = try run(command + ["--store", missing])
        #expect(outcome.status == 1 && outcome.errorLines.count == 1, "\(outcome)")
        #expect(
            outcome.error
                == "suggest \(command[0]): no such store: \(missing) holds no suggest store; record a donation first ('suggest donate' or 'suggest import') or check --store\n"
        )
        #expect(!fileExists(missing))
        // The default location likewise.
        let byDefault = try run(command, variables: ["HOME": scratch])
        #expect(byDefault.status == 1 && byDefault.error.contains("no such store"), "\(byDefault)")
        #expect(!fileExists(scratch + "/.local"))
    }

    /// An empty database file with no log is no store either (a first write killed before it wrote): `list`
    /// made a whole store in it. One whose first commit is still in its log is a store.
    @Test func anEmptyDatabaseFileIsNoStoreToRead() throws {
        let store = root("empty-file")
        #expect(mkdir(store, 0o700) == 0)
        let file = creat(store + "/suggest.sqlite", 0o600)
        #expect(file >= 0)
        close(file)
        let outcome = try run(["list", "--store", store])
        #expect(outcome.status == 1 && outcome.error.contains("holds an empty suggest.sqlite, no store"), "\(outcome)")
        var info = stat()
        #expect(stat(store + "/suggest.sqlite", &info) == 0 && info.st_size == 0)
        #expect(!fileExists(store + "/suggest.sqlite-wal"))
        let donated = try run(["donate", "--conversation", "c", "--store", store])
        #expect(donated.status == 0, "\(donated)")
        #expect(try run(["list", "--store", store]).status == 0)
    }

    /// The commands that record something create the store.
    @Test(arguments: [
        ["donate", "--conversation", "c"], ["block", "--conversation", "c"],
        ["feedback", "--less", "--conversation", "c"],
        ["config", "--max-age-days", "0"], ["import", "-"],
    ])
    func recordingCreatesTheStore(_ command: [String]) throws {
        let outcome = try run(command + ["--store", root("new")])
        #expect(outcome.status == 0, "\(outcome)")
        #expect(fileExists(root("new") + "/suggest.sqlite"))
    }

    /// Paths print as given, without doubled slashes (`//tmp/...`).
    @Test func pathsHaveNoDoubledSlashes() throws {
        let doubled = "/" + root.path + "//store/"
        #expect(try run(["donate", "--conversation", "c", "--store", doubled]).status == 0)
        let config = try run(["config", "--store", doubled])
        #expect(config.output.hasPrefix("store         \(root.path)/store\n"), "\(config)")
        let failed = try run(["donate", "--conversation", "c", "--store", "/" + root.path + "//no//a"])
        #expect(!failed.error.contains("//") && failed.error.contains("\(root.path)/no does not exist"), "\(failed)")
        #expect(StoreLocation(directory: "//a//b/").directory == "/a/b")
        #expect(StoreLocation(directory: "/").databasePath == "/suggest.sqlite")
        #expect(StoreLocation(directory: "a/").directory == "a")
    }
}
