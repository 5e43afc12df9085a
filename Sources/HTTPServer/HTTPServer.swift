import CMicroHTTPD
import CSystem
import Synchronization

/// An HTTP/1.1 server on GNU libmicrohttpd: it accepts connections on its own threads, reads each request whole and
/// hands it to one handler, which answers with a response.
///
/// Connections are accepted on a thread of the server's own and dealt out to MHD's worker threads (a pool, each
/// with its own epoll set); the handler runs on them, once per request, after the whole body has arrived, or, for
/// a request that may wait (`mayWait`), on a thread of the server's own while the worker goes on. MHD
/// parses the protocol and answers malformed requests itself (400, 414, 431, 505); the server adds the body limit
/// (413 without reading a declared body, or as soon as a chunked one crosses it), a limit on the bodies held at
/// once (503), a look at each request's head before its body is read (`screen`), percent-decoding of the target,
/// and a graceful stop.
///
/// Keep the server alive with a reference outside the handler, and stop it from outside the handler: stopping
/// (or letting the last reference go, which stops it) from a worker thread would wait for itself.
///
/// ```swift
/// let server = try HTTPServer(configuration: .init(port: 0)) { request in
///     request.pathSegments == ["v1", "version"] ? .json(#"{"version":"1.0"}"#) : .text("no such route", status: .notFound)
/// }
/// print("listening on http://\(server.address)")
/// server.stop(gracePeriod: .seconds(10))
/// ```
public final class HTTPServer: Sendable {
    /// Answers one request; called on a worker thread, concurrently with other requests.
    public typealias Handler = @Sendable (HTTPRequest) -> HTTPResponse
    /// Receives one line per event worth logging, from MHD (a refused connection, a malformed request) or from the
    /// server (a refused body, a response the handler got wrong); called on any thread.
    public typealias LogHandler = @Sendable (String) -> Void

    /// A request the server answers itself, before any handler or `screen` sees it: a body over the limit, a
    /// framing it cannot trust, a target that is not one, no room for the body.
    public struct Refusal: Sendable {
        /// The request's head, without its body (its header fields may be what the server refused); `nil` when
        /// its target is not one (then `method` and `headers` are what is known).
        public var head: HTTPRequest?
        /// The request's method, as sent.
        public var method: String
        /// The request's header fields.
        public var headers: HTTPHeaders
        /// The answer the server sends.
        public var response: HTTPResponse
    }

    /// Sees each `Refusal` and returns the response to send: the same, or with headers added (a request id). For
    /// the access log and the metrics, which would otherwise never hear of these requests.
    public typealias RefusalHandler = @Sendable (Refusal) -> HTTPResponse

    /// The configuration the server runs with.
    public let configuration: Configuration
    /// The address the server listens on, with the port chosen when `configuration.port` was 0.
    public let address: SocketAddress

    private let core: ServerCore
    private let running: Mutex<Daemon?>

    /// The parts of a running server that `stop` takes down.
    private struct Daemon {
        let daemon: OpaquePointer
        /// The listening socket, ours to shut down and close.
        let socket: Int32
        let acceptor: ConnectionAcceptor
    }

    /// Starts a server: binds the address, starts the worker threads, and returns once it accepts connections.
    ///
    /// The worker threads start with `ProcessSignals.Signal.all` blocked, whatever the calling thread blocks, so
    /// that those signals go to whoever waits for them (`ProcessSignals`), never to a thread in the middle of a
    /// request.
    /// - Parameters:
    ///   - configuration: where to listen and the limits.
    ///   - log: where log lines go; nowhere unless given.
    ///   - mayWait: whether a request's handler may wait for other requests (a commit it shares with them): with
    ///     `configuration.handlerThreads` above 0, it then runs on one of those threads. Called on the worker,
    ///     once per request; keep it to a look at the method or the path.
    ///   - waitsBriefly: whether a request `mayWait` sends off the workers waits only briefly: with
    ///     `configuration.readerThreads` above 0, it then runs on one of those. Called like `mayWait`.
    ///   - screen: looks at a request that declares a body when its head has arrived, before any of the body is
    ///     read (its `body` is empty): a response refuses it with that, and the body is never kept. A client that
    ///     asked for `100 Continue` gets the answer at once (and the connection closes after it); one that sends
    ///     its body regardless has it read, dropped and then answered. For what needs no body to decide (the
    ///     route, the method, the key), so that a request that would be refused costs no memory for its body.
    ///   - refused: sees each request the server answers itself (`Refusal`) and returns what to send.
    ///   - handler: answers each request.
    /// - Throws: `HTTPServerError` when the configuration is out of range, the address cannot be bound, or MHD
    ///   cannot start its threads.
    public init(
        configuration: Configuration = Configuration(), log: @escaping LogHandler = { _ in },
        mayWait: @escaping @Sendable (HTTPRequest) -> Bool = { _ in false },
        waitsBriefly: @escaping @Sendable (HTTPRequest) -> Bool = { _ in false },
        screen: @escaping @Sendable (HTTPRequest) -> HTTPResponse? = { _ in nil },
        refused: @escaping RefusalHandler = { $0.response }, handler: @escaping Handler
    ) throws(HTTPServerError) {
        try configuration.validate()
        let listener = try ListeningSocket.open(
            host: configuration.host, port: configuration.port, backlog: configuration.listenBacklog)
        var handlerThreads: HandlerThreads?
        var readerThreads: HandlerThreads?
        if configuration.handlerThreads > 0 {
            do {
                handlerThreads = try HandlerThreads(count: configuration.handlerThreads)
                if configuration.readerThreads > 0 {
                    readerThreads = try HandlerThreads(count: configuration.readerThreads)
                }
            } catch {
                handlerThreads?.stop()
                close(listener.descriptor)
                throw error
            }
        }
        let core: ServerCore
        do {
            core = try ServerCore(
                handler: handler, mayWait: mayWait, handlerThreads: handlerThreads, waitsBriefly: waitsBriefly,
                readerThreads: readerThreads, screen: screen, refused: refused, log: log,
                maximumBodySize: configuration.maximumBodySize,
                bodyBytesInMemoryLimit: configuration.bodyBytesInMemoryLimit,
                headTimeout: configuration.connectionTimeout,
                streamedBodyTimeoutSeconds: configuration.streamedBodyTimeoutSeconds,
                minimumBodyRate: configuration.minimumBodyRate)
        } catch {
            readerThreads?.stop()
            handlerThreads?.stop()
            close(listener.descriptor)
            throw error
        }
        // The acceptor holds the limit over all workers, so each worker's share (MHD divides its option among
        // them) is the whole limit: none refuses a connection the acceptor let in.
        let workerLimit = min(configuration.connectionLimit * configuration.workerThreads, Int(Int32.max))
        var options = suggest_mhd_options(
            thread_pool_size: UInt32(configuration.workerThreads), connection_limit: UInt32(workerLimit),
            per_ip_connection_limit: UInt32(configuration.perIPConnectionLimit ?? 0),
            connection_timeout: configuration.timeoutSeconds,
            connection_memory_limit: configuration.memoryLimitPerConnection)
        var flags =
            MHD_USE_INTERNAL_POLLING_THREAD.rawValue | MHD_USE_EPOLL.rawValue | MHD_USE_ITC.rawValue
            | MHD_USE_ERROR_LOG.rawValue | MHD_USE_NO_LISTEN_SOCKET.rawValue
        if handlerThreads != nil { flags |= MHD_ALLOW_SUSPEND_RESUME.rawValue }
        if listener.address.isIPv6 { flags |= MHD_USE_IPv6.rawValue }
        let started = ProcessSignals.withSignalsBlocked {
            suggest_mhd_start(
                flags, &options, mhdAccess, mhdRequestEnded, mhdRequestStarted, mhdConnectionChanged, mhdLog,
                core.closure)
        }
        guard let started else {
            core.stopHandlerThreads()
            close(listener.descriptor)
            throw HTTPServerError(
                "cannot start the HTTP server on \(listener.address): libmicrohttpd refused to start (see its log "
                    + "lines); check the thread and connection limits against this machine's")
        }
        let acceptor: ConnectionAcceptor
        do {
            acceptor = try ConnectionAcceptor(
                listener: listener.descriptor, daemon: started, core: core,
                connectionLimit: configuration.connectionLimit, workers: configuration.workerThreads)
        } catch {
            MHD_stop_daemon(started)
            core.stopHandlerThreads()
            close(listener.descriptor)
            throw error
        }
        self.configuration = configuration
        self.address = listener.address
        self.core = core
        running = Mutex(Daemon(daemon: started, socket: listener.descriptor, acceptor: acceptor))
    }

    deinit {
        stop(gracePeriod: .zero)
    }

    /// Bytes of request bodies the server holds now (a declared length counts whole from the moment its head is
    /// admitted) for requests not yet ended.
    public var bodyBytesInMemory: Int { core.bodyBytesInMemory.load(ordering: .relaxed) }

    /// Requests refused with 503 so far because their bodies did not fit beside the others
    /// (`Configuration.bodyBytesInMemoryLimit`).
    public var bodiesRefusedForMemory: Int { core.bodiesRefusedForMemory.load(ordering: .relaxed) }

    /// Requests under way now: their request line has arrived and they have not been answered (or cut off).
    public var requestsInFlight: Int { core.inFlight.load(ordering: .relaxed) }

    /// Whether a stop has begun (the server no longer accepts connections, or soon will not).
    public var isStopping: Bool { core.draining.load(ordering: .relaxed) }

    /// Stops the server gracefully: refuses new connections at once, lets the requests in flight finish for up to
    /// `gracePeriod`, then closes every connection and ends the worker threads.
    ///
    /// From the first moment, every response closes its connection, so keep-alive clients go elsewhere. A request
    /// still running when the grace period ends is cut off, except that a handler already running or waiting for a
    /// handler thread is let return (the server joins those threads, and MHD its workers), unless
    /// `leavingHandlersRunning`. A streamed body still being sent then ends with its connection, and does not count
    /// as a request left running. A call on a stopped server returns 0 at once.
    ///
    /// Call it from any thread but a worker: from inside the handler it would wait for its own request and then
    /// join its own thread, so it stops the process there instead (a programming error, not a condition).
    /// - Parameters:
    ///   - gracePeriod: how long to wait for the requests in flight.
    ///   - leavingHandlersRunning: for a process about to end: when requests are still in flight after the grace
    ///     period, return at once instead of joining the threads that run their handlers (which would hold the
    ///     stop for as long as a handler runs: a store that stopped answering, for instance). The server is left
    ///     as it is, refusing connections; a later `stop` joins its threads.
    /// - Returns: how many requests were still in flight when the grace period ended, not counting those only
    ///   sending a streamed body (0 when all finished).
    @discardableResult
    public func stop(gracePeriod: Duration = .seconds(10), leavingHandlersRunning: Bool = false) -> Int {
        precondition(
            !core.isInsideHandler,
            "HTTPServer.stop called from inside its handler; call it from another thread (a signal handler's)")
        // The socket is shut down under the lock that the final take holds too, so never after another stop has
        // taken the daemon and closed the descriptor (whose number may have been given to another file since).
        let draining = running.withLock { (running: inout Daemon?) -> Bool in
            guard let socket = running?.socket else { return false }
            if !core.draining.load(ordering: .relaxed) {
                core.draining.store(true, ordering: .relaxed)
                // Shutting the socket down makes the kernel refuse new connections and reset the ones waiting in
                // the backlog, and wakes the acceptor, which ends; the descriptor is closed once it has.
                _ = shutdown(socket, Int32(SHUT_RDWR))
            }
            return true
        }
        guard draining, let daemon = running.withLock({ $0 }) else { return 0 }
        daemon.acceptor.stop()
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: gracePeriod)
        var waited = 0
        while core.inFlight.load(ordering: .relaxed) > 0 && clock.now < deadline {
            // Connections only sending a head, or idle between requests, have nothing to finish: closed now and
            // every 50 ms after (a request that ends meanwhile leaves its connection waiting for the next head).
            if waited % 50 == 0 { core.cutWaitingHeads() }
            waited += 1
            pause(milliseconds: 1)
        }
        // A request only sending its streamed body is not waiting for a handler: it ends with its connection.
        let abandoned = max(
            0, core.inFlight.load(ordering: .relaxed) - core.streamingResponses.load(ordering: .relaxed))
        if abandoned > 0 && leavingHandlersRunning { return abandoned }
        // Whoever takes the daemon joins its threads; a stop under way in another thread already has.
        guard running.withLock({ $0.take() }) != nil else { return abandoned }
        // Every handler thread has resumed its connection once it ends: MHD stops a daemon only without suspended
        // connections (it aborts the process otherwise).
        core.stopHandlerThreads()
        // The requests waited for past the grace have their answers now, which MHD's threads are still writing:
        // stopping the daemon at once closed such a connection unanswered (a batch recorded whole, its client never
        // told, under a loaded machine). A few seconds at most, for a client that does not read.
        let sendingDeadline = clock.now.advanced(by: .seconds(5))
        while abandoned > 0, core.inFlight.load(ordering: .relaxed) > core.streamingResponses.load(ordering: .relaxed),
            clock.now < sendingDeadline
        {
            pause(milliseconds: 1)
        }
        MHD_stop_daemon(daemon.daemon)
        close(daemon.socket)
        return abandoned
    }
}
