import CSystem
import Dispatch
import HTTPServer
import SuggestCore
import Synchronization
import SystemThread

/// `suggest serve`: the HTTP API of the contract, on a store, until SIGTERM or SIGINT.
///
/// Worker threads answer requests, each with a store connection of its own from a pool; a background step keeps
/// the store maintained (expiry, policy rebuilds) in small pieces, never behind a request. On SIGTERM readiness
/// goes 503, the server stops accepting, lets the requests in flight finish (up to the grace period) and returns.
/// SIGHUP, or a change of the keys file, reloads the keys without a restart.
public enum SuggestServer {
    /// Opens a store connection; called once per worker, and again when a connection is needed.
    public typealias StoreOpener = @Sendable () throws -> any DonationStore

    /// Lines about the store in Prometheus' text format (`# HELP`, `# TYPE` and samples), read at every
    /// `GET /metrics` and appended to the server's own: a store's caches, for one.
    public typealias StoreMetrics = @Sendable () -> String

    /// Why the server could not start.
    public struct StartError: Error, Sendable, CustomStringConvertible {
        /// What stopped the start and what to do, in one line.
        public var description: String
        /// Whether the operator's input is at fault (a keys file that does not parse, a host without keys) rather
        /// than the machine (a port taken, a store that cannot be opened): the contract's exit 64 against 1.
        public var isInvalidInput: Bool
        init(_ description: String, isInvalidInput: Bool = false) {
            self.description = description
            self.isInvalidInput = isInvalidInput
        }
    }

    /// Serves until SIGTERM or SIGINT.
    ///
    /// Blocks the calling thread, which only waits: signals are taken by a thread of their own, requests by the
    /// server's workers.
    /// - Parameters:
    ///   - configuration: where to listen, the keys and the limits.
    ///   - openStore: opens one store connection; the server opens one at start, so that a store that cannot be
    ///     opened fails the start, and more as the workers need them.
    ///   - announce: receives `listening on http://HOST:PORT` once connections are accepted.
    /// - Throws: `StartError` when the configuration is refused, the keys cannot be read, the store cannot be opened
    ///   or the address cannot be bound.
    public static func run(
        _ configuration: ServerConfiguration, openStore: @escaping StoreOpener, announce: (String) -> Void
    ) throws {
        try run(configuration, openStore: openStore, storeMetrics: nil, announce: announce)
    }

    /// Serves until SIGTERM or SIGINT, as `run(_:openStore:announce:)`, with the store's own metrics at `/metrics`.
    /// - Parameters:
    ///   - configuration: where to listen, the keys and the limits.
    ///   - openStore: opens one store connection, at start and as the workers need them.
    ///   - storeMetrics: the store's lines for `/metrics` (`nil`: none).
    ///   - announce: receives `listening on http://HOST:PORT` once connections are accepted.
    /// - Throws: `StartError`, as `run(_:openStore:announce:)`.
    public static func run(
        _ configuration: ServerConfiguration, openStore: @escaping StoreOpener, storeMetrics: StoreMetrics?,
        announce: (String) -> Void
    ) throws {
        if let problem = configuration.unguardedHostProblem { throw StartError(problem, isInvalidInput: true) }
        var keys: KeyRing?
        var keysVersion: KeyRing.FileVersion?
        var keysWarnings: [String] = []
        if let path = configuration.keysPath {
            do {
                // A file that lists no key starts a server that refuses every keyed request, as a reload of it
                // does: serving.md's way to revoke every key must survive a restart, failing closed.
                let file = try KeyRing.load(path: path, allowingNoKey: true)
                keys = file.ring
                keysVersion = file.version
                keysWarnings = file.warnings
                if file.ring.entries.isEmpty { keysWarnings.append(KeyRing.noKeyWarning) }
            } catch {
                throw StartError(error.description, isInvalidInput: true)
            }
        }
        // Connections for the workers, the handler threads and the upkeep: one kept for each.
        let readerThreads = configuration.readsWaitForTheStore ? configuration.readerThreads : 0
        let storeConnections = configuration.workers + configuration.handlerThreads + readerThreads + 2
        let pool = StorePool(capacity: storeConnections, open: openStore)
        do {
            try pool.warm()
        } catch {
            throw StartError("cannot open the store: \(error)")
        }
        let log = AccessLog(enabled: configuration.accessLog)
        for warning in keysWarnings { log.event("keys warning", [("warning", warning)]) }
        if let warning = descriptorWarning(configuration, storeConnections: storeConnections) {
            log.event("descriptor warning", [("warning", warning)])
        }
        let api = API(configuration: configuration, keys: keys, pool: pool, log: log, storeMetrics: storeMetrics)
        let done = DispatchSemaphore(value: 0)
        let readsWait = configuration.readsWaitForTheStore
        let mayWait: @Sendable (HTTPRequest) -> Bool = { request in
            readsWait || (request.method != .get && request.method != .head)
        }
        let isRead: @Sendable (HTTPRequest) -> Bool = { request in request.method == .get || request.method == .head }
        var http = HTTPServer.Configuration(
            host: configuration.host, port: configuration.port, workerThreads: configuration.workers,
            handlerThreads: configuration.handlerThreads, readerThreads: readerThreads,
            connectionLimit: configuration.connectionLimit,
            perIPConnectionLimit: configuration.perIPConnectionLimit == 0 ? nil : configuration.perIPConnectionLimit,
            connectionTimeout: .seconds(configuration.connectionTimeoutSeconds),
            memoryLimitPerConnection: configuration.headerBytesLimit,
            maximumBodySize: configuration.maximumBodyBytes,
            bodyBytesInMemoryLimit: configuration.bodyMemoryLimit)
        // An export may be read slowly for as long as its own limit allows (it is cut off then, and says so).
        http.streamedBodyTimeout = .seconds(configuration.exportTimeLimitSeconds + configuration.connectionTimeoutSeconds)
        let server: HTTPServer
        do {
            server = try HTTPServer(
                configuration: http,
                log: { line in log.event("http", [("message", line)]) },
                mayWait: mayWait, waitsBriefly: isRead, screen: api.screen, refused: api.refused, handler: api.answer)
        } catch {
            throw StartError(error.description)
        }
        api.metrics.countBodies { [unowned server] in (server.bodyBytesInMemory, server.bodiesRefusedForMemory) }
        let keysWatch = KeysWatch(path: configuration.keysPath, version: keysVersion, api: api)
        /// Drains, stops the server and lets the main thread end the process.
        @Sendable func drainAndStop() {
            api.startDraining()
            if configuration.drainDelaySeconds > 0 {
                var pause = timespec(tv_sec: configuration.drainDelaySeconds, tv_nsec: 0)
                _ = nanosleep(&pause, nil)
            }
            let cutsOff = configuration.cutsOffRequestsAfterGrace
            let abandoned = server.stop(
                gracePeriod: .seconds(configuration.gracePeriodSeconds), leavingHandlersRunning: cutsOff)
            // Waited for instead (a Redis Cluster's), they finished: counted as such, not as abandoned (each
            // was answered).
            log.event(
                "stopped",
                counts: cutsOff
                    ? [("abandonedRequests", abandoned)]
                    : [("abandonedRequests", 0), ("finishedPastGrace", abandoned)])
            if abandoned > 0 && cutsOff {
                // Their handlers run on past the grace (a store that stopped answering): the process ends now,
                // and they with it, as `--grace` promises. None of their answers reached its client, so none was
                // acknowledged; a write cut off in its transaction is rolled back, as after kill -9.
                log.flush(within: .seconds(1))
                _exit(0)
            }
            done.signal()
        }
        let signals: ProcessSignals
        let stopping = FirstTime()
        do {
            signals = try ProcessSignals { signal in
                if signal == .hangUp {
                    keysWatch.reload(reason: "SIGHUP")
                    return
                }
                // SIGUSR1, SIGUSR2, a timer's signal: their default action ended the server with no drain and no
                // log line.
                guard signal.asksToStop else {
                    log.event(
                        "signal ignored",
                        [
                            ("signal", signal.description),
                            ("reason", "SIGTERM stops the server, SIGHUP reloads its keys"),
                        ])
                    return
                }
                // A second stop signal (`timeout` sends two, a supervisor may repeat its own) is the same stop: it
                // neither drains again nor logs a second "stopped" after the process has begun to end.
                guard stopping.take() else {
                    log.event("signal ignored", [("signal", signal.description), ("reason", "already stopping")])
                    return
                }
                log.event("draining", [("signal", signal.description)])
                // On a thread of its own, so that signals sent during the drain are taken as they come: this
                // thread waited in the drain, and a second stop signal or a SIGHUP, pending until after "stopped",
                // raced the process's exit (its line was lost in a full test run on a loaded machine).
                let drain = startSystemThread { drainAndStop() }
                if case .success(let thread) = drain { pthread_detach(thread) } else { drainAndStop() }
            }
        } catch {
            server.stop(gracePeriod: .zero)
            throw StartError(error.description)
        }
        let upkeep = StoreUpkeep(pool: pool, log: log)
        upkeep.start()
        keysWatch.start()
        api.readiness = .ready
        log.event("listening", [("address", "http://\(server.address)")])
        announce("listening on http://\(server.address)")
        done.wait()
        upkeep.stop()
        keysWatch.stop()
        signals.stop()
        log.flush(within: .seconds(1))
    }
}

/// Says yes once: whether this is the first call of `take()`.
private final class FirstTime: Sendable {
    private let taken = Atomic<Bool>(false)

    func take() -> Bool { !taken.exchange(true, ordering: .relaxed) }
}

extension SuggestServer {
    /// What the log says at start when the process may open fewer files than its connections and its store need.
    /// The executable raised its soft limit to the hard one, which only an administrator raises: under a hard limit
    /// of 64, connections past it are refused by the kernel, a readiness probe's too, which then waits, and
    /// nothing else would say why. Each store connection counts 4 files (a database, its log, its index, a reserve).
    static func descriptorWarning(_ configuration: ServerConfiguration, storeConnections: Int) -> String? {
        let limit = system_descriptor_limit()
        let needed = configuration.connectionLimit + 4 * storeConnections + 32
        guard limit >= 0, limit < needed else { return nil }
        return "the process may open \(limit) files, fewer than \(configuration.connectionLimit) connections "
            + "(--max-connections) and the store's files need (about \(needed)): connections past the limit are "
            + "refused, readiness probes among them; raise the hard limit (ulimit -Hn, LimitNOFILE= in a systemd "
            + "unit) or lower --max-connections"
    }
}
