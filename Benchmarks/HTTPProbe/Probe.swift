import CSystem
import Dispatch
import HTTPServer
import Synchronization

/// `http-probe [--host H] [--port N] [--threads N] [--memory BYTES] [--port-file PATH]
/// [--events-file PATH] [--quiet]`
///
/// Serves until SIGTERM or SIGINT, then stops gracefully (10 s) and exits 0. Routes:
/// - `GET /`: `ok`, the trivial route that wrk measures;
/// - `GET /json`: a small JSON document;
/// - `GET /slow?ms=N`: answers after N milliseconds (and notes its start in the events file);
/// - `GET /reloads`: how many SIGHUPs arrived;
/// - `GET /mask`: whether `ProcessSignals.Signal.all` are blocked on the worker thread that answers.
enum Probe {
    static func run(_ arguments: [String]) -> Int32 {
        let state = ProbeState()
        let signals: ProcessSignals
        do {
            // First of all, before any thread exists: every thread started from here on has the signals blocked.
            signals = try ProcessSignals { signal in state.received(signal) }
        } catch {
            return fail(error.message, status: 1)
        }
        var configuration = HTTPServer.Configuration()
        var portFile: String?
        var quiet = false
        var index = 1
        while index < arguments.count {
            let flag = arguments[index]
            let value = index + 1 < arguments.count ? arguments[index + 1] : nil
            switch flag {
            case "--host": configuration.host = value ?? ""
            case "--port": configuration.port = value.flatMap { Int($0) } ?? -1
            case "--threads": configuration.workerThreads = value.flatMap { Int($0) } ?? -1
            case "--memory": configuration.memoryLimitPerConnection = value.flatMap { Int($0) } ?? -1
            case "--port-file": portFile = value
            case "--events-file": value.map(state.writeEvents(to:))
            case "--quiet":
                quiet = true
                index += 1
                continue
            default: return fail("unknown option \(flag); see the usage at the top of Probe.swift", status: 64)
            }
            guard value != nil else { return fail("\(flag) needs a value", status: 64) }
            index += 2
        }
        let server: HTTPServer
        let logs = !quiet
        do {
            server = try HTTPServer(
                configuration: configuration, log: { line in if logs { printError("http-probe: \(line)") } },
                handler: { request in respond(to: request, state: state) })
        } catch {
            return fail(error.message, status: 1)
        }
        state.serve(server)
        printError("listening on http://\(server.address)")
        if let portFile {
            let text = "\(server.address.port)\n"
            let file = fopen(portFile, "w")
            if let file {
                fputs(text, file)
                fclose(file)
            }
        }
        state.finished.wait()
        signals.stop()
        return 0
    }

    static func respond(to request: HTTPRequest, state: ProbeState) -> HTTPResponse {
        guard request.method == .get || request.method == .head else {
            return .error(status: .methodNotAllowed, code: "method_not_allowed", message: "only GET is served")
        }
        switch request.pathSegments {
        case []: return .text("ok\n")
        case ["json"]: return .json(#"{"ok":true,"server":"http-probe"}"#)
        case ["slow"]:
            let milliseconds = request.queryValue("ms").flatMap { Int($0) } ?? 500
            state.note("slow \(milliseconds) started")
            var pause = timespec(tv_sec: milliseconds / 1000, tv_nsec: (milliseconds % 1000) * 1_000_000)
            _ = nanosleep(&pause, nil)
            return .text("slept \(milliseconds) ms\n")
        case ["reloads"]: return .text("\(state.reloads)\n")
        case ["mask"]:
            var mask = sigset_t()
            pthread_sigmask(SIG_BLOCK, nil, &mask)
            let blocked = ProcessSignals.Signal.all.allSatisfy { sigismember(&mask, $0.number) == 1 }
            return .text(blocked ? "blocked\n" : "not blocked\n")
        default: return .error(status: .notFound, code: "not_found", message: "no such route")
        }
    }

    static func fail(_ message: String, status: Int32) -> Int32 {
        printError("http-probe: \(message)")
        return status
    }
}

/// What the signal thread and the worker threads share.
final class ProbeState: Sendable {
    private let server = Mutex<HTTPServer?>(nil)
    private let reloadCount = Atomic<Int>(0)
    let finished = DispatchSemaphore(value: 0)

    var reloads: Int { reloadCount.load(ordering: .relaxed) }

    private let eventsFile = Mutex<String?>(nil)

    /// Where `note` appends its lines (`--events-file`).
    func writeEvents(to path: String) { eventsFile.withLock { $0 = path } }

    /// Appends one line to the events file, if there is one: how a test learns that a request has begun when
    /// asking the server would wait behind that very request on a busy worker thread.
    func note(_ event: String) {
        guard let path = eventsFile.withLock({ $0 }) else { return }
        let descriptor = system_open_creating(path, O_WRONLY | O_APPEND | O_CREAT, 0o644)
        guard descriptor >= 0 else { return }
        let bytes = Array((event + "\n").utf8)
        _ = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        close(descriptor)
    }

    func serve(_ server: HTTPServer) { self.server.withLock { $0 = server } }

    func received(_ signal: ProcessSignals.Signal) {
        if signal == .hangUp {
            reloadCount.add(1, ordering: .relaxed)
            printError("http-probe: SIGHUP, reload \(reloads)")
            return
        }
        guard signal.asksToStop else {
            printError("http-probe: \(signal) ignored")
            return
        }
        guard let server = server.withLock({ $0.take() }) else { return }
        printError("http-probe: \(signal), stopping")
        let abandoned = server.stop(gracePeriod: .seconds(10))
        printError("http-probe: stopped, \(abandoned) requests cut off")
        finished.signal()
    }
}

/// Writes a line to standard error in one `write`, so lines from several threads do not interleave.
func printError(_ line: String) {
    let bytes = Array((line + "\n").utf8)
    _ = bytes.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
}
