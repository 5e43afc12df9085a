import SuggestCore
import Testing

@testable import SuggestCLI
import SuggestTestSupport

/// Hostile command lines: unknown and repeated options, missing values, values that are not what they claim, and
/// extreme dates. `suggest` exits 0, 1 or 64 with at most one line on standard error, and never dies of a signal.
@Suite struct CommandLineHostileTests {
    /// Words a command line is made of, good and bad.
    static let vocabulary: [String] = [
        "--store", "--account", "--json", "--limit", "--at", "--explain", "--content-type", "--person", "--service",
        "--exclude", "--conversation", "--identifier", "--group-identifier", "--before", "--all", "--everything",
        "--direction", "--date", "--group-name", "--recipient", "--sender", "--image", "--list", "--less", "--reset",
        "--max-age-days", "--idle-days", "--skip-invalid", "--quiet", "--attachment", "--pick", "--send", "--cancel",
        "--text", "--json-output", "--help", "--version", "-h", "-", "--", "=", "--=", "--limit=", "--at=", "---",
        "-x", "--unknown", "c-1", "c-2", "u-1=Name", "public.jpeg", "public.url=https://example.com", "0", "1", "-1",
        "8", "1000", "1001", "99999999999999999999", "1.5", "abc", "", " ", "outgoing", "incoming", "sideways",
        "2026-11-29T18:03:00Z", "2026-02-30T00:00:00Z", "yesterday", "nan", "inf", "1796029200", "'); DROP TABLE x;--",
        "\u{0}", "é", "😀", "\u{202E}", String(repeating: "x", count: 5_000), "%s%n", "$(reboot)",
    ]

    static let commandNames = [
        "list", "export", "donate", "delete", "block", "unblock", "feedback", "config", "import", "share", "eval",
        "help", "nope",
    ]

    static func randomCommandLine(_ random: inout SeededRandom) -> [String] {
        var arguments = [commandNames[Int(random.next() % UInt64(commandNames.count))]]
        for _ in 0..<Int(random.next() % 7) {
            arguments.append(vocabulary[Int(random.next() % UInt64(vocabulary.count))])
        }
        return arguments
    }

    /// Random command lines parsed against every command's options in this process: parsing never traps, refuses
    /// with a usage error, and never repeats an unbounded amount of its input.
    @Test func parsingRandomCommandLinesNeverTraps() {
        var random = SeededRandom(seed: 64)
        var parsed = 0
        var refused = 0
        for _ in 0..<20_000 {
            let arguments = Array(Self.randomCommandLine(&random).dropFirst())
            let command = SuggestCommandLine.commands[Int(random.next() % UInt64(SuggestCommandLine.commands.count))]
            do {
                let result = try ParsedArguments(command: command.name, arguments: arguments, options: command.options)
                parsed += 1
                // What was parsed is what was given: every flag it reports was on the command line.
                for option in command.options where option.value == nil && result.flag(option.name) {
                    #expect(arguments.contains(option.name))
                }
            } catch {
                refused += 1
                if case .usage(let message) = error {
                    #expect(message.utf8.count < 400, "\(message.prefix(100))")
                } else {
                    Issue.record("parsing failed with \(error), not a usage error")
                }
            }
        }
        #expect(parsed > 1_000 && refused > 1_000)
    }

    /// Random command lines run by the binary against a store with a history: exit 0, 1 or 64, at most one line
    /// on standard error when it fails, never a signal.
    @Test func randomCommandLinesNeverCrashTheBinary() throws {
        let fixture = try StoreFixture("hostile-cli")
        try fixture.keepEverything()
        try fixture.importLines(Donations.lines(Donations.make(count: 200, prefix: "h", conversations: 20, seed: 4)))
        var random = SeededRandom(seed: 1_964)
        var failures: [String] = []
        for _ in 0..<120 {
            var arguments = Self.randomCommandLine(&random)
            // Keep the store the fixture's and the working directory's files out of reach.
            arguments = arguments.filter { $0 != "--store" && $0 != "--everything" }
            if arguments.first == "import" { arguments.insert("-", at: 1) }
            let outcome = try Suggest.run(
                arguments + ["--store", fixture.store], input: Array("{}\n".utf8), scratch: fixture.scratch, timeout: 30
            )
            let name = arguments.map { $0.debugDescription.prefix(30) }.joined(separator: " ")
            if outcome.signal != nil || ![0, 1, 64].contains(outcome.status ?? -1) {
                failures.append("\(name): \(outcome)")
            } else if outcome.status != 0 && outcome.errorLines.count != 1 {
                failures.append("\(name): \(outcome.errorLines.count) lines on stderr")
            }
        }
        #expect(failures == [])
        #expect(try StoreCheck.rankingDifferences(store: fixture.store) == [])
    }

    /// Unix seconds beyond the years 0001-9999 (docs/robustness.md, B, fixed): refused with exit 64, as in the JSON.
    @Test(arguments: [
        ["list", "--at", "1e19", "--json"], ["list", "--at", "-1e20", "--json"],
        ["donate", "--conversation", "c", "--date", "1e300"], ["donate", "--conversation", "c", "--date", "-1e19"],
    ])
    func extremeDatesOnTheCommandLine(_ arguments: [String]) throws {
        let fixture = try StoreFixture("hostile-dates")
        try fixture.keepEverything()
        try fixture.importLines(Donations.lines(Donations.make(count: 20, prefix: "h", conversations: 5, seed: 4)))
        let outcome = try fixture.run(arguments)
        #expect(outcome.signal == nil, "\(outcome)")
        #expect(outcome.status == 64, "\(outcome)")
    }

    /// The same dates inside the contract's range and the other commands that take them are fine.
    @Test(arguments: [
        // Long before the history: scores grow without bound (docs/robustness.md, A), but nothing crashes.
        ["list", "--at", "2000-01-01T00:00:00Z"], ["list", "--at", "2000-01-01T00:00:00Z", "--explain"],
        ["list", "--at", "-1e20"], ["list", "--at", "1e19"],
        ["list", "--at", "9999-12-31T23:59:59Z", "--explain"], ["list", "--at", "0001-01-01T00:00:00Z", "--json"],
        ["list", "--at", "1e300"], ["list", "--at", "nan"], ["delete", "--before", "-1e300"],
        ["delete", "--before", "1e300", "--json"], ["donate", "--conversation", "c", "--date", "9999-12-31T23:59:59Z"],
        ["donate", "--conversation", "c", "--date", "nan"], ["config", "--max-age-days", "1e400"],
        ["list", "--limit", "99999999999999999999"], ["list", "--limit", "-1"],
    ])
    func datesAndNumbersAtTheEdges(_ arguments: [String]) throws {
        let fixture = try StoreFixture("hostile-edges")
        try fixture.keepEverything()
        try fixture.importLines(Donations.lines(Donations.make(count: 20, prefix: "h", conversations: 5, seed: 4)))
        let outcome = try fixture.run(arguments)
        #expect(outcome.signal == nil && [0, 64].contains(outcome.status ?? -1), "\(outcome)")
        #expect(outcome.status == 0 || outcome.errorLines.count == 1, "\(outcome)")
    }

    /// An argument that is not UTF-8 (issue 13, item 6): refused with exit 64 and nothing stored, where it used to be
    /// repaired into U+FFFD, so that `a\xFFb` and `a\xFEb` became one conversation.
    @Test(arguments: [
        (["donate", "--conversation"], #"a\377b"#), (["donate", "--conversation", "c", "--group-name"], #"\300\200"#),
        (["list", "--person"], #"\355\240\200"#), (["delete", "--conversation"], #"\377"#), ([], #"don\377ate"#),
    ])
    func argumentsThatAreNotUTF8AreRefused(_ arguments: [String], _ octal: String) throws {
        let fixture = try StoreFixture("hostile-utf8")
        try fixture.keepEverything()
        // The shell appends the argument as raw bytes: a Swift string cannot hold them.
        let outcome = try Suggest.run(
            ["--store", fixture.store].prefix(arguments.isEmpty ? 0 : 2) + arguments, scratch: fixture.scratch,
            wrapper: ["/bin/sh", "-c", #"exec "$0" "$@" "$(printf '\#(octal)')""#])
        #expect(outcome.status == 64, "\(outcome)")
        #expect(outcome.errorLines.count == 1 && outcome.error.contains("is not valid UTF-8"), "\(outcome)")
        #expect(try fixture.succeed(["export"]) == "")
    }

    /// The same for the variables that name the store: a repaired path would be another directory.
    @Test func aStoreVariableThatIsNotUTF8IsRefused() throws {
        let fixture = try StoreFixture("hostile-utf8-env")
        for variable in ["SUGGEST_STORE", "XDG_DATA_HOME", "HOME"] {
            let outcome = try Suggest.run(
                ["donate", "--conversation", "c"], scratch: fixture.scratch,
                wrapper: ["/bin/sh", "-c", #"\#(variable)="$(printf '\#(fixture.root.path)/s\377')" exec "$0" "$@""#])
            #expect(outcome.status == 64, "\(variable): \(outcome)")
            let named = "\(variable) ('\(fixture.root.path)/s\\xFF') is not valid UTF-8"
            #expect(outcome.error.contains(named), "\(outcome)")
        }
        #expect(directoryEntries(fixture.root.path) == ["scratch"])
    }

    /// A name given by an option is held to the rules of a donation's strings. An `--account` of 100,000 bytes was
    /// stored by `import` and `donate --json` (whose lines named no account), and the export then written was
    /// one `import` refuses; `list`, `export` and `delete` reported "nothing" for names no donation can hold.
    @Test func namesOverTheLimitAreRefusedBeforeTheStoreIsTouched() throws {
        let fixture = try StoreFixture("hostile-long-names")
        let long = String(repeating: "a", count: Interaction.maximumStringBytes + 1)
        let line = #"{"date":"2026-12-01T00:00:00Z","intent":{"conversationIdentifier":"c"}}"#
        let lines = Array((line + "\n").utf8)
        let cases: [([String], [UInt8]?, String)] = [
            (["import", "-", "--account", long], lines, "--account"),
            (["donate", "--json", "--account", long], lines, "--account"),
            (["list", "--account", long], nil, "--account"),
            (["export", "--account", long], nil, "--account"),
            (["delete", "--all", "--account", long], nil, "--account"),
            (["delete", "--conversation", long], nil, "--conversation"),
            (["delete", "--identifier", long], nil, "--identifier"),
        ]
        for (arguments, input, option) in cases {
            let outcome = try fixture.run(arguments, input: input)
            #expect(outcome.status == 64, "\(arguments.prefix(2)): \(outcome.error.prefix(200))")
            #expect(
                outcome.error.hasSuffix("\(option) is \(long.utf8.count) bytes long; the limit is 4096\n"),
                "\(arguments.prefix(2)): \(outcome.error.prefix(200))")
        }
        // A query's parts are named as the caller named them: `people` for `--person` sent the reader looking
        // for a field they never wrote.
        let person = try fixture.run(["list", "--person", long])
        #expect(person.status == 64 && person.error.hasSuffix(": --person: is longer than 4096 bytes\n"), "\(person)")
        let share = try fixture.run(["share", "--json"], input: Array(#"{"items": [], "exclude": ["\#(long)"]}"#.utf8))
        #expect(share.status == 64 && share.error.hasSuffix(": exclude: is longer than 4096 bytes\n"), "\(share)")
        #expect(directoryEntries(fixture.root.path) == ["scratch"], "no store was made")
        // The library refuses such a default too, naming the field, on both of its decoding paths.
        let bytes = Array(line.utf8)
        let fast = #expect(throws: InputError.self) {
            try bytes.withUnsafeBufferPointer { buffer throws(InputError) in
                _ = try Interaction(jsonBytes: buffer, defaultAccount: long)
            }
        }
        let tree = #expect(throws: InputError.self) {
            _ = try Interaction(json: try JSONParser.parse(line), defaultAccount: long)
        }
        #expect(fast?.field == "account" && tree?.field == "account", "\(String(describing: fast)), \(String(describing: tree))")
    }
}
