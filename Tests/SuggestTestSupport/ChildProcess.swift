import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// How a child process ended.
public struct ProcessOutcome: Sendable, CustomStringConvertible {
    /// The exit status, or `nil` when a signal ended the process.
    public var status: Int32?
    /// The signal that ended the process, if one did.
    public var signal: Int32?
    public var standardOutput: [UInt8]
    public var standardError: [UInt8]
    /// Whether the test's time limit ran out and the process was killed for it.
    public var timedOut: Bool

    public var output: String { String(decoding: standardOutput, as: UTF8.self) }
    public var error: String { String(decoding: standardError, as: UTF8.self) }

    /// The lines written on standard error.
    public var errorLines: [Substring] { error.split(separator: "\n") }

    public var description: String {
        let ending = status.map { "exit \($0)" } ?? "signal \(signal ?? 0)"
        return "\(ending)\(timedOut ? " (timed out)" : ""); stdout: \(output.prefix(400)); stderr: \(error.prefix(400))"
    }
}

/// A process started with `posix_spawn`: standard input from a file (or `/dev/null`), standard output and error into
/// files, so that a large output never blocks the child and a killed child leaves what it wrote so far.
///
/// Not `Sendable`: one test thread starts, waits for and kills it.
public final class ChildProcess {
    public let pid: pid_t
    private let outputPath: String
    private let errorPath: String
    private var finished: ProcessOutcome?

    /// Starts `executable` with `arguments` (without `argv[0]`) in the given environment.
    /// - Parameters:
    ///   - inputPath: the file standard input reads from; `/dev/null` when `nil`.
    ///   - scratch: a directory for the captured output files.
    public init(
        executable: String, arguments: [String], environment: [String: String], inputPath: String?, scratch: String
    ) throws(HarnessError) {
        let serial = ChildProcess.nextSerial()
        outputPath = scratch + "/out-\(serial)"
        errorPath = scratch + "/err-\(serial)"
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, inputPath ?? "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, errorPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        self.pid = try ChildProcess.spawn(
            executable, arguments: [executable] + arguments,
            environment: environment.map { $0.key + "=" + $0.value }.sorted(), actions: &actions
        ).get()
    }

    deinit {
        // Never leave a child running behind a failed expectation.
        if finished == nil {
            Glibc.kill(pid, SIGKILL)
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        }
        unlink(outputPath)
        unlink(errorPath)
    }

    /// What the child has written to standard error so far (while it runs, too).
    public func standardErrorSoFar() -> String { String(decoding: (try? readFile(errorPath)) ?? [], as: UTF8.self) }

    /// Sends `signal` to the child (no effect once it has been reaped).
    public func send(_ signal: Int32) {
        guard finished == nil else { return }
        Glibc.kill(pid, signal)
    }

    /// Whether the child has ended (without reaping it twice).
    public var hasExited: Bool {
        if finished != nil { return true }
        var status: Int32 = 0
        let reaped = waitpid(pid, &status, WNOHANG)
        if reaped == pid {
            finished = collect(status: status, timedOut: false)
            return true
        }
        return false
    }

    /// Waits for the child to end; kills it with SIGKILL if it runs past `timeout`.
    @discardableResult
    public func wait(timeout: Double = 60) -> ProcessOutcome {
        if let finished { return finished }
        let deadline = monotonicSeconds() + timeout
        var status: Int32 = 0
        var timedOut = false
        while true {
            let reaped = waitpid(pid, &status, WNOHANG)
            if reaped == pid { break }
            if reaped < 0 && errno != EINTR { break }
            if monotonicSeconds() > deadline {
                Glibc.kill(pid, SIGKILL)
                timedOut = true
                while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
                break
            }
            sleepSeconds(0.002)
        }
        let outcome = collect(status: status, timedOut: timedOut)
        finished = outcome
        return outcome
    }

    private func collect(status: Int32, timedOut: Bool) -> ProcessOutcome {
        let signalled = status & 0x7F != 0
        return ProcessOutcome(
            status: signalled ? nil : (status >> 8) & 0xFF, signal: signalled ? status & 0x7F : nil,
            standardOutput: (try? readFile(outputPath)) ?? [], standardError: (try? readFile(errorPath)) ?? [],
            timedOut: timedOut)
    }

    /// C strings for `argv` and `envp`, ending with a null pointer; the caller frees them.
    /// Starts `path` with the given file actions, every signal unblocked and SIGPIPE and SIGTERM at their default
    /// handling in the child, whatever the test runner ignores or blocks.
    /// - Parameters:
    ///   - arguments: the whole `argv`, `argv[0]` included.
    ///   - environment: `NAME=value` strings.
    /// - Returns: the child's process id, or why it could not start.
    static func spawn(
        _ path: String, arguments: [String], environment: [String], actions: inout posix_spawn_file_actions_t
    ) -> Result<pid_t, HarnessError> {
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var defaults = sigset_t()
        sigemptyset(&defaults)
        sigaddset(&defaults, SIGPIPE)
        sigaddset(&defaults, SIGTERM)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&attributes, &empty)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))
        let argv = cStrings(arguments)
        let envp = cStrings(environment)
        defer { for pointer in argv + envp { free(pointer) } }
        var pid: pid_t = 0
        let code = posix_spawn(&pid, path, &actions, &attributes, argv, envp)
        guard code == 0 else { return .failure(HarnessError("cannot start \(path): \(String(cString: strerror(code)))")) }
        return .success(pid)
    }

    static func cStrings(_ strings: [String]) -> [UnsafeMutablePointer<CChar>?] {
        strings.map { strdup($0) } + [nil]
    }

    private static let serials = SerialCounter()
    private static func nextSerial() -> Int { serials.next() }
}

/// A process-wide counter for unique file names.
final class SerialCounter: Sendable {
    private let value = Mutex(0)
    func next() -> Int {
        value.withLock {
            $0 += 1
            return $0
        }
    }
}

/// The path of the executable `name` on `PATH` (and the system's own directories), or `nil`.
public func findExecutable(_ name: String) -> String? {
    let path = getenv("PATH").map { String(cString: $0) } ?? "/usr/bin:/bin"
    for directory in (path + ":/usr/sbin:/usr/bin:/sbin:/bin").split(separator: ":") {
        let candidate = "\(directory)/\(name)"
        if access(candidate, X_OK) == 0 { return candidate }
    }
    return nil
}

/// The monotonic clock, in seconds.
public func monotonicSeconds() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
}

public func sleepSeconds(_ seconds: Double) {
    guard seconds > 0 else { return }
    var request = timespec(tv_sec: Int(seconds), tv_nsec: Int((seconds - Double(Int(seconds))) * 1e9))
    var remaining = timespec()
    while nanosleep(&request, &remaining) < 0 && errno == EINTR { request = remaining }
}
