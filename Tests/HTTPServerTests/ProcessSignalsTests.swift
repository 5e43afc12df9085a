import SuggestTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Signals in a process of its own (the built `http-probe`): a test runner's threads do not block SIGTERM, so
/// sending it one would end the runner.
@Suite struct ProcessSignalsTests {
    /// `http-probe` beside the test bundle (`swift build --build-tests` builds both into one directory), else under
    /// `.build/debug`.
    static let probe: String = {
        var directory = CommandLine.arguments.first ?? ""
        while let slash = directory.lastIndex(of: "/") {
            directory = String(directory[..<slash])
            if access(directory + "/http-probe", X_OK) == 0 { return directory + "/http-probe" }
        }
        return Suggest.packageRoot + "/.build/debug/http-probe"
    }()

    /// Starts the probe on a free port and waits for the port it reports.
    static func startProbe(in scratch: TemporaryDirectory) throws -> (ChildProcess, Int) {
        guard access(probe, X_OK) == 0 else {
            throw HarnessError("no http-probe at \(probe); run 'swift build --build-tests' first")
        }
        let child = try ChildProcess(
            executable: probe,
            arguments: [
                "--port", "0", "--threads", "2", "--port-file", scratch("port"), "--events-file", scratch("events"),
            ],
            environment: ["PATH": "/usr/bin:/bin", "SWIFT_BACKTRACE": "enable=no"], inputPath: nil,
            scratch: scratch.path)
        var port: Int?
        _ = eventually(within: 10) {
            let text = (try? readFile(scratch("port"))).map { String(decoding: $0, as: UTF8.self) } ?? ""
            port = text.hasSuffix("\n") ? Int(text.dropLast()) : nil
            return port != nil || child.hasExited
        }
        guard let port else { throw HarnessError("http-probe did not start: \(child.wait(timeout: 1))") }
        return (child, port)
    }

    static func get(_ path: String, port: Int) throws -> WireResponse {
        let connection = try TestConnection.connected(port: port)
        return try connection.exchange("GET \(path) HTTP/1.1\r\nHost: x\r\n\r\n")
    }

    @Test func sigtermStopsGracefullyAndSighupCallsTheHandler() throws {
        let scratch = try TemporaryDirectory("http-probe")
        let (child, port) = try ProcessSignalsTests.startProbe(in: scratch)
        // Worker threads never take the signals: they are blocked there.
        #expect(try ProcessSignalsTests.get("/mask", port: port).text == "blocked\n")

        child.send(SIGHUP)
        #expect(eventually { (try? ProcessSignalsTests.get("/reloads", port: port))?.text == "1\n" })
        child.send(SIGHUP)
        #expect(eventually { (try? ProcessSignalsTests.get("/reloads", port: port))?.text == "2\n" })
        #expect(!child.hasExited)

        let slow = try TestConnection.connected(port: port)
        try slow.send("GET /slow?ms=4000 HTTP/1.1\r\nHost: x\r\n\r\n")
        // Its handler has begun (asking the server could wait behind it, on its worker thread).
        #expect(
            eventually {
                (try? readFile(scratch("events"))).map { String(decoding: $0, as: UTF8.self) } == "slow 4000 started\n"
            })
        child.send(SIGTERM)
        // Refused while the slow request still runs (its 4 s leave a loaded machine's signal thread its time).
        #expect(
            eventually(within: 3) {
                if case .failure(let failure) = TestConnection.open(port: port) { failure.refused } else { false }
            })
        slow.setTimeout(10)
        let response = try slow.readResponse()
        #expect(response.status == 200)
        #expect(response.text == "slept 4000 ms\n")
        let outcome = child.wait(timeout: 10)
        #expect(outcome.status == 0, "\(outcome)")
        #expect(outcome.error.contains("listening on http://127.0.0.1:\(port)\n"))
        #expect(outcome.error.contains("SIGHUP, reload 2"))
        #expect(outcome.error.contains("stopped, 0 requests cut off"))
    }

    @Test func sigintStopsTheServerToo() throws {
        let scratch = try TemporaryDirectory("http-probe")
        let (child, port) = try ProcessSignalsTests.startProbe(in: scratch)
        #expect(try ProcessSignalsTests.get("/", port: port).text == "ok\n")
        child.send(SIGINT)
        let outcome = child.wait(timeout: 10)
        #expect(outcome.status == 0, "\(outcome)")
        #expect(outcome.error.contains("SIGINT, stopping"))
    }

    /// Signals whose default action ends a process, and that ask nothing of a server, reach the handler instead:
    /// before, a stray SIGUSR1 ended the server, with no drain. SIGQUIT stops it as gracefully
    /// as SIGTERM.
    @Test func signalsThatAskNothingLeaveTheServerRunningAndSIGQUITStopsIt() throws {
        let scratch = try TemporaryDirectory("http-probe")
        let (child, port) = try ProcessSignalsTests.startProbe(in: scratch)
        for signal in [SIGUSR1, SIGUSR2, SIGALRM, SIGVTALRM, SIGPROF, SIGIO] { child.send(signal) }
        #expect(
            eventually {
                (try? ProcessSignalsTests.get("/", port: port))?.text == "ok\n"
                    && child.standardErrorSoFar().contains("SIGIO ignored")
            })
        #expect(!child.hasExited)
        child.send(SIGQUIT)
        let outcome = child.wait(timeout: 10)
        #expect(outcome.status == 0, "\(outcome)")
        for name in ["SIGUSR1", "SIGUSR2", "SIGALRM", "SIGVTALRM", "SIGPROF", "SIGIO"] {
            #expect(outcome.error.contains("http-probe: \(name) ignored"), "\(outcome.error)")
        }
        #expect(outcome.error.contains("SIGQUIT, stopping"))
    }
}
