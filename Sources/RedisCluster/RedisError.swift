/// Why a Redis operation failed. Each case's `description` is one line that says what is wrong and what to do; no
/// message ever holds a password.
public enum RedisError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The configuration or the `redis://` URL is not usable; the message says which part and why.
    case invalidConfiguration(String)
    /// No connection could be made to any of these addresses (refused, no route, name not found, timed out).
    case unreachable([RedisEndpoint], reason: String)
    /// The server refused the credentials, or wants some and none were given.
    case authenticationFailed(RedisEndpoint, reason: String)
    /// A server is not a cluster node where one was required (``RedisClusterConfiguration/requiresCluster``, or
    /// several seeds of which one is a standalone server).
    case notACluster(RedisEndpoint, reason: String)
    /// The cluster answered `CLUSTERDOWN` (or serves no node for a slot) for longer than the retry time.
    case clusterDown(RedisEndpoint?, message: String)
    /// The server is at its `maxmemory` limit and refuses writes (`OOM command not allowed ...`).
    case outOfMemory(RedisEndpoint?, message: String)
    /// Any other error reply, with the server's own message (`WRONGTYPE ...`, `ERR unknown command ...`).
    case server(RedisEndpoint?, message: String)
    /// The connection broke while a command was in flight. `mayHaveRun` says whether the command may have been
    /// carried out before the connection went (it was written, no reply came back).
    case connectionLost(RedisEndpoint, reason: String, mayHaveRun: Bool)
    /// The server sent bytes that are not the Redis protocol (not a Redis server, or a corrupted stream).
    case protocolError(RedisEndpoint, reason: String)
    /// No reply (or no free connection) within the time allowed. A command whose reply did not come may have run;
    /// it is not sent again.
    case timeout(RedisEndpoint, seconds: Double, waitingFor: String)
    /// A command was redirected (`MOVED`, `ASK`) more times than ``RedisClusterConfiguration/maxRedirects``.
    case tooManyRedirects(count: Int, last: String)

    /// What a lost connection's description says when the command may have run: for a caller that then learns
    /// what became of it (a write it took back), and says that instead.
    public static let mayHaveRunAdvice =
        "the command may or may not have run; retry it only if running it twice is harmless"

    /// Whether the failing command may have run all the same: it was sent, and its reply was lost (the connection
    /// broke, or the reply did not come in time, or did not parse). A refusal, a node that could not be reached, a
    /// cluster that could not serve the slot in the retry time (`TRYAGAIN`, `CLUSTERDOWN`), a wait for a free
    /// connection: it did not run. Of one command only: a pipeline of several may fail so on one of them after
    /// others ran, so a caller that must know sends what it must know of alone.
    public var mayHaveRun: Bool {
        switch self {
        case .connectionLost(_, _, let mayHaveRun): mayHaveRun
        case .timeout(_, _, let waitingFor): !waitingFor.hasPrefix("free connection")
        case .protocolError: true
        default: false
        }
    }

    /// Whether a node answered that another serves the key's slot (`MOVED`, `ASK`): for a command sent to one node
    /// (`RedisClusterClient.send(_:to:)`), which follows no redirection, where the pipeline follows it.
    public var isRedirection: Bool {
        guard case .server(_, let message) = self else { return false }
        let code = Self.code(of: message)
        return code == "MOVED" || code == "ASK"
    }

    /// One line: what went wrong, where, and what to do about it.
    public var description: String {
        switch self {
        case .invalidConfiguration(let message):
            return "invalid Redis configuration: \(message)"
        case .unreachable(let endpoints, let reason):
            let list = endpoints.map(\.description).joined(separator: ", ")
            // hiredis says why in words: a socket this process could not make is its own limit, not the servers'.
            if reason.contains("Too many open files") {
                return "cannot reach Redis at \(list) (\(reason)): this process may open no more files; raise its"
                    + " limit (ulimit -n) or close some"
            }
            return "cannot reach Redis at \(list) (\(reason)): check that the servers are running and that the"
                + " addresses are right"
        case .authenticationFailed(let endpoint, let reason):
            return "Redis at \(endpoint) refused the login: \(reason)"
        case .notACluster(let endpoint, let reason):
            return "Redis at \(endpoint) is not a cluster node (\(reason)): give the address of one standalone"
                + " server alone, or of nodes started with cluster-enabled yes"
        case .clusterDown(let endpoint, let message):
            let origin = endpoint.map { " at \($0)" } ?? ""
            return "the Redis Cluster\(origin) is down (\(message)): wait for a replica to take over, or, where a"
                + " master has none, start that master again; every slot needs a reachable master"
        case .outOfMemory(let endpoint, let message):
            let origin = endpoint.map { " at \($0)" } ?? ""
            return "Redis\(origin) is out of memory and refuses writes (\(message)): raise maxmemory, add nodes, or"
                + " delete data"
        case .server(let endpoint, let message):
            let origin = endpoint.map { " at \($0)" } ?? ""
            return "Redis\(origin) refused the command: \(message)"
        case .connectionLost(let endpoint, let reason, let mayHaveRun):
            let outcome = mayHaveRun ? Self.mayHaveRunAdvice : "the command did not run; retry it"
            return "lost the connection to Redis at \(endpoint) (\(reason)): \(outcome)"
        case .protocolError(let endpoint, let reason):
            return "Redis at \(endpoint) sent something that is not the Redis protocol (\(reason)): check that the"
                + " address is a Redis server"
        case .timeout(let endpoint, let seconds, let waitingFor):
            return "Redis at \(endpoint) gave no \(waitingFor) within \(RedisError.seconds(seconds)) s: check the"
                + " server's load and the network (a node paused, swapping or blocked answers nothing)"
        case .tooManyRedirects(let count, let last):
            return "a command was redirected \(count) times (last: \(last)): the cluster's slots keep moving; retry"
                + " once resharding is over"
        }
    }

    /// The typed error an error reply stands for.
    /// - Parameters:
    ///   - message: the reply's text, as the server wrote it.
    ///   - endpoint: the node that replied.
    static func reply(_ message: String, from endpoint: RedisEndpoint?) -> RedisError {
        let code = RedisError.code(of: message)
        switch code {
        case "OOM": return .outOfMemory(endpoint, message: message)
        case "CLUSTERDOWN": return .clusterDown(endpoint, message: message)
        case "NOAUTH", "WRONGPASS":
            if let endpoint { return .authenticationFailed(endpoint, reason: loginRefusal(message)) }
            return .server(nil, message: message)
        default: return .server(endpoint, message: message)
        }
    }

    /// What a refused login means and what to do about it, from the server's reply (which never holds the
    /// password: Redis does not echo it).
    static func loginRefusal(_ message: String) -> String {
        let code = RedisError.code(of: message)
        if code == "WRONGPASS" || message.contains("invalid password") || message.contains("invalid username") {
            return "wrong password or user name: give the right one in the URL, redis://:PASSWORD@HOST:PORT"
                + " (redis://USER:PASSWORD@HOST:PORT for an ACL user)"
        }
        if code == "NOAUTH" {
            return "the server needs a password and none was given: write redis://:PASSWORD@HOST:PORT"
        }
        if message.contains("without any password configured") {
            return "the server has no password but one was given: leave it out of the URL"
        }
        return message
    }

    /// The first word of an error reply (`MOVED`, `ERR`, `WRONGTYPE`).
    static func code(of message: String) -> Substring {
        message.prefix(while: { $0 != " " })
    }

    /// Seconds for a message: whole numbers without a fraction.
    static func seconds(_ value: Double) -> String {
        value == value.rounded() && value < 1e9 ? String(Int(value)) : String(value)
    }
}
