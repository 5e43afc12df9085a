import CSystem
import SuggestCore

/// `suggest serve`: the HTTP API of the contract, for messaging backends.
///
/// The HTTP server (GNU libmicrohttpd, which brings gnutls) is linked into a second executable, `suggest-serve`,
/// so that every other command stays one static binary that starts in a millisecond or two. This command only
/// checks that it can find that executable, beside its own, and replaces itself with it (same process, same
/// arguments), which parses the options and serves.
enum Serve: Command {
    static let name = "serve"
    static let summary = "Serve the HTTP API (donations, suggestions, share, deletion) until SIGTERM or SIGINT."
    static let usage = "[--host H] [--port N] [--keys FILE] [--store DIR|redis://...] [OPTIONS]"
    static let options: [OptionSpec] = [
        .option("--host", "H", "The address to listen on (default 127.0.0.1; $SUGGEST_HOST). Without --keys, loopback only."),
        .option("--port", "N", "The port (default 8080; 0 picks a free one; $SUGGEST_PORT)."),
        .option("--keys", "FILE", "API keys and their tenants: {\"keys\": [{\"tenant\": \"acme\", \"key\": \"...\"}]} ($SUGGEST_KEYS); mode 600."),
        StoreOptions.store,
        .option("--workers", "N", "Threads answering requests (default: one per core; $SUGGEST_WORKERS)."),
        .option("--handler-threads", "N", "Threads on which writes wait for the store (default 32); reads from a Redis Cluster have 2 per core of their own."),
        .option("--max-body-bytes", "N", "The largest request body (default 33554432, 32 MiB); larger is 413."),
        .option("--max-body-memory", "N", "Bytes all request bodies may hold at once (default: twice --max-body-bytes, at least 64 MiB), an eighth more for small ones; past it 503."),
        .option("--max-header-bytes", "N", "Bytes for a request's target and header fields (default 65536, 16384 to 16777216); more is 414 or 431."),
        .option("--max-exports", "N", "Exports (GET .../donations) sent at once, each as its client reads it (default 8), at most half of them to one tenant when the keys open several; more is 503."),
        .option("--export-time-limit", "SECONDS", "The longest an export may take, its client's reading included (default 600)."),
        .option("--max-connections", "N", "Connections open at once (default 1024)."),
        .option("--max-connections-per-ip", "N", "Connections from one address (default 256; 0 = no limit, behind a proxy)."),
        .option("--timeout", "SECONDS", "Idle time before a connection is closed, and the most a whole request head may take (default 30)."),
        .option("--drain-delay", "SECONDS", "After SIGTERM, readiness is 503 this long before connections are refused (default 0)."),
        .option("--grace", "SECONDS", "How long requests in flight may finish after SIGTERM (default 10)."),
        .flag("--no-access-log", "No line per request on standard error."),
    ]
    static let discussion = """
        Prints 'listening on http://HOST:PORT' on standard error once it accepts connections. Routes, bodies and
        errors: docs/serving.md and GET /v1/openapi.json. SIGTERM or SIGINT: readiness goes 503, no new
        connections, requests in flight finish, exit 0 (SIGQUIT too). SIGHUP (or a change of the keys file) reloads
        the keys. SIGUSR1, SIGUSR2 and other signals that ask nothing of it are logged and change nothing.

        Examples:
          suggest serve --port 8080 --store /var/lib/suggest
          suggest serve --host 0.0.0.0 --keys /etc/suggest/keys.json --workers 4
        """

    /// The server's executable, beside this one.
    static let serverExecutable = "suggest-serve"

    static func run(_ arguments: ParsedArguments, _ io: CommandIO) throws -> Int32 {
        if let serve = io.serve { return try serve(arguments, io) }
        guard let own = ownPath(), let slash = own.lastIndex(of: "/") else {
            throw CommandError.failure("cannot find this executable's directory to start \(serverExecutable)")
        }
        let path = own[..<slash] + "/" + serverExecutable
        guard access(path, X_OK) == 0 else {
            throw CommandError.failure(
                "\(path) is missing: 'suggest serve' runs it; build it with the rest (swift build -c release) and "
                    + "install it beside suggest")
        }
        if let warning = olderServerWarning(server: path, command: own) { io.err(warning) }
        try io.standardOutput.flush()
        try io.standardError.flush()
        ProcessStart.holdHangUps()
        let argv = [serverExecutable, name] + arguments.arguments
        var pointers = argv.map { strdup($0) }
        pointers.append(nil)
        execv(path, pointers)
        let reason = ErrorNumber.describeLast()
        for pointer in pointers { free(pointer) }
        throw CommandError.failure("cannot run \(path): \(reason)")
    }

    /// The running executable's path (`/proc/self/exe`'s target on Linux).
    static func ownPath() -> String? {
        var buffer = [CChar](repeating: 0, count: 4096)
        let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        let path: String
        if count > 0 {
            path = String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        } else {
            path = CommandLine.arguments.first ?? ""
        }
        guard !path.isEmpty else { return nil }
        return path.contains("/") ? path : "./" + path
    }

    /// A warning when the server's executable was made well before this one: a `suggest` rebuilt alone (`swift
    /// build --product suggest`) runs the `suggest-serve` of an older build, which answers with that build's code
    /// while `--version` says the same release. Ten minutes leave room for one build's two links, and an install gives both one time.
    static func olderServerWarning(server: String, command: String) -> String? {
        var serverInfo = stat()
        var commandInfo = stat()
        guard stat(server, &serverInfo) == 0, stat(command, &commandInfo) == 0 else { return nil }
        let behind = commandInfo.st_mtim.tv_sec - serverInfo.st_mtim.tv_sec
        guard behind > 600 else { return nil }
        return "suggest serve: warning: \(server) was built \(behind / 60) minutes before this suggest, so it may be "
            + "another build's server; build both together (swift build -c release) and install them side by side"
    }
}
