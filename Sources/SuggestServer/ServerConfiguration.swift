import HTTPServer

/// How `suggest serve` runs: where it listens, which keys open which tenants, and its limits. Every setting has a
/// flag and an environment variable (the flag wins); the defaults suit one machine behind a reverse proxy.
public struct ServerConfiguration: Sendable, Equatable {
    /// The address to listen on (`--host`, `SUGGEST_HOST`): 127.0.0.1 unless given. Without keys, only a loopback
    /// address is allowed.
    public var host = "127.0.0.1"
    /// The port (`--port`, `SUGGEST_PORT`): 8080 unless given; 0 picks a free one.
    public var port = 8080
    /// The keys file (`--keys`, `SUGGEST_KEYS`), re-read on SIGHUP and when it changes.
    public var keysPath: String?
    /// Worker threads answering requests (`--workers`, `SUGGEST_WORKERS`): one per core unless given.
    public var workers = HTTPServer.Configuration.onlineProcessors
    /// Threads on which requests wait for the store while the workers go on reading other requests: every request
    /// that writes (every method but GET and HEAD), and every request when `readsWaitForTheStore`. While one waits
    /// for its commit the donations of the others can share it (`GroupCommitWriter`): waiting on the workers, two
    /// workers made groups of at most two. 32 unless given (`--handler-threads`).
    public var handlerThreads = 32
    /// Whether reads wait for the store too, so that they also run on `handlerThreads`: for a store across the
    /// network (a Redis Cluster), whose queries are round trips the workers would otherwise sit through, two at a
    /// time. `suggest serve` sets it for a `redis://` store.
    public var readsWaitForTheStore = false
    /// Whether a request still running when SIGTERM's grace period ends is cut off with the process (`true`), or
    /// waited for. Only a store that rolls a cut-off write back may cut: SQLite's transaction does, where a batch
    /// on a Redis Cluster is several scripts that only its own undo takes back. `true` unless set.
    public var cutsOffRequestsAfterGrace = true
    /// With `readsWaitForTheStore`, the threads reads run on, apart from `handlerThreads`: a read from a ranking
    /// mirror waits for one short round trip, and 32 threads busy on 2 cores queue on every lock they share (the
    /// store pool's, the cluster client's): 4 threads answered 1.4× the GETs of 32 (Benchmarks/README.md, "A
    /// ranking mirror on Redis"). Two per core, at least 2.
    public var readerThreads = max(2, 2 * HTTPServer.Configuration.onlineProcessors)
    /// The largest request body accepted (`--max-body-bytes`): 32 MiB unless given; a larger
    /// one is refused with 413 before it is read.
    public var maximumBodyBytes = 32 << 20
    /// Bytes all request bodies being read or answered may hold at once (`--max-body-memory`): unless given, twice
    /// `maximumBodyBytes` and at least 64 MiB. A body that does not fit beside the others is refused with 503 and
    /// `Retry-After: 1`. Bodies are held whole until answered, so without it 1,024 connections could hold 32 GiB.
    public var maximumBodyMemory: Int?

    /// `maximumBodyMemory`, or its default; never below `maximumBodyBytes` (`suggest serve` refuses a smaller one).
    public var bodyMemoryLimit: Int {
        max(maximumBodyMemory ?? max(64 << 20, 2 * maximumBodyBytes), maximumBodyBytes)
    }
    /// Exports (`GET .../donations`) being sent at once (`--max-exports`): 8 unless given. An export is sent as its
    /// client reads it, from a store connection of its own that reads the store as it was when the export began;
    /// one more is refused with 503 `busy` and `Retry-After: 1`.
    public var maximumExports = 8
    /// Seconds an export may take, its client's reading included (`--export-time-limit`): 600 unless given. While
    /// an export's read is open the store's log cannot be checkpointed past it: the log grows, and what a deletion
    /// removed meanwhile stays in the database file. A client reading a byte at a time cannot hold that for longer:
    /// the export is cut off, without its last chunk (the client sees an incomplete transfer).
    public var exportTimeLimitSeconds = 600
    /// Connections open at once (`--max-connections`): 1024 unless given.
    public var connectionLimit = 1024
    /// Connections from one address at once (`--max-connections-per-ip`): 256 unless given; 0 for no limit (behind a
    /// reverse proxy every connection comes from its address).
    public var perIPConnectionLimit = 256
    /// Bytes a connection may use for its request line and header fields (`--max-header-bytes`): 64 KiB unless
    /// given. A longer request target is refused with 414, larger headers with 431. libmicrohttpd clears this much
    /// memory before every request of a kept-alive connection, so a larger limit costs every request.
    public var headerBytesLimit = 64 << 10
    /// Seconds an idle connection stays open (`--timeout`): 30 unless given.
    public var connectionTimeoutSeconds = 30
    /// Seconds between SIGTERM and the moment the server stops accepting connections (`--drain-delay`): 0 unless
    /// given. Readiness is 503 from SIGTERM on, so a load balancer that probes it has this long to stop sending
    /// new requests before connections are refused.
    public var drainDelaySeconds = 0
    /// Seconds the requests in flight get to finish after SIGTERM (`--grace`): 10 unless given.
    public var gracePeriodSeconds = 10
    /// One JSON line per request on standard error (`--no-access-log` turns it off).
    public var accessLog = true

    /// The defaults described on each property.
    public init() {}

    /// Whether `host` is one the server can listen on (`HTTPServer.canListen(on:)`).
    public var hostIsAddress: Bool { HTTPServer.canListen(on: host) }

    /// Whether `host` names only this machine, so that a server without keys reaches no one else.
    public var isLoopback: Bool { HTTPServer.isLoopback(host) }

    /// Why this configuration may not be served, when it serves a host beyond this machine without keys: checked
    /// by `suggest serve`'s options (bad usage, before anything starts) and by `SuggestServer.run` itself (for a
    /// caller of the library).
    public var unguardedHostProblem: String? {
        guard keysPath == nil && !isLoopback else { return nil }
        return "without --keys the server serves only a loopback host (127.0.0.1, ::1, localhost), not \(host); "
            + "give --keys FILE to serve others"
    }
}
