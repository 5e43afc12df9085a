import SuggestTestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// The built `suggest` binary, run as separate processes the way an app and its share extension would.
enum Suggest {
    /// The package's root directory (for `Fuzz/corpus`).
    static let packageRoot: String = {
        let file = #filePath
        return file.firstRange(of: "/Tests/").map { String(file[..<$0.lowerBound]) } ?? "."
    }()

    /// The `suggest` executable: `$SUGGEST_BINARY`, else the one beside the test bundle (`swift build --build-tests`
    /// puts both in `.build/<triple>/debug`), else `.build/debug/suggest` under the package root.
    static let binary: String = {
        if let explicit = getenv("SUGGEST_BINARY").map({ String(cString: $0) }), !explicit.isEmpty { return explicit }
        var directory = CommandLine.arguments.first ?? ""
        while let slash = directory.lastIndex(of: "/") {
            directory = String(directory[..<slash])
            if access(directory + "/suggest", X_OK) == 0 { return directory + "/suggest" }
        }
        return packageRoot + "/.build/debug/suggest"
    }()

    /// The environment every child gets: no inherited `SUGGEST_STORE` or `XDG_DATA_HOME`, and no interactive
    /// Swift backtracer (a crash should end the child at once; the test sees the signal).
    static func environment(home: String, extra: [String: String] = [:]) -> [String: String] {
        var environment = ["PATH": "/usr/bin:/bin", "HOME": home, "LANG": "C.UTF-8", "SWIFT_BACKTRACE": "enable=no"]
        for (key, value) in extra { environment[key] = value }
        return environment
    }

    /// Starts `suggest ARGUMENTS` without waiting for it.
    /// - Parameters:
    ///   - input: bytes for standard input, written to a file in `scratch` first.
    ///   - wrapper: a program and its arguments to run `suggest` under (`setpriv --reuid=...`).
    static func start(
        _ arguments: [String], input: [UInt8]? = nil, scratch: String, environment extra: [String: String] = [:],
        wrapper: [String] = []
    ) throws(HarnessError) -> ChildProcess {
        guard access(binary, X_OK) == 0 else {
            throw HarnessError("no suggest binary at \(binary); run 'swift build --build-tests' first")
        }
        var inputPath: String?
        if let input {
            let path = scratch + "/in-\(inputSerials.next())"
            try writeFile(path, input)
            inputPath = path
        }
        let command = wrapper.isEmpty ? [binary] : wrapper + [binary]
        return try ChildProcess(
            executable: command[0], arguments: Array(command.dropFirst()) + arguments,
            environment: environment(home: scratch, extra: extra), inputPath: inputPath, scratch: scratch)
    }

    /// Runs `suggest ARGUMENTS` to the end (at most `timeout` seconds).
    static func run(
        _ arguments: [String], input: [UInt8]? = nil, scratch: String, environment: [String: String] = [:],
        wrapper: [String] = [], timeout: Double = 60
    ) throws(HarnessError) -> ProcessOutcome {
        try start(arguments, input: input, scratch: scratch, environment: environment, wrapper: wrapper)
            .wait(timeout: timeout)
    }

    private static let inputSerials = SerialCounter()
}

/// A store directory of its own for one test, with a scratch directory beside it (never inside: the privacy
/// tests read every file of the store).
final class StoreFixture {
    let root: TemporaryDirectory
    let store: String
    let scratch: String

    /// - Parameter existing: a store directory elsewhere to work on (the soak test's), instead of a new one.
    init(_ label: String = "store", existing: String? = nil) throws(HarnessError) {
        root = try TemporaryDirectory(label)
        store = existing ?? root("store")
        scratch = root("scratch")
        guard mkdir(scratch, 0o755) == 0 else { throw HarnessError("cannot create \(scratch)") }
    }

    /// Runs `suggest ARGUMENTS --store STORE`.
    @discardableResult
    func run(
        _ arguments: [String], input: [UInt8]? = nil, environment: [String: String] = [:], timeout: Double = 60
    ) throws(HarnessError) -> ProcessOutcome {
        try Suggest.run(
            arguments + ["--store", store], input: input, scratch: scratch, environment: environment, timeout: timeout)
    }

    /// Runs a command that must succeed, and returns its standard output.
    @discardableResult
    func succeed(_ arguments: [String], input: [UInt8]? = nil) throws(HarnessError) -> String {
        let outcome = try run(arguments, input: input)
        guard outcome.status == 0 else { throw HarnessError("suggest \(arguments.joined(separator: " ")): \(outcome)") }
        return outcome.output
    }

    /// Starts `suggest ARGUMENTS --store STORE` without waiting.
    func start(_ arguments: [String], input: [UInt8]? = nil) throws(HarnessError) -> ChildProcess {
        try Suggest.start(arguments + ["--store", store], input: input, scratch: scratch)
    }

    /// Imports JSON Lines through the binary.
    func importLines(_ lines: [String], extra: [String] = []) throws(HarnessError) {
        try succeed(["import", "-", "--quiet"] + extra, input: Array((lines.joined(separator: "\n") + "\n").utf8))
    }

    /// Keeps every donation and suggests every conversation, whatever the date: tests choose their own dates.
    func keepEverything() throws(HarnessError) {
        try succeed(["config", "--max-age-days", "0", "--idle-days", "0"])
    }
}
