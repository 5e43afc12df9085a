#if canImport(Glibc)
    import Glibc
#endif

/// The built `suggest` binary, run as separate processes the way an app and its share extension would.
public enum Suggest {
    /// The package's root directory (for `SampleData/` and `Fuzz/corpus`).
    public static let packageRoot: String = {
        let file = #filePath
        return file.firstRange(of: "/Tests/").map { String(file[..<$0.lowerBound]) } ?? "."
    }()

    /// The `suggest` executable: `$SUGGEST_BINARY`, else the one beside the test bundle (`swift build --build-tests`
    /// puts both in `.build/<triple>/debug`), else `.build/debug/suggest` under the package root.
    public static let binary: String = {
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
    public static func environment(home: String, extra: [String: String] = [:]) -> [String: String] {
        var environment = ["PATH": "/usr/bin:/bin", "HOME": home, "LANG": "C.UTF-8", "SWIFT_BACKTRACE": "enable=no"]
        for (key, value) in extra { environment[key] = value }
        return environment
    }

    /// Starts `suggest ARGUMENTS` without waiting for it.
    /// - Parameters:
    ///   - input: bytes for standard input, written to a file in `scratch` first.
    ///   - wrapper: a program and its arguments to run `suggest` under (`setpriv --reuid=...`).
    ///   - executable: the program to run instead of `binary` (`serverBinary`).
    public static func start(
        _ arguments: [String], input: [UInt8]? = nil, scratch: String, environment extra: [String: String] = [:],
        wrapper: [String] = [], executable: String? = nil
    ) throws(HarnessError) -> ChildProcess {
        let binary = executable ?? binary
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
    public static func run(
        _ arguments: [String], input: [UInt8]? = nil, scratch: String, environment: [String: String] = [:],
        wrapper: [String] = [], timeout: Double = 60
    ) throws(HarnessError) -> ProcessOutcome {
        try start(arguments, input: input, scratch: scratch, environment: environment, wrapper: wrapper)
            .wait(timeout: timeout)
    }

    private static let inputSerials = SerialCounter()
}
