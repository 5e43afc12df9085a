import SuggestTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Failures of the system calls a command makes, injected with `strace -e inject` (Debian's strace, which
/// `scripts/setup.sh` installs). A sweep walked about 7,000 such faults through every writing command; these are
/// the ones that found something, kept. Where this machine does not let a process trace its child and inject a
/// failure, each test is cancelled, saying so.
@Suite struct SyscallFaultTests {
    /// `strace`, if it is installed and may trace a child here and fail its calls.
    static let strace: String? = {
        let places: [String] = ["/usr/bin/strace", "/bin/strace"]
        guard let path = places.first(where: { place in access(place, X_OK) == 0 }),
            let scratch = try? TemporaryDirectory("strace-probe"),
            let probe = try? ChildProcess(
                executable: path,
                arguments: [
                    "-qq", "-o", "/dev/null", "-e", "trace=openat", "-e", "inject=openat:error=ENOENT:when=10000",
                    "/bin/true",
                ],
                environment: [:], inputPath: nil, scratch: scratch.path)
        else { return nil }
        return probe.wait(timeout: 30).status == 0 ? path : nil
    }()

    /// `strace` failing `call` as `fault` says (`pwrite64:error=EIO:when=1+`), for the calls on `path` only when
    /// given.
    static func injecting(_ call: String, _ fault: String, on path: String? = nil) throws -> [String] {
        guard let strace else { try Test.cancel("strace is missing, or may not trace a child and fail its calls here") }
        // `--seccomp-bpf` stops the child only at the traced call, not at every one.
        return [strace, "-f", "--seccomp-bpf", "-qq", "-o", "/dev/null"] + (path.map { ["-P", $0] } ?? [])
            + ["-e", "trace=\(call)", "-e", "inject=\(call):\(fault)"]
    }

    /// An import is committed before its checkpoint, which exited 1 when it failed for another reason than a full
    /// disk (a write to the database file failing with EIO, a `stat` failing once): a retry recorded the lines
    /// without identifiers a second time. Now an import fails only when it recorded nothing, or when the flush of
    /// what it recorded failed, which it says. The `stat`s are walked one by one, before the commit and after it.
    @Test func anImportsExitSaysWhetherItRecorded() throws {
        let fixture = try StoreFixture("syscall-import")
        try fixture.keepEverything()
        let history = fixture.root("history.jsonl")
        let lines = (0..<50).map {
            #"{"date":\#(1_796_000_000 + $0),"intent":{"conversationIdentifier":"c-\#($0 % 7)"}}"#
        }
        try writeFile(history, lines.joined(separator: "\n") + "\n")
        let database = fixture.store + "/suggest.sqlite"
        var faults: [(call: String, fault: String, path: String?)] = [
            ("pwrite64", "error=EIO:when=1+", database), ("fdatasync", "error=EIO:when=1+", nil),
        ]
        faults += (1...80).map { ("newfstatat", "error=EIO:when=\($0)", database) }
        var recordedFailing = 0
        var unflushed = 0
        var held = try donations(in: fixture)
        for (call, fault, path) in faults {
            // A log that is not empty, so that a flush has something to do.
            try fixture.succeed(["donate", "--conversation", "z"])
            held += 1
            let outcome = try Suggest.run(
                ["import", history, "--store", fixture.store], scratch: fixture.scratch,
                wrapper: try Self.injecting(call, fault, on: path))
            let now = try donations(in: fixture)
            #expect(outcome.signal == nil && !outcome.timedOut, "\(call) \(fault): \(outcome)")
            if outcome.status == 1 && now == held + 50 {
                // Recorded, but not flushed: said, with what to look at before a retry.
                unflushed += 1
                #expect(outcome.error.contains("look at 'suggest export'"), "\(call) \(fault): \(outcome)")
            } else {
                #expect(
                    (outcome.status == 0 && now == held + 50) || (outcome.status != 0 && now == held),
                    "\(call) \(fault): \(outcome) with \(now - held) recorded")
            }
            if outcome.status == 0 && now == held + 50 && !outcome.error.isEmpty {
                recordedFailing += 1
                #expect(outcome.error.contains("do not import them again"), "\(call) \(fault): \(outcome)")
            }
            held = now
        }
        #expect(recordedFailing >= 1, "the database file's write failed after the commit")
        #expect(unflushed == 1, "the flush failed")
    }

    /// A `stat` of the store that failed with EIO said "no such store: ... record a donation first".
    @Test func aStoreThatCannotBeCheckedIsNotAMissingOne() throws {
        let fixture = try StoreFixture("syscall-stat")
        try fixture.succeed(["donate", "--conversation", "c-1"])
        let wrapper = try Self.injecting("newfstatat", "error=EIO:when=1", on: fixture.store + "/suggest.sqlite")
        let outcome = try Suggest.run(
            ["delete", "--conversation", "c-1", "--store", fixture.store], scratch: fixture.scratch, wrapper: wrapper)
        #expect(outcome.status == 1, "\(outcome)")
        #expect(outcome.error.contains("Input/output error") && !outcome.error.contains("no such store"), "\(outcome)")
        #expect(try fixture.succeed(["export"]).contains("c-1"), "nothing was deleted")

        // A file that looks deleted (ENOENT) after the store was opened: its message says what to do, and was
        // followed by the advice for a store never made ("('suggest donate' or 'suggest import') or check --store").
        var saidGone = 0
        for when in 1...30 {
            let wrapper = try Self.injecting(
                "newfstatat", "error=ENOENT:when=\(when)", on: fixture.store + "/suggest.sqlite")
            let listed = try Suggest.run(
                ["list", "--store", fixture.store], scratch: fixture.scratch, wrapper: wrapper)
            guard listed.error.contains("was deleted or moved") else { continue }
            saidGone += 1
            #expect(listed.errorLines.count == 1 && !listed.error.contains("suggest donate"), "\(listed)")
        }
        #expect(saidGone > 0, "no stat of the database file was taken for its deletion")
    }

    /// A static executable's runtime finds its arguments through /proc/self/maps; without it (a sandbox that hides
    /// it) the command line trapped (SIGILL) with a Swift stack.
    @Test func argumentsThatCannotBeReadAreAnErrorNotACrash() throws {
        let scratch = try TemporaryDirectory("syscall-maps")
        let wrapper = try Self.injecting("openat", "error=ENOENT", on: "/proc/self/maps")
        let outcome = try Suggest.run(["--version"], scratch: scratch.path, wrapper: wrapper)
        #expect(outcome.signal == nil, "\(outcome)")
        // strace says on standard error where it resolved the path.
        let said = outcome.errorLines.filter { $0.hasPrefix("suggest") }
        #expect(outcome.status == 1 && said.count == 1, "\(outcome)")
    }

    /// An import into a Redis Cluster whose connection was reset before a round's reply came: the rounds before
    /// were undone, and that round's donations (5,000 of 12,000) stayed, so a retry recorded them twice; a server
    /// answered such a batch "retry later". The round's donations are taken back too now. Each of the import's
    /// first reads is failed in turn (strace counts them per thread).
    @Test func aRedisImportWhoseReplyIsLostLeavesNothing() throws {
        let cluster = try LocalRedisCluster.shared("redis-cluster-tests")
        let scratch = try TemporaryDirectory("syscall-redis")
        _ = try Suggest.run(
            ["config", "--store", cluster.url, "--max-age-days", "0", "--idle-days", "0"], scratch: scratch.path)
        // Accounts on each of the three masters, most likely: whose connection a read belongs to depends on it.
        for (account, when) in (0..<3).flatMap({ index in
            (1...6).map { ("lost-reply-\(index)-\(UInt32.random(in: 0...UInt32.max))", $0) }
        }) {
            let history = scratch("history-\(account).jsonl")
            let lines = (0..<6_000).map {
                #"{"account":"\#(account)","date":\#(1_796_000_000 + $0),"intent":{"conversationIdentifier":"c-\#($0 % 97)"}}"#
            }
            try writeFile(history, lines.joined(separator: "\n") + "\n")
            let outcome = try Suggest.run(
                ["import", history, "--store", cluster.url], scratch: scratch.path,
                wrapper: try Self.injecting("read", "error=ECONNRESET:when=\(when)"))
            let exported = try Suggest.run(
                ["export", "--store", cluster.url, "--account", account], scratch: scratch.path)
            let held = exported.output.split(separator: "\n").count
            #expect(outcome.signal == nil && !outcome.timedOut, "read \(when): \(outcome)")
            #expect(
                (outcome.status == 0 && held == 6_000) || (outcome.status != 0 && held == 0),
                "read \(when): \(outcome) with \(held) left")
            _ = try Suggest.run(
                ["delete", "--store", cluster.url, "--account", account, "--all"], scratch: scratch.path)
        }
    }

    /// A listening socket that one `accept4` found unusable (EINVAL, EBADF, ENOTSOCK) ended the thread that
    /// accepts: the server lived on, answered no new connection, and said nothing. Only a server that is stopping
    /// ends it now; otherwise it says so and accepts again.
    @Test func anAcceptThatFailsOnceIsNotTheServersEnd() throws {
        let fixture = try StoreFixture("syscall-accept")
        let server = try ServeProcess(
            ["--store", fixture.store], scratch: fixture.scratch,
            wrapper: Self.injecting("accept4", "error=EINVAL:when=1"))
        for _ in 0..<2 {
            let answer = try HTTPClient(port: server.port, timeout: 10).request("GET", "/v1/health/live")
            #expect(answer.status == 200, "\(answer)")
        }
        // The server itself is stopped, as a supervisor would: strace, given SIGTERM, takes its tracee down with it.
        let children = try readFile("/proc/\(server.process.pid)/task/\(server.process.pid)/children")
        let tracee = try #require(pid_t(String(decoding: children, as: UTF8.self).split(separator: " ").first ?? ""))
        kill(tracee, SIGTERM)
        let outcome = server.process.wait(timeout: 30)
        #expect(outcome.status == 0, "\(outcome)")
        #expect(outcome.error.contains("cannot accept a connection: "), "\(outcome.error.suffix(800))")
    }

    /// A server whose process the system refuses new threads (a container's limit on processes), once it has
    /// answered a donation and its idle threads have gone: each donation hung for as long as that lasted (the
    /// group writer's queue asked libdispatch for a thread, which retried inside `async` on the request's thread),
    /// then was refused as "locked by another write". The writer has a thread of its own now.
    @Test func aServerRefusedNewThreadsStillRecords() throws {
        guard let strace = Self.strace else {
            try Test.cancel("strace is missing, or may not trace a child and fail its calls here")
        }
        let fixture = try StoreFixture("syscall-threads")
        let server = try ServeProcess(["--store", fixture.store], scratch: fixture.scratch)
        let body = Array(#"{"date":1796000000,"intent":{"conversationIdentifier":"c"}}"#.utf8)
        func donate() throws -> Int {
            try HTTPClient(port: server.port, timeout: 10).request(
                "POST", "/v1/accounts/a/donations", headers: [("Content-Type", "application/json")], body: body
            ).status
        }
        #expect(try donate() == 201)
        sleepSeconds(20)  // libdispatch lets its idle threads go
        let refusing = try ChildProcess(
            executable: strace,
            arguments: [
                "-f", "-qq", "-o", "/dev/null", "-p", String(server.process.pid), "-e", "trace=clone,clone3",
                "-e", "inject=clone,clone3:error=EAGAIN",
            ],
            environment: [:], inputPath: nil, scratch: fixture.scratch)
        defer {
            refusing.send(SIGTERM)
            refusing.wait(timeout: 10)
        }
        sleepSeconds(1)  // attached
        #expect(try donate() == 201)
    }

    private func donations(in fixture: StoreFixture) throws -> Int {
        try fixture.succeed(["export"]).split(separator: "\n").count
    }
}
