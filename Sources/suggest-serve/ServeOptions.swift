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
            try SuggestServer.run(configuration, openStore: serving.open, storeMetrics: serving.metrics) { line in
                // A log line that cannot be written (standard error closed) must not stop the server.
                try? io.standardError.write(line + "\n")
                try? io.standardError.flush()
            }
        } catch let error as SuggestServer.StartError {
            throw CommandError.failure(error.description)
        }
        return ExitCode.success
    }

    static func configuration(_ arguments: ParsedArguments, environment: [String: String]) throws(CommandError)
        -> ServerConfiguration
    {
        var configuration = ServerConfiguration()
        configuration.workers = max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
        if let host = arguments.value("--host") ?? environment["SUGGEST_HOST"] {
            guard !host.isEmpty else { throw CommandError.usage("--host must not be empty") }
            configuration.host = host
        }
        configuration.port =
            try number(arguments, "--port", environment["SUGGEST_PORT"], 0...65535) ?? configuration.port
        if let keys = arguments.value("--keys") ?? environment["SUGGEST_KEYS"] {
            guard !keys.isEmpty else { throw CommandError.usage("--keys must name a file") }
            configuration.keysPath = keys
        }
        configuration.workers =
            try number(arguments, "--workers", environment["SUGGEST_WORKERS"], 1...256) ?? configuration.workers
        configuration.handlerThreads =
            try number(arguments, "--handler-threads", nil, 1...1024) ?? configuration.handlerThreads
        configuration.maximumBodyBytes =
            try number(arguments, "--max-body-bytes", nil, 1...(1 << 30)) ?? configuration.maximumBodyBytes
        configuration.maximumBodyMemory =
            try number(arguments, "--max-body-memory", nil, 1...(1 << 40)) ?? configuration.maximumBodyMemory
        if let memory = configuration.maximumBodyMemory, memory < configuration.maximumBodyBytes {
            throw CommandError.usage(
                "--max-body-memory (\(memory)) is below the largest body (\(configuration.maximumBodyBytes), "
                    + "--max-body-bytes): no body of that size could ever be read; give at least that")
        }
        configuration.connectionLimit =
            try number(arguments, "--max-connections", nil, 1...100_000) ?? configuration.connectionLimit
        configuration.perIPConnectionLimit =
            try number(arguments, "--max-connections-per-ip", nil, 0...100_000) ?? configuration.perIPConnectionLimit
        configuration.headerBytesLimit =
            try number(arguments, "--max-header-bytes", nil, 16384...(16 << 20)) ?? configuration.headerBytesLimit
        configuration.connectionTimeoutSeconds =
            try number(arguments, "--timeout", nil, 1...3600) ?? configuration.connectionTimeoutSeconds
        configuration.gracePeriodSeconds =
            try number(arguments, "--grace", nil, 0...3600) ?? configuration.gracePeriodSeconds
        configuration.drainDelaySeconds =
            try number(arguments, "--drain-delay", nil, 0...600) ?? configuration.drainDelaySeconds
        configuration.accessLog = !arguments.flag("--no-access-log")
        return configuration
    }

    /// A whole number from a flag or a variable, within `range`.
    static func number(_ arguments: ParsedArguments, _ flag: String, _ variable: String?, _ range: ClosedRange<Int>)
        throws(CommandError) -> Int?
    {
        guard let text = arguments.value(flag) ?? variable else { return nil }
        guard text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let value = Int(text), range.contains(value) else {
            throw CommandError.usage(
                "\(flag) takes a whole number from \(range.lowerBound) to \(range.upperBound), not '\(text.prefix(40))'"
            )
        }
        return value
    }
}
