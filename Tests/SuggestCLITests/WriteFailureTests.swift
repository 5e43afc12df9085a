import SuggestCore
import SuggestTestSupport
import Testing

@testable import SuggestCLI

#if canImport(Glibc)
    import Glibc
#endif

/// A result that cannot be written is a failure (issue 13, item 1): a full disk fails the command with exit 1 and
/// one line, a closed pipe ends it at once and quietly, for every command that writes a result.
@Suite struct WriteFailureTests {
    let directory: TemporaryDirectory
    var store: String { directory.path + "/store" }

    init() throws {
        directory = try TemporaryDirectory("cli-write")
        let lines = (0..<40).map { n in
            #"{"identifier":"w-\#(n)","date":"2026-11-29T10:\#(n < 10 ? "0" : "")\#(n):00Z","direction":"outgoing","#
                + #""intent":{"conversationIdentifier":"c-\#(n % 9)","recipients":[{"customIdentifier":"u-\#(n % 9)"}]}}"#
        }
        try writeFile(directory.path + "/history.jsonl", lines.joined(separator: "\n") + "\n")
        for arguments in [
            ["config", "--max-age-days", "0", "--idle-days", "0"], ["import", directory.path + "/history.jsonl"],
            ["block", "--conversation", "c-8"],
        ] {
            let result = SuggestProcess.run(arguments + ["--store", store])
            guard result.status == 0 else { throw HarnessError("\(arguments): \(result.standardError)") }
        }
    }

    /// Runs `suggest ARGUMENTS` with standard output on `/dev/full`, through a shell that only redirects it.
    func intoAFullDisk(_ arguments: [String]) throws -> ProcessOutcome {
        try Suggest.run(
            arguments, input: [], scratch: directory.path, wrapper: ["/bin/sh", "-c", #"exec "$0" "$@" >/dev/full"#])
    }

    static let at = "2026-11-30T09:00:00Z"

    /// Every command that writes a result, with the store the suite builds (`STORE` is replaced by its path).
    static let commands: [[String]] = [
        ["list", "--at", at], ["list", "--json", "--at", at], ["list", "--explain", "--at", at], ["export"],
        ["block", "--list"], ["config"], ["config", "--json"], ["donate", "--conversation", "new"],
        ["feedback", "--less", "--conversation", "c-1"], ["block", "--conversation", "c-2"],
        ["unblock", "--conversation", "c-2"], ["delete", "--conversation", "c-3"], ["delete", "--all", "--json"],
        ["share", "--attachment", "public.url=https://example.com", "--at", at],
        ["share", "--attachment", "public.url=https://example.com", "--at", at, "--json-output"],
        ["eval", "HISTORY"], ["eval", "HISTORY", "--json"], ["convert", "collegemsg", "COLLEGE"],
        ["import", "HISTORY"], ["--help"], ["list", "--help"], ["--version"],
    ]

    @Test(arguments: commands)
    func aFullDiskFailsTheCommandWithOneLine(_ command: [String]) throws {
        try writeFile(directory.path + "/college.txt", "1 2 1082040961\n2 1 1082155839\n")
        var arguments = command.map { word in
            word == "HISTORY"
                ? directory.path + "/history.jsonl" : word == "COLLEGE" ? directory.path + "/college.txt" : word
        }
        if !["eval", "convert", "--help", "--version"].contains(command[0]) && !command.contains("--help") {
            arguments += ["--store", store]
        }
        let outcome = try intoAFullDisk(arguments)
        #expect(outcome.status == 1, "\(command): \(outcome)")
        let name = command[0].hasPrefix("-") ? "suggest" : "suggest \(command[0])"
        // A command that can change the store says that it ran to its end: a script must not run it again. One that
        // changes nothing (`block --list`, `config` showing the settings, a share's preview) does not say so.
        let changing = SuggestCommandLine.mayChangeTheStore(command)
        #expect(
            changing == (["donate", "import", "delete", "block", "unblock", "feedback"].contains(command[0])
                && command != ["block", "--list"]), "\(command)")
        let ending = changing ? "; the command ran to its end: what it changed in the store, if anything, stays changed" : ""
        #expect(
            outcome.errorLines.last == "\(name): cannot write standard output: No space left on device\(ending)",
            "\(outcome)")
        // Progress and notices may come before it (convert's summary); the failure is the last line.
        #expect(outcome.error.hasSuffix("No space left on device\(ending)\n"), "\(outcome)")
    }

    /// The same command with a writable standard output succeeds: the failure above is the disk's.
    @Test func theSameCommandsSucceedWhenTheirOutputCanBeWritten() throws {
        let outcome = try Suggest.run(["export", "--store", store], scratch: directory.path)
        #expect(outcome.status == 0 && outcome.output.split(separator: "\n").count == 40, "\(outcome)")
    }

    /// Adds 3,000 donations with long names: an export of about 900 KB, many 64 KiB writes and more than a pipe
    /// holds.
    func importMany() throws {
        let lines = (0..<3_000).map { n in
            #"{"identifier":"p-\#(n)","date":"2026-11-29T11:00:00Z","intent":{"conversationIdentifier":"p-\#(n % 50)","#
                + #""speakableGroupName":"\#(String(repeating: "n", count: 200))"}}"#
        }
        try writeFile(directory.path + "/many.jsonl", lines.joined(separator: "\n") + "\n")
        let imported = SuggestProcess.run(["import", directory.path + "/many.jsonl", "--store", store])
        guard imported.status == 0 else { throw HarnessError("import: \(imported.standardError)") }
    }

    /// `suggest export | head -c 1`: the command stops, exits 1 and says nothing (the reader asked for no more).
    @Test func aClosedPipeEndsTheCommandQuietly() throws {
        try importMany()
        // The status of suggest, not of head, is what the shell prints last.
        let script = #"{ "$0" "$@"; echo "status $?" >&2; } | head -c 1 >/dev/null"#
        let outcome = try Suggest.run(
            ["export", "--store", store], scratch: directory.path, wrapper: ["/bin/sh", "-c", script])
        #expect(outcome.error == "status 1\n", "\(outcome)")
    }

    /// A sink that counts the writes a command attempts after its output failed: there must be none.
    final class CountingSink: OutputSink {
        let inner: OutputSink
        var failed = false
        var writesAfterFailure = 0

        init(_ inner: OutputSink) { self.inner = inner }

        func write(_ text: String) throws(OutputError) {
            if failed { writesAfterFailure += 1 }
            do {
                try inner.write(text)
            } catch {
                failed = true
                throw error
            }
        }

        func flush() throws(OutputError) { try inner.flush() }
    }

    /// In this process, on a pipe whose reader is gone: the export stops at the first write that fails (the old
    /// code wrote all of a 500k-donation store into the closed pipe, 4.7 s), and says nothing.
    @Test func anExportIntoAClosedPipeStopsAtTheFirstFailedWrite() throws {
        try importMany()
        signal(SIGPIPE, SIG_IGN)
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        close(ends[0])
        defer { close(ends[1]) }
        let sink = CountingSink(FileDescriptorOutput(descriptor: ends[1]))
        let error = CapturedOutput()
        let io = CommandIO(
            standardOutput: sink, standardError: error, standardInput: ByteSource(text: ""), environment: [:])
        let code = SuggestCommandLine.run(["export", "--store", store], io: io)
        #expect(code == 1)
        #expect(sink.failed)
        #expect(sink.writesAfterFailure == 0)
        #expect(error.text == "")
    }

    /// A command that changed the store says so when its reader went away (`suggest donate ... | true`): it exited
    /// 1 quietly, as an export does, and a script that runs it again recorded the donation twice.
    @Test func aChangingCommandIntoAClosedPipeSaysItRan() throws {
        signal(SIGPIPE, SIG_IGN)
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        close(ends[0])
        defer { close(ends[1]) }
        let error = CapturedOutput()
        let io = CommandIO(
            standardOutput: FileDescriptorOutput(descriptor: ends[1], name: "standard output"), standardError: error,
            standardInput: ByteSource(text: ""), environment: [:])
        #expect(SuggestCommandLine.run(["donate", "--conversation", "piped", "--store", store], io: io) == 1)
        #expect(
            error.text == "suggest donate: cannot write standard output: Broken pipe; the command ran to its end: "
                + "what it changed in the store, if anything, stays changed\n", "\(error.text)")
        #expect(SuggestProcess.run(["export", "--store", store]).standardOutput.contains(#""conversationIdentifier":"piped""#))
        // Failing while the command runs (a result over 64 KiB, here every write), it says so too (the review: a
        // `share --send` of a long list exited 1 in silence); a share's preview changes nothing and stays quiet.
        for (arguments, said) in [
            (["share", "--attachment", "public.url=https://example.com", "--pick", "1", "--send"], true),
            (["share", "--attachment", "public.url=https://example.com"], false),
        ] {
            let error = CapturedOutput()
            let io = CommandIO(
                standardOutput: FileDescriptorOutput(descriptor: ends[1], name: "standard output", autoFlush: true),
                standardError: error, standardInput: ByteSource(text: ""), environment: [:])
            #expect(SuggestCommandLine.run(arguments + ["--store", store], io: io) == 1)
            let expected =
                said
                ? "suggest share: cannot write standard output: Broken pipe; what the command changed in the store "
                    + "before this, if anything, stays changed\n" : ""
            #expect(error.text == expected, "\(arguments): \(error.text)")
        }
    }

    /// The error names the stream and the system's reason, on one line.
    @Test func theMessageNamesTheStreamAndTheReason() throws {
        let full = open("/dev/full", O_WRONLY)
        try #require(full >= 0)
        defer { close(full) }
        let error = CapturedOutput()
        let io = CommandIO(
            standardOutput: FileDescriptorOutput(descriptor: full, name: "standard output"), standardError: error,
            standardInput: ByteSource(text: ""), environment: [:])
        #expect(SuggestCommandLine.run(["--version"], io: io) == 1)
        #expect(error.text == "suggest: cannot write standard output: No space left on device\n")
    }

    /// A closed standard input is an input that cannot be read, not an empty one: SQLite opened /dev/null on the
    /// free descriptor 0 before it opened the store, and `import -` then imported nothing and said so with exit 0.
    @Test func aClosedStandardInputIsAFailureNotAnEmptyInput() throws {
        let before = SuggestProcess.run(["export", "--store", store]).standardOutput
        for arguments in [["import", "-"], ["import", "-", "--skip-invalid"], ["donate", "--json"]] {
            let outcome = try Suggest.run(
                arguments + ["--store", store], scratch: directory.path,
                wrapper: ["/bin/sh", "-c", #"exec "$0" "$@" <&-"#])
            #expect(outcome.status == 1, "\(arguments)")
            #expect(outcome.error.contains("cannot read standard input"), "\(arguments): \(outcome.error)")
        }
        #expect(SuggestProcess.run(["export", "--store", store]).standardOutput == before)
    }
}
