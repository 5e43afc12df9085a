import SuggestCore
import SuggestSQLiteStore
import SuggestTestSupport
import Testing

@testable import SuggestCLI

#if canImport(Glibc)
    import Glibc
#endif

/// The "smaller things" of issue 13, through the built binary: each with the exact output a newcomer sees.
@Suite struct SmallerThingsTests {
    let directory: TemporaryDirectory
    var store: String { directory.path + "/store" }

    init() throws {
        directory = try TemporaryDirectory("cli-small")
        let setup = SuggestProcess.run(["config", "--max-age-days", "0", "--idle-days", "0", "--store", store])
        guard setup.status == 0 else { throw HarnessError(setup.standardError) }
    }

    func suggest(_ arguments: String..., input: String = "") -> SuggestProcess.Result {
        SuggestProcess.run(arguments + ["--store", store], input: input)
    }

    /// `share --send` without a choice is a usage error, found before anything is read.
    /// Past the learner's horizon, `--explain` says which sends weigh against the prior: "the prior counts as 2
    /// more" beside 44 sends read as 44 against 2, where the shares stand for the last 32.
    @Test func theLearnedWeightsSayHowTheyWeighAgainstThePrior() {
        var learned = LearnedWeightsSummary(.empty, at: Timestamp(seconds: 0), policy: .default)
        learned.sends = 7
        #expect(SuggestionOutput.learnedWeights(learned).hasPrefix("learned from 7 sends (the prior counts as 2 more):"))
        learned.sends = 44
        #expect(
            SuggestionOutput.learnedWeights(learned).hasPrefix(
                "learned from 44 sends (the last 32 weigh against the prior, which counts as 2):"))
    }

    /// A date given to a flag is held to what the JSON door allows (4096 bytes: a 5,000-byte `--date` was recorded
    /// where `donate --json` refused it), and taken at a stored date's precision: `--before` a moment 0.4 µs past
    /// a donation's deleted it, though `export` writes both as one moment (and `--at` ranked at a moment other than
    /// the one it echoed).
    @Test func datesInFlagsKeepTheRulesOfDatesInJSON() {
        let long = "2026-12-06T12:00:00." + String(repeating: "1", count: 5_000) + "Z"
        let refused = suggest("donate", "--conversation", "c", "--date", long)
        #expect(refused.status == 64 && refused.standardError.contains("is 5021 bytes long; the limit is 4096"), "\(refused)")
        #expect(suggest("donate", "--conversation", "c", "--date", "2026-12-06T12:00:00Z").status == 0)
        let kept = suggest("delete", "--before", "2026-12-06T12:00:00.0000004Z")
        #expect(kept.status == 0, "\(kept)")
        #expect(suggest("export").standardOutput.contains(#""date":"2026-12-06T12:00:00Z""#))
    }

    /// A file cut short at a line break while it is read is an error, not an input that ended there: `import` of a
    /// file truncated under it recorded the lines before the cut and exited 0.
    @Test func aFileCutShortWhileItIsReadIsAnError() throws {
        let path = directory.path + "/shrinking.jsonl"
        let line = String(repeating: "x", count: 99)
        try writeFile(path, String(repeating: line + "\n", count: 2_000))
        let source = try ByteSource(path: path)
        #expect(try source.nextLine { _ in })
        #expect(truncate(path, 100 * 1_000) == 0)
        var read = 1
        #expect(throws: CommandError.self) { while try source.nextLine({ _ in }) { read += 1 } }
        #expect(read == 1_000)
        // Whole, or read from where its reader left it (`(read line; suggest import -) < file`), it ends as it should.
        let whole = try ByteSource(path: path)
        while try whole.nextLine({ _ in }) {}
        let descriptor = open(path, O_RDONLY)
        #expect(lseek(descriptor, 100 * 10, SEEK_SET) == 1_000)
        let rest = ByteSource(descriptor: descriptor)
        while try rest.nextLine({ _ in }) {}
        close(descriptor)
    }

    /// An import's progress goes to a terminal only, updated in place and cleared at the end: a log or a pipe got a
    /// line every 100,000 donations.
    @Test func importProgressIsShownOnATerminalOnly() throws {
        let lines = (0..<100_001).map { #"{"date":\#(1_796_000_000 + $0),"intent":{"conversationIdentifier":"c-\#($0 % 7)"}}"# }
        try writeFile(directory.path + "/progress.jsonl", lines.joined(separator: "\n") + "\n")
        for terminal in [false, true] {
            let error = CapturedOutput()
            let io = CommandIO(
                standardOutput: CapturedOutput(), standardError: error, standardInput: ByteSource(text: ""),
                environment: [:], standardErrorIsTerminal: terminal)
            let code = SuggestCommandLine.run(
                ["import", directory.path + "/progress.jsonl", "--store", directory.path + "/progress-\(terminal)"], io: io)
            #expect(code == 0)
            if terminal {
                #expect(error.text == "\rsuggest import: 100000 lines read (100%)\u{1B}[K\r\u{1B}[K", "\(error.text.debugDescription)")
            } else {
                #expect(error.text == "", "\(error.text)")
            }
        }
    }

    @Test func shareSendWithoutAPickIsAUsageError() {
        let result = suggest("share", "--attachment", "public.jpeg=a", "--send")
        #expect(result.status == 64)
        #expect(
            result.standardError
                == "suggest share: --send needs the chosen conversation: give --conversation ID or --pick N\n")
        #expect(result.standardOutput.isEmpty)
    }

    /// `unblock` says when there was no block to lift, names compared byte for byte: a block of "café" composed,
    /// lifted by its decomposed spelling, said "unblocked" and stayed.
    @Test func unblockSaysWhenNothingWasBlocked() {
        let composed = "caf\u{E9}"
        let decomposed = "cafe\u{301}"
        #expect(suggest("block", "--conversation", composed).status == 0)
        let other = suggest("unblock", "--conversation", decomposed)
        #expect(other.status == 0)
        #expect(other.standardOutput.contains("was not blocked; nothing changed"), "\(other.standardOutput)")
        #expect(suggest("block", "--list").standardOutput == composed + "\n")
        let lifted = suggest("unblock", "--conversation", composed)
        #expect(lifted.standardOutput == "unblocked \(composed)\n")
        // Nothing blocked is said on standard error, so a script still reads an empty list.
        let none = suggest("block", "--list")
        #expect(none.standardOutput.isEmpty)
        #expect(none.standardError == "no conversation of account default is blocked\n")
    }

    /// A conversation longer than any donation may name (4,096 bytes) is refused by the commands that name one
    /// without a donation, as donations and the server refuse it; it was stored.
    @Test func aConversationLongerThanADonationMayNameIsRefused() {
        let long = String(repeating: "a", count: Interaction.maximumStringBytes + 1)
        for command in ["block", "unblock"] {
            let result = suggest(command, "--conversation", long)
            #expect(result.status == 64, "\(command)")
            #expect(result.standardError == "suggest \(command): --conversation is 4097 bytes long; the limit is 4096\n")
        }
        #expect(suggest("feedback", "--less", "--conversation", long).status == 64)
        #expect(suggest("block", "--conversation", String(long.dropFirst())).status == 0)
    }

    /// A store URL of a scheme suggest does not speak is a usage error, not a directory `rediss:/host:port` to
    /// create (found by a review of the Redis store).
    @Test(arguments: ["rediss://127.0.0.1:7000", "REDIS://127.0.0.1:7000"])
    func aStoreURLOfAnotherSchemeIsAUsageError(url: String) {
        let result = SuggestProcess.run(["donate", "--conversation", "c", "--store", url])
        #expect(result.status == 64)
        #expect(result.standardError.contains("which suggest does not know"), "\(result.standardError)")
    }

    /// `redis:127.0.0.1:7000`, its `//` forgotten, was a directory of that name: created, the donations recorded
    /// there, exit 0 (found by a probe of the Redis store). The value is not echoed: it may hold a password.
    @Test(arguments: ["redis:127.0.0.1:7000", "redis:/127.0.0.1:7000", "Rediss::secret@127.0.0.1:7000"])
    func aRedisURLWithoutItsSlashesIsAUsageError(url: String) throws {
        let result = SuggestProcess.run(["donate", "--conversation", "c", "--store", url])
        #expect(result.status == 64)
        #expect(result.standardError.contains("without its '//'") && !result.standardError.contains("secret"))
        // Relative to the working directory, where the store would have been made.
        let first = String(url.prefix { $0 != "/" })
        #expect(!directoryEntries(".").contains(first), "a directory was made for \(url)")
    }

    /// A store directory that is a symbolic link to nothing said "cannot open the store at dang/suggest.sqlite
    /// (unable to open database file); check that the directory is writable" (found by a probe).
    @Test func aStoreThatIsADanglingLinkSaysSo() throws {
        let scratch = try TemporaryDirectory("dangling")
        #expect(symlink(scratch("nowhere"), scratch("store")) == 0)
        for command in [["donate", "--conversation", "c"], ["list"]] {
            let result = SuggestProcess.run(command + ["--store", scratch("store")])
            #expect(result.status == 1)
            #expect(result.standardError.contains("is a symbolic link to \(scratch("nowhere")), which does not exist"), "\(result.standardError)")
        }
        // A loop of links exists, and leads nowhere: said so, not that its target is missing.
        #expect(symlink(scratch("loop-b"), scratch("loop-a")) == 0 && symlink(scratch("loop-a"), scratch("loop-b")) == 0)
        let looped = SuggestProcess.run(["list", "--store", scratch("loop-a")])
        #expect(looped.status == 1 && looped.standardError.contains("whose links lead back to themselves"), "\(looped)")
    }

    /// A store file that is not one (its log's index made a directory) is named, rather than sending people to
    /// check the store's directory, which is fine.
    @Test func aStoreFileThatIsADirectoryIsNamed() throws {
        let scratch = try TemporaryDirectory("file-problem")
        #expect(SuggestProcess.run(["donate", "--conversation", "c", "--store", scratch("store")]).status == 0)
        let index = scratch("store") + "/suggest.sqlite-shm"
        #expect(unlink(index) == 0 && mkdir(index, 0o700) == 0)
        let result = SuggestProcess.run(["donate", "--conversation", "d", "--store", scratch("store")])
        #expect(result.status == 1)
        #expect(
            result.standardError.contains("\(index) is a directory, where the store keeps a file of its own; move it away"),
            "\(result.standardError)")
    }

    /// A sent share's donation is held to the format's rules: one of 150 content types was recorded, and the
    /// account's export then held a line its import refuses (found by review); then the send was refused, though
    /// the person had tapped it (found by a probe of the library). It records the first 100, and the export reads
    /// back.
    @Test func aShareOfMoreTypesThanADonationMayCarryRecordsTheFirst100() throws {
        let scratch = try TemporaryDirectory("share-types")
        let store = ["--store", scratch("store")]
        #expect(SuggestProcess.run(["donate", "--conversation", "thread-42"] + store).status == 0)
        let attachments = (0..<150).flatMap { ["--attachment", "public.t\($0)=item-\($0)"] }
        let result = SuggestProcess.run(["share", "--conversation", "thread-42", "--send"] + attachments + store)
        #expect(result.status == 0, "\(result.standardError)")
        let exported = SuggestProcess.run(["export"] + store)
        let lines = exported.standardOutput.split(separator: "\n")
        #expect(lines.count == 2 && lines[1].contains("public.t99") && !lines[1].contains("public.t100"))
        let again = SuggestProcess.run(["import", "-", "--store", scratch("again")], input: exported.standardOutput)
        #expect(again.status == 0, "\(again.standardError)")
    }

    /// `donate --json` given JSON Lines said only "unexpected text after the JSON value"; it says where those go.
    @Test func donateGivenJSONLinesSaysWhereTheyGo() throws {
        let scratch = try TemporaryDirectory("usage")
        let line = #"{"date":"2026-12-01T00:00:00Z","intent":{"conversationIdentifier":"a"}}"#
        let result = SuggestProcess.run(
            ["donate", "--json", "--store", scratch("store")], input: line + "\n" + line + "\n")
        #expect(result.status == 64)
        #expect(result.standardError.hasSuffix("; --json reads one donation: for several (JSON Lines) use 'suggest import -'\n"), "\(result.standardError)")
    }

    /// Usage that was taken some other way (found by a newcomer's probe): `block --list` ignored a conversation
    /// given with it, `feedback --less --reset` was told to say one of them, `import ''` read "cannot read : No
    /// such file", and `--recipient =Juan` stored a person with an empty identifier.
    @Test(arguments: [
        (["block", "--list", "--conversation", "z"], "suggest block: --list lists every blocked conversation; leave out --conversation"),
        (["feedback", "--less", "--reset", "--conversation", "c"], "suggest feedback: --less and --reset undo each other; give one of them"),
        (["import", ""], "suggest import: the file name is empty; give a FILE, or - for standard input"),
        (["donate", "--conversation", "c", "--recipient", "=Juan"], "suggest donate: --recipient '=Juan' has no identifier; write ID or ID=NAME"),
        (["donate", "--conversation", "c", "--sender", "=Juan"], "suggest donate: --sender '=Juan' has no identifier; write ID or ID=NAME"),
        // Named by their options, as `delete` names them (a sweep found "--conversation ID is required" and
        // "intent.contentTypes[0]").
        (["donate", "--conversation", ""], "suggest donate: --conversation must not be empty"),
        (["donate", "--conversation", "c", "--content-type", ""], "suggest donate: --content-type must not be empty"),
        (["donate", "--conversation", "c", "--content-type", String(repeating: "t", count: 4097)], "suggest donate: --content-type is 4097 bytes long; the limit is 4096"),
    ])
    func usageTakenAnotherWayIsRefused(_ arguments: [String], _ message: String) throws {
        let scratch = try TemporaryDirectory("usage")
        let result = SuggestProcess.run(arguments + ["--store", scratch("store")])
        #expect(result.status == 64)
        #expect(result.standardError == message + "\n")
        #expect(directoryEntries(scratch.path).isEmpty, "no store was made")
    }

    /// Empty paths, found by a hostile sweep: `eval --html ''` replayed the whole history, then failed with exit 1
    /// and "cannot write : No such file"; `convert enron ''` looked for /recipients.tsv.
    @Test(arguments: [
        (["eval", ""], "suggest eval: the file name is empty; give a FILE, or - for standard input"),
        (["eval", "history.jsonl", "--html", ""], "suggest eval: --html names no file; give a file path"),
        (["convert", "enron", ""], "suggest convert: the directory name is empty; give the Enron history's directory"),
        (["convert", "collegemsg", ""], "suggest convert: the file name is empty; give a FILE, or - for standard input"),
        (["share", "--extension", ""], "suggest share: --extension names no file; give the share extension's Info.plist"),
        (["demo", "--data", ""], "suggest demo: --data names no file; give a history's FILE"),
    ])
    func anEmptyPathIsAUsageError(_ arguments: [String], _ message: String) throws {
        let result = SuggestProcess.run(arguments)
        #expect(result.status == 64)
        #expect(result.standardError == message + "\n")
    }

    /// "Suggest Less" asked hundreds of times said "score × 0" beside a conversation still listed with a score.
    @Test func aSmallMultiplierIsShownAsAPowerOfTen() {
        #expect(Feedback.multiplier(0.25, times: 2) == "0.0625")
        #expect(Feedback.multiplier(0.25, times: 1100) == "10^-662")
        #expect(Feedback.multiplier(0.5, times: 1022) != "0" && !Feedback.multiplier(0.5, times: 1100).hasPrefix("0"))
    }

    /// The same in `list --explain`, which said `(…) × 0` and `score 0` past about 540 asks (at ¼ each): the
    /// factor and the score relative to the first are shown from their logarithms.
    @Test func listExplainsAFactorBelowTheSmallestDoubleAsAPowerOfTen() throws {
        for conversation in ["kept", "muted"] {
            #expect(SuggestProcess.run(["donate", "--store", store, "--conversation", conversation]).status == 0)
        }
        do {
            let opened = try SQLiteDonationStore.open(StoreLocation(directory: store))
            for _ in 0..<1_100 { _ = try opened.suggestLess(conversation: "muted", account: "default") }
        }
        let listed = SuggestProcess.run(["list", "--store", store, "--explain"])
        #expect(listed.status == 0)
        let lines = listed.standardOutput.split(separator: "\n").map(String.init)
        let muted = try #require(lines.firstIndex { $0.contains("[muted]") })
        #expect(lines[muted].contains("score 10^-66"), "\(listed.standardOutput)")
        #expect(lines[muted + 1].hasSuffix(") × 10^-662"), "\(listed.standardOutput)")
        #expect(SuggestionOutput.factor(ln: LogSpace.ln(0.5)) == "0.5")
        // Without --explain the table has no logarithm to show; it said `score 0`.
        let plain = SuggestProcess.run(["list", "--store", store]).standardOutput
        #expect(plain.split(separator: "\n").contains { $0.contains("[muted]") && $0.contains("score ~0 ") }, "\(plain)")
        // `feedback --reset` says the state now: it said "forgot the feedback" where there was none to forget.
        for conversation in ["muted", "kept", "never-donated"] {
            let reset = SuggestProcess.run(["feedback", "--reset", "--store", store, "--conversation", conversation])
            #expect(reset.standardOutput == "\(conversation) has no \"suggest less\" feedback now\n")
        }
        #expect(SuggestProcess.run(["list", "--store", store]).standardOutput.contains("[muted]"))
    }

    /// A learned weight the mixture has all but dropped printed in full (`2.0378444265078933e-73`) and broke
    /// `--explain`'s column: below a thousandth it reads `<0.001`, in the column's eight characters.
    @Test func aNegligibleLearnedWeightKeepsItsColumn() {
        for value in [2.0378444265078933e-73, 0.00000000416, 0.000999] {
            #expect(SuggestionOutput.weight(value) == "<0.001  ")
        }
        #expect(SuggestionOutput.weight(0.0147) == "0.0147  ")
        #expect(SuggestionOutput.weight(0) == "0       ")
    }

    /// The least depth is the curve's 20, or the largest cut-off: `--depth 5` passed a check from 1, then failed
    /// with another message once the file was open.
    @Test(arguments: [
        (["--depth", "5"], "suggest eval: --depth takes a whole number from 20 to 1000000, not '5'"),
        (["--k", "1,50", "--depth", "30"], "suggest eval: --depth takes a whole number from 50 to 1000000, not '30'"),
    ])
    func evalSaysTheLeastDepthItTakes(_ arguments: [String], _ message: String) {
        let result = SuggestProcess.run(["eval", "history.jsonl"] + arguments)
        #expect(result.status == 64)
        #expect(result.standardError == message + "\n")
    }

    /// A share request on standard input is read to its limit of 256 KiB and no further (`/dev/zero` was read to
    /// 64 MiB, 137 MB resident, before the limit refused it), and bytes that are not UTF-8 are said to be so (a
    /// byte 0xFF was reported as the 0xEF of the replacement character).
    @Test func aShareRequestIsReadToItsLimitAndAsUTF8() throws {
        let long = #"{"items":[],"x":""# + String(repeating: "a", count: 300_000) + #""}"#
        let refused = suggest("share", "--json", input: long)
        #expect(refused.status == 64 && refused.standardError.contains("longer than 262144 bytes"), "\(refused.standardError)")
        let directory = try TemporaryDirectory("share-bytes")
        let bytes = try Suggest.run(["share", "--json"], input: [0xFF, 0x7B, 0x7D], scratch: directory.path)
        #expect(bytes.status == 64 && bytes.error.contains("not UTF-8"), "\(bytes.error)")
    }

    /// A cut-off past the default depth takes the depth with it: `--k 1,150` alone was refused, asking for a
    /// `--depth` the user never gave (a probe).
    @Test func aCutOffPastTheDefaultDepthDeepensIt() throws {
        let directory = try TemporaryDirectory("eval-depth")
        let path = directory.path + "/h.jsonl"
        try writeFile(
            path,
            #"{"date":"2026-12-01T00:00:00Z","direction":"incoming","intent":{"conversationIdentifier":"a"}}"# + "\n"
                + #"{"date":"2026-12-01T00:01:00Z","direction":"outgoing","intent":{"conversationIdentifier":"a"}}"# + "\n")
        let result = SuggestProcess.run(["eval", path, "--k", "1,150", "--json"])
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardOutput.contains(#""150":1"#) && result.standardOutput.contains(#""depth":150"#), "\(result.standardOutput)")
    }

    /// One number grammar, with the range in the message.
    @Test(arguments: [
        (
            ["list", "--limit", "99999999999999999999"],
            "suggest list: --limit takes a whole number from 1 to 1000, not '99999999999999999999'"
        ),
        (["list", "--limit", "+5"], "suggest list: --limit takes a whole number from 1 to 1000, not '+5'"),
        (["list", "--limit", "1e3"], "suggest list: --limit takes a whole number from 1 to 1000, not '1e3'"),
        (["list", "--limit", " 5"], "suggest list: --limit takes a whole number from 1 to 1000, not ' 5'"),
        (["list", "--limit", "0"], "suggest list: --limit takes a whole number from 1 to 1000, not '0'"),
        (["list", "--limit", "1001"], "suggest list: --limit takes a whole number from 1 to 1000, not '1001'"),
        (["share", "--pick", "0x1"], "suggest share: --pick takes a whole number from 1 to 1000, not '0x1'"),
        (
            ["config", "--max-age-days", "1e3"],
            "suggest config: --max-age-days takes a number of days from 0 to 1000000 (fractions allowed, as in 1.5), not '1e3'"
        ),
        (
            ["config", "--idle-days", "-1"],
            "suggest config: --idle-days takes a number of days from 0 to 1000000 (fractions allowed, as in 1.5), not '-1'"
        ),
        (
            ["config", "--idle-days", "1."],
            "suggest config: --idle-days takes a number of days from 0 to 1000000 (fractions allowed, as in 1.5), not '1.'"
        ),
        // Not 0, yet read as 0 (past a double's range: it was stored as "keep forever"), or less than a second.
        (
            ["config", "--max-age-days", "0." + String(repeating: "0", count: 400) + "1"],
            "suggest config: --max-age-days takes 0 (no limit) or at least 0.00001 days (about a second); '0.00000000000000000000000000000000000000' is less"
        ),
        (
            ["config", "--idle-days", "0.0000001"],
            "suggest config: --idle-days takes 0 (no limit) or at least 0.00001 days (about a second); '0.0000001' is less"
        ),
    ])
    func numbersHaveOneGrammarAndSayTheirRange(_ arguments: [String], _ message: String) {
        let result = SuggestProcess.run(arguments + ["--store", store])
        #expect(result.status == 64)
        #expect(result.standardError == message + "\n")
    }

    @Test func numbersInTheGrammarAreAccepted() {
        #expect(suggest("list", "--limit", "1000").status == 0)
        #expect(suggest("list", "--limit", "007").status == 0)
        let config = suggest("config", "--idle-days", "1.5")
        #expect(config.status == 0 && config.standardOutput.contains("idle-days     1.5\n"), "\(config.standardOutput)")
        // Shown as the command takes it, not as 1.5e-05.
        let small = suggest("config", "--idle-days", "0.000015")
        #expect(small.status == 0 && small.standardOutput.contains("idle-days     0.000015\n"), "\(small.standardOutput)")
        // A negative value (written into a store's settings by hand) is still a JSON number.
        #expect(Config.plainDecimal(-0.00002) == "-0.00002" && Config.plainDecimal(1e300) == "1e+300")
        // And so in JSON, whose reader may give it back to the flag.
        let json = suggest("config", "--json")
        #expect(json.standardOutput.hasSuffix(#""idleDays":0.000015}"# + "\n"), "\(json.standardOutput)")
        #expect(suggest("config", "--idle-days", "0.000").status == 0)
        let sample = Suggest.packageRoot + "/SampleData/donations.jsonl"
        #expect(SuggestProcess.run(["eval", sample, "--k", "1, 3,5"]).status == 0)
        #expect(
            SuggestProcess.run(["eval", sample, "--k", "1,+3"]).standardError
                == "suggest eval: --k takes a whole number from 1 to 1000, not '+3'\n")
    }

    /// `convert collegemsg -` reads standard input, as `import -` and `eval -` do (it looked for a file named "-");
    /// `eval` of a history with nothing to rank says so rather than print figures of 0 as results (both found by a
    /// probe).
    @Test func convertReadsStandardInputAndAnEmptyEvaluationSaysSo() {
        let converted = SuggestProcess.run(["convert", "collegemsg", "-"], input: "1 2 1082040961\n2 1 1082040999\n")
        #expect(converted.status == 0 && converted.standardOutput.split(separator: "\n").count == 4, "\(converted)")
        for history in ["", #"{"date":"2026-11-29T10:00:00Z","direction":"incoming","intent":{"conversationIdentifier":"c"}}"# + "\n"] {
            let evaluated = SuggestProcess.run(["eval", "-", "--policy", "recency"], input: history)
            #expect(evaluated.status == 0, "\(evaluated)")
            #expect(evaluated.standardError.contains("nothing was evaluated"), "\(evaluated.standardError)")
        }
        let real = SuggestProcess.run(["eval", "-", "--policy", "recency"], input: converted.standardOutput)
        #expect(real.status == 0 && !real.standardError.contains("nothing was evaluated"), "\(real)")
    }

    /// A page whose write fails part-way (here a file-size limit of 8 KiB) leaves the page that was there, not the
    /// first 8 KiB of the new one under its name (found by a probe); a page through a link replaces the link's file.
    @Test func aPageThatCannotBeWrittenWholeLeavesTheOldOne() throws {
        let log = directory.path + "/history.jsonl"
        try writeFile(log, try readFile(Suggest.packageRoot + "/SampleData/donations.jsonl"))
        let page = directory.path + "/page.html"
        #expect(SuggestProcess.run(["eval", log, "--policy", "recency", "--html", page]).status == 0)
        let before = try readFile(page)
        #expect(before.count < 8 * 1024, "the first page must fit the limit: \(before.count) bytes")
        let limited = try Suggest.run(
            ["eval", log, "--policy", "all", "--html", page], scratch: directory.path,
            wrapper: ["/bin/sh", "-c", "ulimit -f 8; exec \"$0\" \"$@\""])
        #expect(limited.status == 1 && limited.error.contains("cannot write"), "\(limited)")
        #expect(try readFile(page) == before)
        #expect(!directoryEntries(directory.path).contains { $0.hasPrefix(".suggest-") }, "no temporary file left")
        // Through a link: the link stays, its file is replaced, with its mode.
        #expect(chmod(page, 0o640) == 0 && symlink(page, directory.path + "/link.html") == 0)
        #expect(SuggestProcess.run(["eval", log, "--policy", "all", "--html", directory.path + "/link.html"]).status == 0)
        #expect(try readFile(page).count > before.count)
        var info = stat()
        #expect(lstat(directory.path + "/link.html", &info) == 0 && info.st_mode & S_IFMT == S_IFLNK)
        #expect(stat(page, &info) == 0 && info.st_mode & 0o777 == 0o640)
        // A file with a second name is written in place: both names keep it.
        #expect(link(page, directory.path + "/second.html") == 0)
        #expect(SuggestProcess.run(["eval", log, "--policy", "recency", "--html", page]).status == 0)
        #expect(try readFile(directory.path + "/second.html") == (try readFile(page)))
    }

    /// `eval LOG --html LOG` replaced the log with the page (through a link too, or with the log as standard
    /// input): the page may not be the input. `--html -` made a file named `-`.
    @Test func theEvalPageNeverReplacesItsInput() throws {
        let log = directory.path + "/log.jsonl"
        let original = try readFile(Suggest.packageRoot + "/SampleData/donations.jsonl")
        try writeFile(log, original)
        #expect(symlink(log, directory.path + "/link.html") == 0)
        for page in [log, directory.path + "/link.html"] {
            let refused = SuggestProcess.run(["eval", log, "--html", page])
            #expect(refused.status == 64)
            #expect(refused.standardError.contains("is the input file"), "\(refused.standardError)")
        }
        // The log as standard input, redirected from its file.
        let redirected = try Suggest.run(
            ["eval", "-", "--html", log], scratch: directory.path, wrapper: ["/bin/sh", "-c", "exec \"$0\" \"$@\" < \"$4\""])
        #expect(redirected.status == 64 && redirected.error.contains("is the input (standard input)"), "\(redirected.error)")
        #expect(try readFile(log) == original)
        let dash = SuggestProcess.run(["eval", log, "--html", "-"])
        #expect(dash.status == 64 && dash.standardError.contains("--html takes a file path"), "\(dash.standardError)")
        let page = directory.path + "/page.html"
        let written = SuggestProcess.run(["eval", log, "--html", page])
        #expect(written.status == 0, "\(written.standardError)")
        #expect(String(decoding: try readFile(page).prefix(15), as: UTF8.self).lowercased().hasPrefix("<!doctype html"))
        // A page that cannot be written is said before the replay (which may take minutes): here the input is not
        // even JSON, and the page's problem comes first.
        let broken = directory.path + "/broken.jsonl"
        try writeFile(broken, "not json\n")
        for (target, words) in [
            (directory.path, "it is a directory"), (directory.path + "/missing/page.html", "its directory"),
        ] {
            let unwritable = SuggestProcess.run(["eval", broken, "--html", target])
            #expect(unwritable.status == 1 && unwritable.standardError.contains(words), "\(unwritable.standardError)")
        }
    }

    /// "1 invalid line", not "1 invalid lines"; plurals everywhere a count is printed.
    @Test func countsOfOneAreSingular() throws {
        let good = #"{"date":"2026-11-29T10:00:00Z","intent":{"conversationIdentifier":"c"}}"#
        let skipped = suggest("import", "-", "--skip-invalid", input: good + "\n{\n")
        #expect(skipped.standardOutput == "imported 1 donation, 1 invalid line skipped\n")
        try writeFile(directory.path + "/college.txt", "1 2 1082040961\n")
        let converted = SuggestProcess.run(["convert", "collegemsg", directory.path + "/college.txt"])
        #expect(converted.standardError == "suggest convert: 1 message, 2 donations\n")
        #expect(
            counted(1, "person", plural: "people") == "1 person" && counted(2, "person", plural: "people") == "2 people"
        )
    }

    /// `donate --json` and `share --json` with nothing on standard input say so.
    @Test func emptyStandardInputSaysItIsEmpty() {
        let donate = suggest("donate", "--json", input: "")
        #expect(donate.status == 64)
        #expect(
            donate.standardError
                == "suggest donate: standard input is empty; give one donation JSON object (docs/donation-format.md)\n")
        let blank = suggest("donate", "--json", input: " \n\t\r\n")
        #expect(blank.status == 64 && blank.standardError.hasPrefix("suggest donate: standard input is empty"))
        let share = suggest("share", "--json", input: "")
        #expect(share.status == 64 && share.standardError.hasPrefix("suggest share: standard input is empty"))
    }

    /// A UTF-8 byte-order mark at the start of a file is accepted by import and eval (and the converters and
    /// `donate --json`); elsewhere it is still not JSON.
    @Test func aByteOrderMarkAtTheStartIsAccepted() throws {
        let line =
            #"{"identifier":"b-1","date":"2026-11-29T10:00:00Z","direction":"outgoing","intent":{"conversationIdentifier":"c"}}"#
        let second =
            #"{"identifier":"b-2","date":"2026-11-29T11:00:00Z","direction":"outgoing","intent":{"conversationIdentifier":"c"}}"#
        let path = directory.path + "/bom.jsonl"
        try writeFile(path, [0xEF, 0xBB, 0xBF] + Array((line + "\n" + second + "\n").utf8))
        let imported = suggest("import", path)
        #expect(
            imported.status == 0 && imported.standardOutput == "imported 2 donations\n", "\(imported.standardError)")
        let fromStandardInput = suggest("import", "-", input: "\u{FEFF}" + line + "\n")
        #expect(fromStandardInput.status == 0, "\(fromStandardInput.standardError)")
        let evaluated = SuggestProcess.run(["eval", path, "--json"])
        #expect(
            evaluated.status == 0 && evaluated.standardOutput.contains(#""donations":2"#), "\(evaluated.standardError)")
        let donated = suggest("donate", "--json", input: "\u{FEFF}" + line)
        #expect(donated.status == 0 && donated.standardOutput == "already recorded b-1; nothing changed\n")
        // Only at the very start: on the second line it is an invalid character, named by its line.
        let later = suggest("import", "-", input: line + "\n\u{FEFF}" + second + "\n")
        #expect(
            later.status == 64 && later.standardError.hasPrefix("suggest import: invalid input: line 2: invalid JSON"))
    }

    /// `list --content-type` checks a UTI as `share --attachment` does; empty context values are refused.
    @Test(arguments: ["a b", "", "public/jpeg", "a\u{1B}b"])
    func contentTypesAreCheckedAsShareChecksThem(_ type: String) {
        let list = suggest("list", "--content-type", type)
        let share = suggest("share", "--attachment", type + "=x")
        #expect(list.status == 64 && share.status == 64, "\(list.standardError) \(share.standardError)")
        #expect(list.standardError.hasPrefix("suggest list: --content-type: "), "\(list.standardError)")
        #expect(share.standardError.contains("--attachment: "), "\(share.standardError)")
        if !type.isEmpty {
            // The same words for the same identifier.
            let listReason = list.standardError.split(separator: ": ", maxSplits: 2).last
            let shareReason = share.standardError.split(separator: ": ").last
            #expect(listReason == shareReason, "\(list.standardError) \(share.standardError)")
        }
    }

    @Test(arguments: [
        ("list", "--person"), ("list", "--service"), ("list", "--exclude"), ("delete", "--conversation"),
        ("delete", "--identifier"), ("delete", "--group-identifier"),
    ])
    func emptyValuesThatNameNothingAreRefused(_ command: String, _ option: String) {
        let result = suggest(command, option, "")
        #expect(result.status == 64 && result.standardError == "suggest \(command): \(option) must not be empty\n")
    }

    /// An empty group identifier, service, group name, picture or display name in a donation is none: what the empty values above could
    /// never name is not stored under that name (it could never be listed or deleted by it), and an empty group
    /// name does not make a conversation a group.
    @Test func emptyOptionalNamesInADonationAreNone() throws {
        let line = #"{"identifier":"d-1","groupIdentifier":"","date":"2026-11-29T18:03:00Z","direction":"outgoing","#
            + #""intent":{"conversationIdentifier":"u-1","speakableGroupName":"","serviceName":"","image":"","#
            + #""recipients":[{"customIdentifier":"u-1","displayName":"","image":""}]}}"#
        #expect(suggest("import", "-", input: line + "\n").status == 0)
        #expect(
            suggest("export").standardOutput
                == #"{"account":"default","identifier":"d-1","date":"2026-11-29T18:03:00Z","direction":"outgoing","#
                + #""intent":{"conversationIdentifier":"u-1","recipients":[{"customIdentifier":"u-1"}]}}"# + "\n")
        let list = suggest("list", "--json", "--at", "2026-11-30T00:00:00Z")
        #expect(list.standardOutput.contains(#""isGroup":false"#) && !list.standardOutput.contains("serviceName"))
    }

    /// `donate`'s flags give an empty picture or name as none, as they give an empty service or group name: `--image ''`
    /// and `--recipient u-1=` were exported as `"image":""` and `"displayName":""` (a probe).
    @Test func emptyValuesOfDonateFlagsAreNone() throws {
        #expect(
            suggest(
                "donate", "--conversation", "u-1", "--identifier", "d-1", "--date", "2026-11-29T18:03:00Z",
                "--image", "", "--recipient", "u-1=", "--sender", "u-2="
            ).status == 0)
        #expect(
            suggest("export").standardOutput
                == #"{"account":"default","identifier":"d-1","date":"2026-11-29T18:03:00Z","direction":"outgoing","#
                + #""intent":{"conversationIdentifier":"u-1","sender":{"customIdentifier":"u-2"},"#
                + #""recipients":[{"customIdentifier":"u-1"}]}}"# + "\n")
    }

    /// The help describes the policy in use: its channels by name and half-life, not "two half-lives".
    @Test func helpDescribesTheChannelsOfThePolicy() {
        // Read as one paragraph: the help is wrapped at spaces.
        let help = SuggestProcess.run(["list", "--help"]).standardOutput.split(separator: "\n").joined(separator: " ")
        #expect(!help.contains("short-term") && !help.contains("long one") && !help.contains("two half-lives"))
        for channel in StoreRanking.default.base.channels {
            #expect(help.contains(channel.name + " (half-life "), "\(channel.name)")
        }
        #expect(help.contains("reply (half-life 5 min), latest (half-life 1 d"), "\(help)")
        #expect(
            help.contains(
                "--explain           Show each part of every score: reply, latest, memory, recency, people, the content "
                    + "and \"suggest less\" factors (× F), and the account's learned weights."))
        let share = SuggestProcess.run(["share", "--help"]).standardOutput
        #expect(share.contains("reply, latest, memory") && !share.contains("short-term"))
    }

    /// `convert` quotes a field of a binary file as escapes, 40 bytes at most.
    @Test func convertQuotesBinaryBytesAsEscapes() throws {
        let path = directory.path + "/binary.txt"
        try writeFile(
            path,
            Array("1 2 ".utf8) + [0x1B, 0x5B, 0x32, 0x4A, 0x7F, 0x00, 0xFF] + Array(repeating: 0x41, count: 60) + [0x0A]
        )
        let result = SuggestProcess.run(["convert", "collegemsg", path])
        #expect(result.status == 64)
        #expect(
            result.standardError
                == "suggest convert: \(path), line 1: UNIXTS \"\\x1B[2J\\x7F\\x00\\xFF"
                + String(repeating: "A", count: 33)
                + "…\" is not a Unix time\n")
    }

    /// A donation naming more than 1,024 recipients is refused by name, from flags and from a file.
    @Test func aDonationNamesAtMost1024Recipients() {
        var arguments = ["donate", "--conversation", "crowd"]
        for index in 0..<1_025 { arguments += ["--recipient", "u-\(index)"] }
        let flags = SuggestProcess.run(arguments + ["--store", store])
        #expect(flags.status == 64)
        #expect(
            flags.standardError.hasPrefix(
                "suggest donate: invalid input: intent.recipients: names 1025 people, more than the 1024"))
        let fits = SuggestProcess.run(Array(arguments.dropLast(2)) + ["--store", store])
        #expect(fits.status == 0, "\(fits.standardError)")
    }

    /// A donation takes at most 1 MiB of JSON: within every other limit, 1,024 recipients with five 4 KiB fields each
    /// made one of 21 MB, and a listing of twenty such conversations 422 MB. Refused on every way in, as an invalid
    /// line like any other (numbered, skipped by `--skip-invalid`); the lines around it are kept.
    @Test func aDonationTakesAtMost1MiBOfJSON() {
        let field = String(repeating: "x", count: 4_000)
        let people = (0..<300).map { #"{"customIdentifier":"u\#($0)\#(field)","displayName":"\#(field)"}"# }
        let huge = #"{"date":"2026-12-01T10:00:00Z","intent":{"conversationIdentifier":"crowd","recipients":["#
            + people.joined(separator: ",") + "]}}"
        let small = #"{"date":"2026-12-01T10:00:00Z","intent":{"conversationIdentifier":"small"}}"#
        let fresh = directory.path + "/one-mebibyte"
        let refused = SuggestProcess.run(["import", "-", "--store", fresh], input: small + "\n" + huge + "\n")
        #expect(refused.status == 64)
        #expect(
            refused.standardError.hasPrefix(
                "suggest import: invalid input: line 2: is "),
            "\(refused.standardError)")
        #expect(refused.standardError.contains("bytes of JSON as export writes it, more than the 1 MiB a donation may take"))
        let skipped = SuggestProcess.run(
            ["import", "-", "--skip-invalid", "--store", fresh], input: huge + "\n" + small + "\n")
        #expect(skipped.status == 0 && skipped.standardOutput.hasPrefix("imported 1 donation"), "\(skipped)")
        let single = SuggestProcess.run(["donate", "--json", "--store", fresh], input: huge)
        #expect(single.status == 64 && single.standardError.contains("more than the 1 MiB a donation may take"), "\(single)")
        var arguments = ["donate", "--conversation", "crowd", "--store", fresh]
        for index in 0..<150 { arguments += ["--recipient", "u\(index)\(field)=\(field)"] }
        let flags = SuggestProcess.run(arguments)
        #expect(flags.status == 64 && flags.standardError.contains("more than the 1 MiB a donation may take"), "\(flags)")
        let list = SuggestProcess.run(["list", "--json", "--store", fresh])
        #expect(list.standardOutput.contains("small") && !list.standardOutput.contains("crowd"))
    }

    /// The user's own entry among a conversation's recipients is nobody the message goes to: "Me, Ann · 2 people"
    /// read as a group with Ann (found by probes of the library and of the command line).
    @Test func theUserIsNotCountedAmongAConversationsPeople() {
        let line = #"{"date":"2026-12-01T10:00:00Z","direction":"outgoing","intent":{"conversationIdentifier":"dm-ann","recipients":[{"customIdentifier":"me","displayName":"Me","isMe":true},{"customIdentifier":"ann","displayName":"Ann"}]}}"#
        let fresh = directory.path + "/is-me"
        #expect(SuggestProcess.run(["donate", "--json", "--store", fresh], input: line).status == 0)
        let list = SuggestProcess.run(["list", "--store", fresh])
        #expect(list.standardOutput.contains("Ann") && !list.standardOutput.contains("Me, Ann"), "\(list.standardOutput)")
        #expect(!list.standardOutput.contains("people"), "\(list.standardOutput)")
    }

    /// A history older than the retention (CollegeMsg is from 2004) is not kept, and the summary says how to keep it.
    @Test func anOldHistorySaysHowToKeepIt() {
        let old = #"{"date":"2004-04-15T14:56:01Z","intent":{"conversationIdentifier":"u2"}}"#
        let result = SuggestProcess.run(["import", "-", "--store", directory.path + "/fresh"], input: old + "\n")
        let said = result.standardOutput
        #expect(said.hasPrefix("imported 0 donations, 1 not kept: older than the store keeps donations (90 days back "))
        #expect(said.hasSuffix("; 'suggest config --max-age-days 0' keeps everything)\n"), "\(said)")
        // The clock the span is counted from: a clock set ahead shows here, not as a retention to change.
        #expect(said.contains("from this machine's clock, 20"), "\(said)")
    }

    /// Standard input that cannot be read (closed by the caller) is a failure, 1, whichever command reads it:
    /// `eval` and `convert` said 64, as for a file the command line named, where `import` said 1.
    @Test func aClosedStandardInputIsAFailureForEveryCommandThatReadsIt() throws {
        let directory = try TemporaryDirectory("closed-input")
        let store = directory.path + "/store"
        for arguments in [
            ["import", "-", "--store", store], ["donate", "--json", "--store", store],
            ["share", "--json", "--store", store], ["eval", "-"], ["convert", "collegemsg", "-"],
        ] {
            let outcome = try Suggest.run(
                arguments, scratch: directory.path, wrapper: ["/bin/sh", "-c", "exec \"$0\" \"$@\" <&-"])
            #expect(outcome.status == 1 && outcome.error.contains("cannot read standard input"), "\(arguments): \(outcome)")
        }
    }
}
