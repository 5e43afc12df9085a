import SuggestTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Failures of the system calls a command makes, injected with `strace -e inject` (Debian's strace, which
/// `scripts/setup.sh` installs). A sweep walked about 7,000 such faults through every writing command; these are
/// the ones that found something, kept. Where this machine does not let a process trace its child, each test says
/// so and checks nothing.
@Suite struct SyscallFaultTests {
    /// `strace`, if it is installed and may trace a child here.
    static let strace: String? = {
        let path = "/usr/bin/strace"
        guard access(path, X_OK) == 0, let scratch = try? TemporaryDirectory("strace-probe"),
            let probe = try? ChildProcess(
                executable: path, arguments: ["-qq", "-o", "/dev/null", "/bin/true"], environment: [:],
                inputPath: nil, scratch: scratch.path)
        else { return nil }
        return probe.wait(timeout: 30).status == 0 ? path : nil
    }()

    /// `strace` failing `call` as `fault` says (`pwrite64:error=EIO:when=1+`), for the calls on `path` only when
    /// given.
    static func injecting(_ call: String, _ fault: String, on path: String? = nil) -> [String]? {
        guard let strace else {
            print("SyscallFaultTests: strace is missing or may not trace here; nothing checked")
            return nil
        }
        return [strace, "-f", "-qq", "-o", "/dev/null"] + (path.map { ["-P", $0] } ?? [])
            + ["-e", "trace=\(call)", "-e", "inject=\(call):\(fault)"]
    }

    /// An import is committed before its checkpoint, which exited 1 when it failed for another reason than a full
    /// disk (a write to the database file or a flush failing with EIO, a `stat` failing once): a retry recorded the
    /// lines without identifiers a second time. Now only an import that recorded nothing fails. The `stat`s are
    /// walked one by one, before the commit and after it.
    @Test func anImportsExitSaysWhetherItRecorded() throws {
        let fixture = try StoreFixture("syscall-import")
        try fixture.keepEverything()
        let history = fixture.root("history.jsonl")
        let lines = (0..<50).map { #"{"date":\#(1_796_000_000 + $0),"intent":{"conversationIdentifier":"c-\#($0 % 7)"}}"# }
        try writeFile(history, lines.joined(separator: "\n") + "\n")
        let database = fixture.store + "/suggest.sqlite"
        var faults: [(call: String, fault: String, path: String?)] = [
            ("pwrite64", "error=EIO:when=1+", database), ("fdatasync", "error=EIO:when=1+", nil),
        ]
        faults += (1...80).map { ("newfstatat", "error=EIO:when=\($0)", database) }
        var recordedFailing = 0
        var held = try donations(in: fixture)
        for (call, fault, path) in faults {
            // A log that is not empty, so that a flush has something to do.
            try fixture.succeed(["donate", "--conversation", "z"])
            held += 1
            guard let wrapper = Self.injecting(call, fault, on: path) else { return }
            let outcome = try Suggest.run(
                ["import", history, "--store", fixture.store], scratch: fixture.scratch, wrapper: wrapper)
            let now = try donations(in: fixture)
            #expect(outcome.signal == nil && !outcome.timedOut, "\(call) \(fault): \(outcome)")
            #expect(
                (outcome.status == 0 && now == held + 50) || (outcome.status != 0 && now == held),
                "\(call) \(fault): \(outcome) with \(now - held) recorded")
            if outcome.status == 0 && now == held + 50 && !outcome.error.isEmpty {
                recordedFailing += 1
                #expect(outcome.error.contains("do not import them again"), "\(call) \(fault): \(outcome)")
            }
            held = now
        }
        #expect(recordedFailing >= 2, "the write and the flush failed after the commit")
    }

    /// A `stat` of the store that failed with EIO said "no such store: ... record a donation first".
    @Test func aStoreThatCannotBeCheckedIsNotAMissingOne() throws {
        let fixture = try StoreFixture("syscall-stat")
        try fixture.succeed(["donate", "--conversation", "c-1"])
        guard let wrapper = Self.injecting("newfstatat", "error=EIO:when=1", on: fixture.store + "/suggest.sqlite")
        else { return }
        let outcome = try Suggest.run(
            ["delete", "--conversation", "c-1", "--store", fixture.store], scratch: fixture.scratch, wrapper: wrapper)
        #expect(outcome.status == 1, "\(outcome)")
        #expect(outcome.error.contains("Input/output error") && !outcome.error.contains("no such store"), "\(outcome)")
        #expect(try fixture.succeed(["export"]).contains("c-1"), "nothing was deleted")

        // A file that looks deleted (ENOENT) after the store was opened: its message says what to do, and was
        // followed by the advice for a store never made ("('suggest donate' or 'suggest import') or check --store").
        var saidGone = 0
        for when in 1...30 {
            guard
                let wrapper = Self.injecting("newfstatat", "error=ENOENT:when=\(when)", on: fixture.store + "/suggest.sqlite")
            else { return }
            let listed = try Suggest.run(["list", "--store", fixture.store], scratch: fixture.scratch, wrapper: wrapper)
            guard listed.error.contains("was deleted or moved") else { continue }
            saidGone += 1
            #expect(listed.errorLines.count == 1 && !listed.error.contains("suggest donate"), "\(listed)")
        }
        #expect(saidGone > 0, "no stat of the database file was taken for its deletion")
    }

    /// A static executable's runtime finds its arguments through /proc/self/maps, the first file it opens; without
    /// it (a sandbox that hides it) the command line trapped (SIGILL) with a Swift stack.
    @Test func argumentsThatCannotBeReadAreAnErrorNotACrash() throws {
        let scratch = try TemporaryDirectory("syscall-maps")
        guard let wrapper = Self.injecting("openat", "error=ENOENT:when=1") else { return }
        let outcome = try Suggest.run(["--version"], scratch: scratch.path, wrapper: wrapper)
        #expect(outcome.signal == nil, "\(outcome)")
        let said = outcome.errorLines.filter { $0.hasPrefix("suggest") }
        #expect(outcome.status == 0 || (outcome.status == 1 && said.count == 1), "\(outcome)")
    }

    private func donations(in fixture: StoreFixture) throws -> Int {
        try fixture.succeed(["export"]).split(separator: "\n").count
    }
}
