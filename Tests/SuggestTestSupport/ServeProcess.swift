#if canImport(Glibc)
    import Glibc
#endif

/// `suggest serve` running as a child process on a free loopback port, for end-to-end tests: started with the
/// given options, ready once it prints `listening on http://HOST:PORT`, stopped (SIGTERM, then SIGKILL) when the
/// value goes away.
public final class ServeProcess {
    public let process: ChildProcess
    public let port: Int
    public var client: HTTPClient { HTTPClient(port: port) }

    /// Starts the server and waits (up to 30 s) for it to listen.
    /// - Parameters:
    ///   - arguments: options after `serve` (`--store`, `--keys` ...); `--port 0` is added.
    ///   - wrapper: a command the server runs under (`setpriv --reuid=65534 ...`), as for `Suggest.start`. The server's
    ///     own executable is then run, not `suggest serve`: another user may not be able to reach the build's
    ///     directory (a clean clone's temporary one is the owner's alone) to find it beside `suggest`, which the
    ///     wrapper, run as root, starts all the same.
    public init(
        _ arguments: [String], scratch: String, environment: [String: String] = [:], wrapper: [String] = []
    ) throws(HarnessError) {
        let server = String(Suggest.binary.dropLast("suggest".count)) + "suggest-serve"
        process = try Suggest.start(
            ["serve", "--port", "0"] + arguments, scratch: scratch, environment: environment, wrapper: wrapper,
            executable: wrapper.isEmpty ? nil : server)
        let deadline = monotonicSeconds() + 30
        while true {
            let text = process.standardErrorSoFar()
            if let range = text.firstRange(of: "listening on http://127.0.0.1:") {
                let digits = text[range.upperBound...].prefix(while: { $0.isNumber })
                if let port = Int(digits), text[range.upperBound...].dropFirst(digits.count).first == "\n" {
                    self.port = port
                    return
                }
            }
            if process.hasExited {
                throw HarnessError("suggest serve ended before it listened: \(process.wait())")
            }
            if monotonicSeconds() > deadline {
                throw HarnessError("suggest serve did not listen within 30 s: \(text.suffix(500))")
            }
            sleepSeconds(0.02)
        }
    }

    deinit {
        if !process.hasExited {
            process.send(SIGTERM)
            process.wait(timeout: 15)
        }
    }

    /// Sends SIGTERM and waits for the process to end.
    @discardableResult
    public func stop(timeout: Double = 30) -> ProcessOutcome {
        process.send(SIGTERM)
        return process.wait(timeout: timeout)
    }
}
