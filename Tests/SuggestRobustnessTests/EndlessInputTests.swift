import SuggestTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Input without end (issue 13, items 2 and 3): `import` and `eval` refuse a line over 64 MiB as soon as it passes
/// the limit (exit 64), in bounded memory, instead of reading to an end that never comes.
@Suite struct EndlessInputTests {
    /// The address space a child may use: the old `eval` grew without bound (14.7 GB in 60 s), the new one holds
    /// about 140 MB; a static Swift binary starts in far less than this.
    static let addressSpace = 2 << 30

    /// Runs the binary with standard input from `inputPath`, its address space limited when `prlimit` exists.
    static func run(_ arguments: [String], inputPath: String?, fixture: StoreFixture) throws -> ProcessOutcome {
        let limited = access("/usr/bin/prlimit", X_OK) == 0
        let command =
            (limited ? ["/usr/bin/prlimit", "--as=\(addressSpace)", Suggest.binary] : [Suggest.binary]) + arguments
        let child = try ChildProcess(
            executable: command[0], arguments: Array(command.dropFirst()),
            environment: Suggest.environment(home: fixture.scratch), inputPath: inputPath, scratch: fixture.scratch)
        return child.wait(timeout: 60)
    }

    static let tooLong = "the line is longer than 64 MiB"

    @Test(
        arguments: [
            (["import", "-"], "/dev/zero"), (["import", "/dev/zero"], nil),
            (["import", "-", "--skip-invalid"], "/dev/zero"),
            (["import", "/dev/zero", "--skip-invalid", "--quiet"], nil),
        ] as [([String], String?)])
    func importRefusesAnEndlessLine(_ arguments: [String], input: String?) throws {
        let fixture = try StoreFixture("endless-import")
        try fixture.keepEverything()
        try fixture.importLines(Donations.lines(Donations.make(count: 30, prefix: "e", conversations: 5, seed: 2)))
        let before = try fixture.succeed(["export"])
        let outcome = try Self.run(arguments + ["--store", fixture.store], inputPath: input, fixture: fixture)
        #expect(!outcome.timedOut && outcome.status == 64, "\(outcome)")
        #expect(outcome.error.hasPrefix("suggest import: invalid input: line 1: \(Self.tooLong)"), "\(outcome)")
        #expect(outcome.errorLines.count == 1)
        #expect(try fixture.succeed(["export"]) == before)
    }

    @Test(arguments: [(["eval", "-"], "/dev/zero"), (["eval", "/dev/zero", "--json"], nil)] as [([String], String?)])
    func evalRefusesAnEndlessLineInBoundedMemory(_ arguments: [String], input: String?) throws {
        let fixture = try StoreFixture("endless-eval")
        let outcome = try Self.run(arguments, inputPath: input, fixture: fixture)
        #expect(!outcome.timedOut && outcome.signal == nil && outcome.status == 64, "\(outcome)")
        #expect(outcome.error == "suggest eval: invalid input: line 1: \(Self.tooLong) (a donation is a few KB)\n")
    }

    /// Valid lines, then a line of 65 MiB, then more: the error names the long line, and an invalid line before
    /// it wins; nothing is recorded either way, with or without `--skip-invalid`.
    @Test func theLinesBeforeTheLongOneComeFirst() throws {
        let fixture = try StoreFixture("long-line")
        try fixture.keepEverything()
        let good = Donations.lines(Donations.make(count: 2, prefix: "l", conversations: 2, seed: 3))
        var bytes = Array((good.joined(separator: "\n") + "\n").utf8)
        bytes += [UInt8](repeating: 0x20, count: 65 << 20)
        bytes += Array(("\n" + good[0] + "\n").utf8)
        let path = fixture.scratch + "/long.jsonl"
        try writeFile(path, bytes)
        for extra in [[], ["--skip-invalid"]] {
            let outcome = try Self.run(
                ["import", path, "--store", fixture.store] + extra, inputPath: nil, fixture: fixture)
            #expect(
                outcome.status == 64
                    && outcome.error.hasPrefix("suggest import: invalid input: line 3: \(Self.tooLong)"), "\(outcome)")
            let evaluated = try Self.run(["eval", path], inputPath: nil, fixture: fixture)
            #expect(evaluated.status == 64 && evaluated.error.contains("line 3: \(Self.tooLong)"), "\(evaluated)")
        }
        #expect(try fixture.succeed(["export"]) == "")
        // An invalid second line is reported rather than the long third one.
        try writeFile(path, Array((good[0] + "\n{\n").utf8) + [UInt8](repeating: 0x20, count: 65 << 20))
        let invalid = try Self.run(["import", path, "--store", fixture.store], inputPath: nil, fixture: fixture)
        #expect(
            invalid.status == 64 && invalid.error.hasPrefix("suggest import: invalid input: line 2: invalid JSON"),
            "\(invalid)")
        let evalInvalid = try Self.run(["eval", path], inputPath: nil, fixture: fixture)
        #expect(evalInvalid.status == 64 && evalInvalid.error.contains("line 2: invalid JSON"), "\(evalInvalid)")
    }
}
