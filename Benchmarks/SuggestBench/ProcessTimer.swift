#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// `suggest-bench time`: whole-process wall time and peak memory of a command, optionally against a second
/// command run in turn (A B A B …) with the ratio taken pair by pair, as `hyperfine` would report.
///
/// Each run is `fork` + `execv` with standard input from /dev/null and its output discarded; wall time is the
/// monotonic clock around it, CPU time and peak resident memory (`ru_maxrss`) come from `wait4`. The child is
/// forked rather than spawned with `vfork` semantics so that its peak does not start at this process's size.
enum ProcessTimer {
    static let usage = """
        usage: suggest-bench time [-n RUNS] [--warmup W] [--label TEXT] [--vs 'COMMAND B' --vs-label TEXT] [--tsv] -- COMMAND A...

        Runs COMMAND A RUNS times (default 11) after W warm-up runs (default 2), and, with --vs, COMMAND B
        (split on spaces, no shell) in turn with it. Commands are given by full path or found on PATH; their
        output is discarded. Prints one Markdown table row per command and, with --vs, the ratio A/B taken pair
        by pair (median, min–max), so a drifting machine does not skew it.

        Rows: | label | wall median (min–max) | cpu median | peak RSS median |
        With --vs: | label A | A wall median (min–max) | label B | B wall median (min–max) | A/B median (min–max) | peak A | peak B |
        --tsv prints only 'wall-seconds cpu-seconds peak-bytes' (medians of A, tab-separated), for scripts.
        A run that exits non-zero is reported and makes the exit status 1.
        """

    struct Run {
        var wall: Double
        var cpu: Double
        var peakBytes: Double
        var status: Int32
    }

    static func run(_ arguments: [String]) throws -> Int32 {
        let parsed = try BenchArguments(
            arguments, flags: ["--tsv"], options: ["-n", "--warmup", "--label", "--vs", "--vs-label"])
        let runs = try parsed.integer("-n", default: 11, range: 1...1_000)
        let warmup = try parsed.integer("--warmup", default: 2, range: 0...100)
        let commandA = parsed.rest
        guard !commandA.isEmpty else { throw BenchArguments.UsageError("give the command after --") }
        let commandB = parsed.string("--vs").map { $0.split(separator: " ").map(String.init) }
        let pathA = try resolve(commandA[0])
        let pathB = try commandB.map { command throws(BenchArguments.UsageError) in try resolve(command[0]) }

        for _ in 0..<warmup {
            _ = try spawn(pathA, commandA)
            if let pathB, let commandB { _ = try spawn(pathB, commandB) }
        }
        var runsA: [Run] = []
        var runsB: [Run] = []
        for _ in 0..<runs {
            runsA.append(try spawn(pathA, commandA))
            if let pathB, let commandB { runsB.append(try spawn(pathB, commandB)) }
        }
        let labelA = parsed.string("--label") ?? commandA.joined(separator: " ")
        let failures = (runsA + runsB).filter { $0.status != 0 }.count
        if failures > 0 { Log.note("time: \(failures) run(s) exited non-zero; check the command by hand") }
        let wallA = Summary(runsA.map(\.wall))
        let peakA = Summary(runsA.map(\.peakBytes))
        if parsed.flag("--tsv") {
            print("\(wallA.median)\t\(Summary(runsA.map(\.cpu)).median)\t\(Int(peakA.median))")
        } else if let commandB {
            let labelB = parsed.string("--vs-label") ?? commandB.joined(separator: " ")
            let wallB = Summary(runsB.map(\.wall))
            let peakB = Summary(runsB.map(\.peakBytes))
            let ratio = Summary(zip(runsA, runsB).map { $0.wall / $1.wall })
            print(
                "| \(labelA) | \(wallA.formatted(milliseconds)) | \(labelB) | \(wallB.formatted(milliseconds)) | "
                    + "\(ratio.formatted { Format.fixed($0, 3) }) | \(Format.megabytes(peakA.median)) | "
                    + "\(Format.megabytes(peakB.median)) |")
        } else {
            print(
                "| \(labelA) | \(wallA.formatted(milliseconds)) | \(milliseconds(Summary(runsA.map(\.cpu)).median)) | "
                    + "\(Format.megabytes(peakA.median)) |")
        }
        return failures == 0 ? 0 : 1
    }

    static func milliseconds(_ seconds: Double) -> String { Format.fixed(seconds * 1_000, 2) + " ms" }

    /// The executable for `name`: itself when it holds a slash, else the first match on PATH.
    static func resolve(_ name: String) throws(BenchArguments.UsageError) -> String {
        if name.contains("/") {
            guard access(name, X_OK) == 0 else { throw .init("\(name) is not an executable file") }
            return name
        }
        let path = getenv("PATH").map { String(cString: $0) } ?? "/usr/bin:/bin"
        for directory in path.split(separator: ":") {
            let candidate = "\(directory)/\(name)"
            if access(candidate, X_OK) == 0 { return candidate }
        }
        throw .init("\(name) is not on PATH")
    }

    /// Runs one command to its end and measures it.
    static func spawn(_ path: String, _ arguments: [String]) throws -> Run {
        // Everything the child needs is prepared before fork: after it, the child only calls async-signal-safe
        // functions.
        var cArguments = arguments.map { strdup($0) } + [nil]
        defer { for pointer in cArguments { free(pointer) } }
        guard let cPath = strdup(path) else { throw BenchArguments.UsageError("out of memory") }
        defer { free(cPath) }
        let null = open("/dev/null", O_RDWR)
        guard null >= 0 else { throw BenchArguments.UsageError("cannot open /dev/null") }
        defer { close(null) }
        let start = MonotonicClock.nanoseconds()
        let pid = fork()
        if pid == 0 {
            dup2(null, 0)
            dup2(null, 1)
            dup2(null, 2)
            execv(cPath, &cArguments)
            _exit(127)
        }
        guard pid > 0 else { throw BenchArguments.UsageError("fork failed: \(String(cString: strerror(errno)))") }
        var status: Int32 = 0
        var usage = rusage()
        while wait4(pid, &status, 0, &usage) < 0 {
            guard errno == EINTR else { throw BenchArguments.UsageError("wait4 failed") }
        }
        let wall = Double(MonotonicClock.nanoseconds() - start) / 1e9
        let cpu =
            Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6 + Double(usage.ru_stime.tv_sec)
            + Double(usage.ru_stime.tv_usec) / 1e6
        // Exit code, or 128 + signal as a shell reports it.
        let exited = status & 0x7F == 0
        let code = exited ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
        return Run(wall: wall, cpu: cpu, peakBytes: Double(usage.ru_maxrss) * 1_024, status: code)
    }
}
