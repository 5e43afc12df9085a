import SuggestCore
import SuggestTestSupport
import Testing

@testable import SuggestCLI

#if canImport(Glibc)
    import Glibc
#endif

/// The built `suggest` binary, run as a process: exact outputs and exit codes.
@Suite struct EndToEndTests {
    let directory: TemporaryDirectory
    var store: String { directory.path + "/store" }

    init() throws { directory = try TemporaryDirectory("cli-test") }

    func suggest(_ arguments: String..., input: String = "") -> SuggestProcess.Result {
        SuggestProcess.run(arguments + ["--store", store], input: input)
    }

    @Test func versionHelpAndUsageErrors() {
        #expect(SuggestProcess.run(["--version"]).standardOutput == "suggest \(Release.version)\n")
        let help = SuggestProcess.run(["--help"])
        #expect(help.status == 0 && help.standardOutput.contains("Commands:") && help.standardOutput.contains("donate"))
        let listHelp = SuggestProcess.run(["list", "--help"])
        #expect(listHelp.status == 0 && listHelp.standardOutput.contains("--limit N"))
        let unknown = SuggestProcess.run(["frobnicate"])
        #expect(unknown.status == 64)
        #expect(unknown.standardError == "suggest: unknown command 'frobnicate'; see 'suggest --help' for the commands\n")
        let badOption = suggest("list", "--limt", "3")
        #expect(badOption.status == 64)
        #expect(badOption.standardError == "suggest list: unknown option --limt for 'suggest list'; see 'suggest list --help'\n")
        #expect(suggest("list", "--limit", "zero").status == 64)
        #expect(SuggestProcess.run([]).status == 64)
        // A value forgotten before another option: `--json` was taken for the conversation's name, and recorded.
        let forgotten = suggest("donate", "--conversation", "--json")
        #expect(forgotten.status == 64, "\(forgotten.standardOutput)")
        #expect(forgotten.standardError.contains("--conversation needs a value (ID) before --json"), "\(forgotten.standardError)")
        #expect(suggest("list", "--account", "--limit=3").status == 64)
        // An account that --account contradicts: the message says what to do.
        let other = SuggestProcess.run(
            ["import", "-", "--account", "bob", "--store", store],
            input: #"{"account": "alice", "date": 0, "intent": {"conversationIdentifier": "c"}}"#)
        #expect(other.status == 64 && other.standardError.contains("import without naming an account to keep each donation's own"), "\(other.standardError)")
        // A file taken for --account's value: the message says so.
        let swallowed = suggest("import", "--account", Suggest.packageRoot + "/SampleData/donations.jsonl")
        #expect(swallowed.status == 64 && swallowed.standardError.contains("--account took"), "\(swallowed.standardError)")
        // A number's option forgotten: no advice to write it with `=`.
        let limit = suggest("list", "--limit", "--json")
        #expect(limit.status == 64 && !limit.standardError.contains("--limit="), "\(limit.standardError)")
        // Written with `=`, such a value is the user's choice.
        let chosen = suggest("donate", "--conversation=--json")
        #expect(chosen.status == 0, "\(chosen.standardError)")
        #expect(suggest("export").standardOutput.contains(#""conversationIdentifier":"--json""#))
    }

    @Test func theMostAndMostRecentlyDonatedRanksFirst() throws {
        for (conversation, date) in [
            ("thread-1", "2026-11-20T10:00:00Z"), ("thread-2", "2026-11-28T10:00:00Z"), ("thread-3", "2026-11-10T10:00:00Z"),
            ("thread-2", "2026-11-29T10:00:00Z"), ("thread-2", "2026-11-29T18:00:00Z"), ("thread-1", "2026-11-21T10:00:00Z"),
        ] {
            let result = suggest(
                "donate", "--conversation", conversation, "--date", date, "--recipient", "u-\(conversation)=Name \(conversation)")
            #expect(result.status == 0, "\(result.standardError)")
            #expect(result.standardOutput.hasPrefix("recorded "))
        }
        let config = suggest("config", "--max-age-days", "0", "--idle-days", "0")
        #expect(config.status == 0)
        let list = suggest("list", "--json", "--at", "2026-11-30T09:00:00Z")
        #expect(list.status == 0)
        let json = try JSONParser.parse(list.standardOutput)
        guard case .array(let suggestions)? = json["suggestions"] else {
            Issue.record("no suggestions array in \(list.standardOutput)")
            return
        }
        #expect(suggestions.map { $0["conversationIdentifier"] } == [.string("thread-2"), .string("thread-1"), .string("thread-3")])
        #expect(suggestions.first?["rank"] == .number(1))
        #expect(json["at"] == .string("2026-11-30T09:00:00Z"))
        let explained = suggest("list", "--explain", "--at", "2026-11-30T09:00:00Z")
        let firstChannel = FrecencyPolicy.default.channels[0].name
        #expect(explained.standardOutput.contains("why: \(firstChannel) "))
        #expect(explained.standardOutput.contains("3 sent, 0 received"))
        // The account's learned weights under the table, and each suggestion's in its JSON explanation.
        #expect(explained.standardOutput.contains("learned from "), "\(explained.standardOutput)")
        for channel in StoreRanking.default.base.channels {
            #expect(explained.standardOutput.contains("  " + channel.name + " "), "\(channel.name)")
        }
        let explainedJSON = try JSONParser.parse(
            suggest("list", "--json", "--explain", "--at", "2026-11-30T09:00:00Z").standardOutput)
        guard case .array(let explainedSuggestions)? = explainedJSON["suggestions"],
            let explanation = explainedSuggestions.first?["explanation"]
        else {
            Issue.record("no explanation")
            return
        }
        #expect(explanation["replyWeight"] != nil && explanation["recencyWeight"] != nil)
        #expect(explanation["learnedFrom"] != nil)
    }

    /// The table counts a conversation's people when its title does not name them all, and never counts nobody.
    @Test func theTableCountsPeopleOnlyWhenThereAreAny() {
        _ = suggest("donate", "--conversation", "alone", "--date", "2026-11-29T10:00:00Z")
        _ = suggest(
            "donate", "--conversation", "pair", "--date", "2026-11-29T11:00:00Z", "--recipient", "u-1=Ann",
            "--recipient", "u-2=Bo")
        _ = suggest(
            "donate", "--conversation", "family", "--group-name", "Family", "--date", "2026-11-29T12:00:00Z",
            "--recipient", "u-1=Ann")
        let lines = suggest("list", "--at", "2026-11-30T09:00:00Z").standardOutput.split(separator: "\n")
        func line(_ conversation: String) -> Substring { lines.first { $0.hasSuffix("[\(conversation)]") } ?? "" }
        #expect(line("alone").hasSuffix("  person  [alone]"))
        #expect(line("pair").hasSuffix("  group · 2 people  [pair]"))
        #expect(line("family").hasSuffix("  group · 1 person  [family]"))
    }

    @Test func importExportRoundTripIsIdentical() {
        let sample = Suggest.packageRoot + "/SampleData/donations.jsonl"
        #expect(suggest("config", "--max-age-days", "0").status == 0)
        let imported = suggest("import", sample)
        #expect(imported.status == 0 && imported.standardOutput == "imported 238 donations\n", "\(imported)")
        let first = suggest("export")
        let other = directory.path + "/other"
        #expect(SuggestProcess.run(["config", "--max-age-days", "0", "--store", other]).status == 0)
        #expect(SuggestProcess.run(["import", "-", "--store", other], input: first.standardOutput).status == 0)
        let second = SuggestProcess.run(["export", "--store", other])
        #expect(first.standardOutput == second.standardOutput)
        #expect(first.standardOutput.split(separator: "\n").count == 238)
        let again = suggest("import", sample)
        #expect(again.standardOutput == "imported 0 donations, 238 already recorded\n")
    }

    @Test(arguments: [
        // Cut short inside `intent`, which the message names.
        ("{\"date\": 0, \"intent\": {\"conversationIdentifier\": \"c\"}", "line 2: intent: invalid JSON"),
        ("{\"date\": 0, \"intent\": {}}", "line 2: intent.conversationIdentifier: is required"),
        ("{\"date\": \"soon\", \"intent\": {\"conversationIdentifier\": \"c\"}}", "line 2: date: \"soon\" is not a date"),
        ("{\"date\": 0, \"direction\": \"up\", \"intent\": {\"conversationIdentifier\": \"c\"}}", "line 2: direction: unknown direction"),
    ])
    func badInputExits64AndChangesNothing(line: String, message: String) {
        #expect(suggest("config", "--max-age-days", "0").status == 0)
        #expect(suggest("donate", "--conversation", "kept", "--date", "2026-11-29T10:00:00Z").status == 0)
        let before = suggest("export").standardOutput
        let good = "{\"date\": 1, \"intent\": {\"conversationIdentifier\": \"new\"}}"
        let result = suggest("import", "-", input: good + "\n" + line + "\n" + good + "\n")
        #expect(result.status == 64)
        #expect(result.standardError.hasPrefix("suggest import: invalid input: " + message), "\(result.standardError)")
        #expect(result.standardError.split(separator: "\n").count == 1)
        #expect(suggest("export").standardOutput == before)
        let skipped = suggest("import", "-", "--skip-invalid", input: good + "\n" + line + "\n")
        #expect(skipped.status == 0)
        #expect(skipped.standardOutput == "imported 1 donation, 1 invalid line skipped\n")
    }

    /// A first import of the wrong file is refused before it creates the store, which it left behind empty (8 MB
    /// with its reserve); an input whose first donation is valid creates it, and loses no line of a pipe for
    /// having been looked at first.
    @Test func aFirstImportRefusedAtItsFirstLineCreatesNoStore() {
        // Recent: a new store keeps 90 days.
        let now = Int(Timestamp.now().seconds)
        let recent = [now - 60, now - 30].map { #"{"date": \#($0), "intent": {"conversationIdentifier": "c"}}"# }
        let refusals = [
            (["import", "-"], "a,b,c\n1,2,3\n", "line 1: invalid JSON"),
            (["import", "-"], "\n \n{\"date\": 0, \"intent\": {}}\n", "line 3: intent.conversationIdentifier"),
            (
                ["import", "-"], #"{"date": "2999-01-01T00:00:00Z", "intent": {"conversationIdentifier": "c"}}"#,
                "line 1: date:"
            ),
            (
                ["import", "-", "--account", "bob"],
                #"{"account": "al", "date": 1, "intent": {"conversationIdentifier": "c"}}"#, "line 1: account:"
            ),
        ]
        for (arguments, input, message) in refusals {
            let result = SuggestProcess.run(arguments + ["--store", store], input: input)
            #expect(result.status == 64 && result.standardError.contains(message), "\(result)")
            #expect(access(store, F_OK) != 0, "\(arguments) \(input)")
        }
        // A store that cannot be made is said first, before the input is read (it said "line 1: invalid JSON").
        let orphan = SuggestProcess.run(["import", "-", "--store", directory.path + "/no/store"], input: "a,b\n")
        #expect(orphan.status == 1 && orphan.standardError.contains("does not exist; create it first"), "\(orphan)")
        let skipped = suggest("import", "-", "--skip-invalid", input: "junk\n")
        #expect(skipped.status == 0 && access(store, F_OK) == 0, "\(skipped)")
        let other = directory.path + "/other"
        let imported = SuggestProcess.run(
            ["import", "-", "--store", other], input: "\n" + recent.joined(separator: "\n"))
        #expect(imported.status == 0 && imported.standardOutput == "imported 2 donations\n", "\(imported)")
        #expect(SuggestProcess.run(["export", "--store", other]).standardOutput.split(separator: "\n").count == 2)
        // An existing store is opened as every command that records opens it: its deletion reserve made again
        // (an import that only looked for the store first left it missing, and a full disk's wipe failed).
        #expect(unlink(other + "/suggest.sqlite-reserve") == 0)
        let again = SuggestProcess.run(["import", "-", "--store", other], input: "junk\n")
        #expect(again.status == 64 && access(other + "/suggest.sqlite-reserve", F_OK) == 0, "\(again)")
    }

    /// Input that cannot be read is an error that says so, not an empty import; input that is too long for one
    /// document is refused, not cut; a file that ends in a lone \r (written on Windows) imports. Standard input
    /// on a directory is the user's to correct (64), as `import DIRECTORY` is; it exited 1.
    @Test func unreadableAndOverlongInputAreErrors() throws {
        let storeless = [["eval", "-"], ["convert", "collegemsg", "-"]]
        for command in [["import", "-"], ["donate", "--json"], ["share", "--json"]].map({ $0 + ["--store", store] }) + storeless {
            // Standard input opened on a directory: every read fails with EISDIR.
            let child = try ChildProcess(
                executable: Suggest.binary, arguments: command,
                environment: Suggest.environment(home: directory.path), inputPath: directory.path,
                scratch: directory.path)
            let outcome = child.wait(timeout: 60)
            #expect(outcome.status == 64, "\(command)")
            #expect(outcome.error == "suggest \(command[0]): cannot read standard input: Is a directory\n")
        }
        #expect(suggest("export").standardOutput.isEmpty)

        let tooLong = suggest("donate", "--json", input: String(repeating: " ", count: 65 << 20) + "{}")
        #expect(tooLong.status == 64)
        #expect(tooLong.standardError.hasPrefix("suggest donate: standard input is longer than 64 MiB"))

        let line = #"{"identifier":"w-1","date":"2026-11-29T18:03:00Z","intent":{"conversationIdentifier":"c"}}"#
        let windows = suggest("import", "-", input: line + "\r\n\r")
        #expect(windows.status == 0 && windows.standardOutput == "imported 1 donation\n", "\(windows.standardError)")
    }

    @Test func aStorePathThatIsAFileFailsWithOneLine() {
        SuggestProcess.write("not a directory", to: directory.path + "/file")
        let result = SuggestProcess.run(["list", "--store", directory.path + "/file"])
        #expect(result.status == 1)
        #expect(result.standardError.split(separator: "\n").count == 1)
        #expect(result.standardError.contains("is a file, not a directory"))
    }

    @Test func donateFromJSONAndTheEnvironmentStore() {
        let json = #"{"identifier": "j1", "date": "2026-11-29T18:03:00Z", "direction": "outgoing", "intent": {"conversationIdentifier": "thread-42", "content": "secret text"}}"#
        let result = SuggestProcess.run(["donate", "--json"], input: json, environment: ["SUGGEST_STORE": store])
        #expect(result.status == 0)
        #expect(result.standardOutput == "recorded j1\n")
        let again = SuggestProcess.run(["donate", "--json"], input: json, environment: ["SUGGEST_STORE": store])
        #expect(again.standardOutput == "already recorded j1; nothing changed\n")
        let exported = suggest("export").standardOutput
        #expect(exported.contains("thread-42") && !exported.contains("secret text"))
        #expect(suggest("donate", "--json", input: "{").status == 64)
    }

    @Test func deleteReportsAndForgets() {
        #expect(suggest("config", "--max-age-days", "0", "--idle-days", "0").status == 0)
        #expect(suggest("donate", "--conversation", "a", "--group-name", "Secret Society", "--date", "2026-11-29T10:00:00Z").status == 0)
        #expect(suggest("donate", "--conversation", "b", "--date", "2026-11-29T11:00:00Z").status == 0)
        let deleted = suggest("delete", "--conversation", "a")
        #expect(deleted.standardOutput == "deleted 1 donation from 1 conversation: a\nremoved entirely (no donation left): a\n")
        #expect(!suggest("list", "--at", "2026-11-30T00:00:00Z").standardOutput.contains("Secret Society"))
        #expect(suggest("delete").status == 64)
        #expect(suggest("delete", "--all", "--conversation", "b").status == 64)
        // A conversation whose only trace is "suggest less": forgotten, and said so, not "nothing to delete".
        #expect(suggest("feedback", "--less", "--conversation", "never-donated").status == 0)
        #expect(
            suggest("delete", "--conversation", "never-donated").standardOutput
                == "no donation to delete in account default; its \"suggest less\" feedback is forgotten\n")
        #expect(suggest("delete", "--conversation", "never-donated").standardOutput == "nothing to delete in account default\n")
        #expect(suggest("feedback", "--less", "--conversation", "ghost").status == 0)
        let all = suggest("delete", "--all", "--json").standardOutput
        #expect(all.contains(#""donations":1"#) && all.contains(#""preferencesForgotten":true"#), "\(all)")
    }

    @Test func theDeletionReportNamesTenAtMost() {
        let names = (1...11).map { "c-\($0)" }
        #expect(Delete.named(Array(names.prefix(10))) == names.prefix(10).joined(separator: ", "))
        #expect(Delete.named(names) == names.prefix(10).joined(separator: ", ") + " and 1 more (--json lists them all)")
        #expect(Delete.named([]) == "")
    }

    @Test func deletingManyConversationsNamesTenAndCountsTheRest() {
        #expect(suggest("config", "--max-age-days", "0", "--idle-days", "0").status == 0)
        let lines = (1...12).map { n in
            #"{"identifier":"d-\#(n)","date":"2026-11-29T10:00:00Z","intent":{"conversationIdentifier":"c-\#(n)"}}"#
        }
        #expect(suggest("import", "-", input: lines.joined(separator: "\n")).status == 0)
        let deleted = suggest("delete", "--before", "2026-11-30T00:00:00Z")
        let report = deleted.standardOutput.split(separator: "\n")
        #expect(report.count == 2, "\(deleted.standardOutput)")
        for line in report {
            #expect(line.hasSuffix(" and 2 more (--json lists them all)"), "\(line)")
            #expect(line.split(separator: ",").count == 10, "\(line)")
        }
        #expect(report.first?.hasPrefix("deleted 12 donations from 12 conversations: c-") == true)
        #expect(suggest("export").standardOutput.isEmpty)
    }
}
