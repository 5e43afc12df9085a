import CSystem
import SuggestCLI
import SuggestServer

/// `suggest serve`'s options read into the server's configuration: flags first, then the environment, then the
/// defaults (`ServerConfiguration`).
enum ServeOptions {
    /// The variables the server reads, with those every command reads.
    static let variables =
        CommandIO.environmentVariables + ["SUGGEST_HOST", "SUGGEST_PORT", "SUGGEST_KEYS", "SUGGEST_WORKERS"]

    static func environment() -> [String: String] {
        var environment: [String: String] = [:]
        for name in variables {
            if let value = getenv(name) { environment[name] = String(cString: value) }
        }
        return environment
    }

    /// Runs the server with the options; returns its exit code.
    @Sendable static func serve(_ arguments: ParsedArguments, _ io: CommandIO) throws -> Int32 {
        try arguments.expectPositionals(atMost: 0)
        var configuration = try configuration(arguments, environment: io.environment)
        do {
            let serving = try StoreOpening.serving(arguments, io: io)
            configuration.readsWaitForTheStore = serving.isRemote
            configuration.cutsOffRequestsAfterGrace = !serving.isRemote
            try SuggestServer.run(configuration, openStore: serving.open, storeMetrics: serving.metrics) { line in
                // A log line that cannot be written (standard error closed) must not stop the server.
                try? io.standardError.write(line + "\n")
                try? io.standardError.flush()
            }
        } catch let error as SuggestServer.StartError {
            throw error.isInvalidInput ? CommandError.usage(error.description) : CommandError.failure(error.description)
        }
        return ExitCode.success
    }

    static func configuration(_ arguments: ParsedArguments, environment: [String: String]) throws(CommandError)
        -> ServerConfiguration
    {
        var configuration = ServerConfiguration()
        if let (host, source) = value(arguments, "--host", variable: ("SUGGEST_HOST", environment)) {
            guard !host.isEmpty else { throw CommandError.usage("\(source) must not be empty") }
            configuration.host = host
            // Bad usage (64), known before the server starts, not a failure to make the socket (exit 1).
            guard configuration.hostIsAddress else {
                throw CommandError.usage(
                    "\(source) \"\(host.prefix(80))\" is not an IPv4 or IPv6 address; give one such as 127.0.0.1, "
                        + "0.0.0.0 or ::1, or localhost")
            }
        }
        configuration.port =
            try number(arguments, "--port", variable: ("SUGGEST_PORT", environment), 0...65535) ?? configuration.port
        if let (keys, source) = value(arguments, "--keys", variable: ("SUGGEST_KEYS", environment)) {
            guard !keys.isEmpty else { throw CommandError.usage("\(source) must name a file") }
            configuration.keysPath = keys
        }
        if let problem = configuration.unguardedHostProblem { throw CommandError.usage(problem) }
        configuration.workers =
            try number(arguments, "--workers", variable: ("SUGGEST_WORKERS", environment), 1...256) ?? configuration.workers
        configuration.handlerThreads =
            try number(arguments, "--handler-threads", 1...1024) ?? configuration.handlerThreads
        configuration.maximumBodyBytes =
            try number(arguments, "--max-body-bytes", 1...(1 << 30)) ?? configuration.maximumBodyBytes
        configuration.maximumBodyMemory =
            try number(arguments, "--max-body-memory", 1...(1 << 40)) ?? configuration.maximumBodyMemory
        if let memory = configuration.maximumBodyMemory, memory < configuration.maximumBodyBytes {
            throw CommandError.usage(
                "--max-body-memory (\(memory)) is below the largest body (\(configuration.maximumBodyBytes), "
                    + "--max-body-bytes): no body of that size could ever be read; give at least that")
        }
        configuration.maximumExports = try number(arguments, "--max-exports", 1...1024) ?? configuration.maximumExports
        configuration.exportTimeLimitSeconds =
            try number(arguments, "--export-time-limit", 1...86_400) ?? configuration.exportTimeLimitSeconds
        configuration.connectionLimit =
            try number(arguments, "--max-connections", 1...100_000) ?? configuration.connectionLimit
        // Said in the flags' words: it was "connectionLimit 1 is below workerThreads 2", exit 1, and whether
        // `--max-connections 1` worked depended on the machine's cores (the default of --workers).
        if configuration.connectionLimit < configuration.workers {
            throw CommandError.usage(
                "--max-connections (\(configuration.connectionLimit)) is below the number of workers "
                    + "(\(configuration.workers), --workers): each worker takes at least one connection; give at least "
                    + "that, or fewer workers")
        }
        configuration.perIPConnectionLimit =
            try number(arguments, "--max-connections-per-ip", 0...100_000) ?? configuration.perIPConnectionLimit
        configuration.headerBytesLimit =
            try number(arguments, "--max-header-bytes", 16384...(16 << 20)) ?? configuration.headerBytesLimit
        configuration.connectionTimeoutSeconds =
            try number(arguments, "--timeout", 1...3600) ?? configuration.connectionTimeoutSeconds
        configuration.gracePeriodSeconds =
            try number(arguments, "--grace", 0...3600) ?? configuration.gracePeriodSeconds
        configuration.drainDelaySeconds =
            try number(arguments, "--drain-delay", 0...600) ?? configuration.drainDelaySeconds
        configuration.accessLog = !arguments.flag("--no-access-log")
        return configuration
    }

    /// A variable that stands for a flag, and the environment it is read from.
    typealias Variable = (name: String, environment: [String: String])

    /// The flag's value, else the variable's, with what an error should call its source (the variable's name and
    /// the flag it stands for, when it came from the environment).
    static func value(_ arguments: ParsedArguments, _ flag: String, variable: Variable? = nil)
        -> (String, source: String)?
    {
        if let given = arguments.value(flag) { return (given, flag) }
        guard let variable else { return nil }
        return variable.environment[variable.name].map { ($0, "\(variable.name) (for \(flag))") }
    }

    /// A whole number from a flag or a variable, within `range`.
    static func number(
        _ arguments: ParsedArguments, _ flag: String, variable: Variable? = nil, _ range: ClosedRange<Int>
    ) throws(CommandError) -> Int? {
        guard let (text, source) = value(arguments, flag, variable: variable) else { return nil }
        return try ValueParsing.wholeNumber(text, option: source, in: range)
    }
}
