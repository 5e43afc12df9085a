import SuggestTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `suggest demo` from any directory, and its printed commands pasted into a shell (issue 13: the demo printed
/// `--store $STORE` without setting `STORE`, and only ran from the project's root).
@Suite struct DemoTests {
    /// Its output without the comments, the printed commands and blank lines; the donation `share --send` records
    /// has a new identifier each time.
    static func results(_ text: String) -> [String] {
        text.split(separator: "\n").filter {
            !$0.hasPrefix("#") && !$0.hasPrefix("$ ") && !$0.contains("throwaway store")
        }
        .map { line in
            guard let range = line.firstRange(of: "recorded donation ") else { return String(line) }
            return line[..<range.upperBound] + "ID"
                + (line.firstRange(of: " as an engaged").map { line[$0.lowerBound...] } ?? "")
        }
    }

    @Test func theDemoRunsAnywhereAndItsCommandsPasteAsPrinted() throws {
        let scratch = try TemporaryDirectory("cli-demo")
        // From the root directory, far from SampleData/.
        let demo = try Suggest.run(
            ["demo"], scratch: scratch.path, wrapper: ["/bin/sh", "-c", #"cd / && exec "$0" "$@""#])
        #expect(demo.status == 0, "\(demo)")
        let commands = demo.output.split(separator: "\n").filter { $0.hasPrefix("$ ") }.map { String($0.dropFirst(2)) }
        #expect(
            commands.first?.hasPrefix("export PATH=") == true && commands.dropFirst().first?.hasPrefix("STORE=") == true
        )
        #expect(
            commands.count > 10
                && commands.dropFirst(2).allSatisfy { $0.hasPrefix("suggest ") && $0.hasSuffix(#" --store "$STORE""#) })
        let store = try #require(commands.dropFirst().first.map { String($0.dropFirst("STORE=".count)) })
        defer { removeTree(store) }
        #expect(access(store, F_OK) != 0, "the throwaway store is removed")

        // Pasted into a shell in another directory, with a PATH that has no suggest on it: the same results.
        let script = scratch.path + "/pasted.sh"
        try writeFile(script, commands.joined(separator: "\n") + "\n")
        let pasted = try ChildProcess(
            executable: "/bin/sh", arguments: ["-e", "-c", #"cd / && . "$0""#, script],
            environment: ["PATH": "/usr/bin:/bin", "HOME": scratch.path, "SWIFT_BACKTRACE": "enable=no"],
            inputPath: nil,
            scratch: scratch.path
        ).wait(timeout: 120)
        #expect(pasted.status == 0, "\(pasted)")
        #expect(Self.results(pasted.output) == Self.results(demo.output))
        #expect(Self.results(demo.output).contains("imported 238 donations"))
    }

    /// Another history than the sample: its steps name none of the sample's conversations. `share --send` to
    /// u-juan failed there, and the demo ended with exit 1 after its output.
    @Test func anotherHistoryGetsTheStepsThatNameNoConversation() throws {
        let scratch = try TemporaryDirectory("cli-demo")
        let history = scratch.path + "/history.jsonl"
        let sample = try readFile(Suggest.packageRoot + "/SampleData/donations.jsonl")
        let lines = sample.split(separator: 0x0A).prefix(40).flatMap { line -> [UInt8] in Array(line) + [0x0A] }
        try writeFile(history, lines)
        let demo = try Suggest.run(["demo", "--data", history], scratch: scratch.path)
        #expect(demo.status == 0, "\(demo)")
        #expect(demo.output.contains("imported 40 donations"))
        let sampleOnly = ["$ suggest share", "$ suggest feedback", "$ suggest block", "$ suggest delete", "--person"]
        for step in sampleOnly {
            #expect(!demo.output.contains(step), "\(demo.output)")
        }
    }

    @Test func aHistoryThatCannotBeReadIsAUsageError() throws {
        let scratch = try TemporaryDirectory("cli-demo")
        let outcome = try Suggest.run(["demo", "--data", scratch.path + "/none.jsonl"], scratch: scratch.path)
        #expect(
            outcome.status == 64
                && outcome.error
                    == "suggest demo: cannot read \(scratch.path)/none.jsonl; give --data a readable FILE\n"
        )
    }

    /// The throwaway store goes where temporary files go, `TMPDIR` first: on a machine whose /tmp is small or
    /// read-only the demo ran nowhere.
    @Test func theThrowawayStoreIsMadeInTMPDIR() throws {
        let scratch = try TemporaryDirectory("cli-demo")
        let demo = try Suggest.run(["demo"], scratch: scratch.path, environment: ["TMPDIR": scratch.path])
        #expect(demo.status == 0, "\(demo)")
        #expect(demo.output.contains("STORE=" + scratch.path + "/suggest-demo-"), "\(demo.output.prefix(600))")

        let missing = scratch.path + "/none"
        let refused = try Suggest.run(["demo"], scratch: scratch.path, environment: ["TMPDIR": missing])
        #expect(refused.status == 1)
        #expect(
            refused.error.hasPrefix("suggest demo: cannot create a temporary store directory in \(missing): ")
                && refused.error.hasSuffix("; set TMPDIR to a writable directory\n"), "\(refused.error)")
    }
}
