import CSystem
import Dispatch
import HTTPServer
import SuggestCore
import Synchronization

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
        init(_ description: String) { self.description = description }
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
        if let problem = configuration.unguardedHostProblem { throw StartError(problem) }
        var keys: KeyRing?
        var keysVersion: KeyRing.FileVersion?
        var keysWarnings: [String] = []
        if let path = configuration.keysPath {
            do {
                let file = try KeyRing.load(path: path)
                keys = file.ring
                keysVersion = file.version
                keysWarnings = file.warnings
            } catch {
                throw StartError(error.description)
            }
        }
        // Connections for the workers, the handler threads and the upkeep: one kept for each.
        let readerThreads = configuration.readsWaitForTheStore ? configuration.readerThreads : 0
        let pool = StorePool(
            capacity: configuration.workers + configuration.handlerThreads + readerThreads + 2, open: openStore)
        do {
            try pool.warm()
        } catch {
            throw StartError("cannot open the store: \(error)")
        }
        let log = AccessLog(enabled: configuration.accessLog)
        for warning in keysWarnings { log.event("keys warning", [("warning", warning)]) }
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
        let signals: ProcessSignals
        do {
            signals = try ProcessSignals { signal in
                if signal == .hangUp {
                    keysWatch.reload(reason: "SIGHUP")
                    return
                }
                log.event("draining", [("signal", signal.description)])
                api.startDraining()
                if configuration.drainDelaySeconds > 0 {
                    var pause = timespec(tv_sec: configuration.drainDelaySeconds, tv_nsec: 0)
                    _ = nanosleep(&pause, nil)
                }
                let cutsOff = configuration.cutsOffRequestsAfterGrace
                let abandoned = server.stop(
                    gracePeriod: .seconds(configuration.gracePeriodSeconds), leavingHandlersRunning: cutsOff)
                // Waited for instead (a Redis Cluster's), they finished: counted as such, not as abandoned (a probe
                // saw a batch answered 201 and counted abandoned).
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
        } catch {
            server.stop(gracePeriod: .zero)
            throw StartError(error.description)
        }
        let maintenance = Maintenance(pool: pool, log: log)
        maintenance.start()
        keysWatch.start()
        api.readiness = .ready
        log.event("listening", [("address", "http://\(server.address)")])
        announce("listening on http://\(server.address)")
        done.wait()
        maintenance.stop()
        keysWatch.stop()
        signals.stop()
        log.flush(within: .seconds(1))
    }
}

/// Re-reads the keys file when it changes (`KeyRing.FileVersion`, checked every 2 seconds) or on SIGHUP; a file that
/// cannot be used leaves the keys as they were, and says why. A file that lists no key revokes every key (each
/// request that needs one gets 401); a file removed keeps them, and says so once (a deployment that replaces the
/// file by a rename never has it missing, so a missing file is a mistake more likely than a revocation).
final class KeysWatch: Sendable {
    private let path: String?
    private let version: Mutex<KeyRing.FileVersion?>
    /// Whether the watch has said that the file is missing, since it last found it.
    private let missingReported = Mutex(false)
    private let api: API
    private let task: Mutex<PeriodicTask?> = Mutex(nil)

    init(path: String?, version: KeyRing.FileVersion?, api: API) {
        self.path = path
        self.version = Mutex(version)
        self.api = api
    }

    func start() {
        guard path != nil else { return }
        let task = PeriodicTask(label: "suggest.keys", every: .seconds(2)) { [self] in
            guard let path else { return }
            guard let current = KeyRing.FileVersion.of(path: path) else {
                if !missingReported.withLock({ reported in defer { reported = true }; return reported }) {
                    api.log.event(
                        "keys file missing; the old keys stay",
                        [("path", path), ("hint", "to revoke every key, write {\"keys\": []} into it")])
                }
                return
            }
            missingReported.withLock { $0 = false }
            if version.withLock({ $0 }) != current { reload(reason: "the file changed") }
        }
        self.task.withLock { $0 = task }
        task.start()
    }

    func stop() { task.withLock { $0 }?.stop() }

    func reload(reason: String) {
        guard let path else {
            api.log.event("keys not reloaded", [("reason", "the server has no keys file")])
            return
        }
        do {
            let file = try KeyRing.load(path: path, allowingNoKey: true)
            api.replaceKeys(file.ring)
            version.withLock { $0 = file.version }
            var fields = [("why", reason)]
            var warnings = file.warnings
            if file.ring.entries.isEmpty {
                warnings.append("the file lists no key: every request that needs one is refused (401)")
            }
            if !warnings.isEmpty { fields.append(("warning", warnings.joined(separator: "; "))) }
            api.log.event("keys reloaded", fields, counts: [("tenants", Set(file.ring.entries.map(\.tenant)).count)])
        } catch {
            // The refused version is kept anyway, so that a broken file is reported once, not every 2 seconds;
            // making it usable (an edit, a rename into place, a chmod) is a new version. The version of the file
            // that was read, not of what the path names a moment later, which may already be the fix.
            let refused = error.version ?? KeyRing.FileVersion.of(path: path)
            version.withLock { $0 = refused }
            api.log.event("keys not reloaded; the old keys stay", [("error", error.description)])
        }
    }
}

/// The store's upkeep in the background: small maintenance steps (`MaintenanceBudget.step`) every few seconds,
/// each on a connection of its own, so that expiry and policy rebuilds never run behind a request; and a
/// checkpoint every second, which makes what was acknowledged durable against a power loss without a request
/// ever waiting for it (the connections' own checkpoints are only a safety valve for a burst of writes), and in
/// which the embedded store also brings its ranking mirror up to date (`SQLiteDonationStore.checkpoint()`).
final class Maintenance: Sendable {
    private let task: PeriodicTask
    private let checkpoints: PeriodicTask
    private let checkpointer: Checkpointer

    /// The connection the checkpoints run on, its own for the server's life: a checkpoint tells a log that writes
    /// are still coming into from a quiet one by what its connection saw at the one before (`SQLiteDonationStore
    /// .checkpoint()`), which a connection from the pool, another each time, would not know. Used by one thread at a
    /// time: the periodic task's, then the stop's, after the task has ended.
    private final class Checkpointer: @unchecked Sendable {
        private let pool: StorePool
        private let log: AccessLog
        private var store: (any DonationStore)?
        /// The failure the last checkpoint logged, and how many times in a row it has failed so since: a store that
        /// stays broken (read-only, deleted) is logged when its failure starts, changes or ends, and once a minute,
        /// not every second.
        private var failure: (message: String, count: Int)?

        init(pool: StorePool, log: AccessLog) {
            self.pool = pool
            self.log = log
        }

        func checkpoint() {
            do {
                let store = try self.store ?? pool.openConnection()
                self.store = store
                try store.checkpoint()
                if let failure {
                    log.event("checkpoint recovered", counts: [("failures", failure.count)])
                    self.failure = nil
                }
            } catch {
                let message = "\(error)"
                if let failure, failure.message == message {
                    self.failure?.count += 1
                    guard (failure.count + 1) % 60 == 0 else { return }
                    log.event("checkpoint failed", [("error", message)], counts: [("failures", failure.count + 1)])
                } else {
                    failure = (message, 1)
                    log.event("checkpoint failed", [("error", message)])
                }
            }
        }
    }

    init(pool: StorePool, log: AccessLog) {
        let checkpointer = Checkpointer(pool: pool, log: log)
        self.checkpointer = checkpointer
        checkpoints = PeriodicTask(label: "suggest.checkpoint", every: .seconds(1)) { checkpointer.checkpoint() }
        task = PeriodicTask(label: "suggest.maintenance", every: .seconds(5)) {
            // Steps until the work is done or a second has gone, then waits for the next run.
            let started = ContinuousClock.now
            do {
                while ContinuousClock.now - started < .seconds(1) {
                    let report = try pool.withStore { store in try store.maintain(account: nil, now: .now(), budget: .step) }
                    if report.expired.donations > 0 || report.recomputedConversations > 0 {
                        log.event(
                            "maintenance",
                            counts: [
                                ("expiredDonations", report.expired.donations),
                                ("recomputedConversations", report.recomputedConversations),
                            ])
                    }
                    if report.isComplete { break }
                }
            } catch {
                log.event("maintenance failed", [("error", "\(error)")])
            }
        }
    }

    func start() {
        task.start()
        checkpoints.start()
    }

    /// Stops the upkeep, and checkpoints one last time once the last request has been answered: the first call
    /// copies what the last requests committed, the second finds nothing new and cuts the log to nothing, so that
    /// the next process to open the store has no log to read.
    func stop() {
        checkpoints.stop()
        task.stop()
        for _ in 0..<2 { checkpointer.checkpoint() }
    }
}
