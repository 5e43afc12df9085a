import CMicroHTTPD
import CSystem
import Synchronization

/// Accepts connections on the listening socket, on a thread of its own, and deals them to MHD's workers in turn
/// (`MHD_add_connection`).
///
/// MHD's own accepting gives a worker that wakes first up to ten connections in a row: a client that opens its
/// connections at once (a load balancer, a benchmark) got them all on one thread, and the other workers sat idle.
/// Accepting here spreads them, and keeps the connection limit exact over all workers: at the limit nothing is
/// accepted, and clients wait in the listen backlog until a connection closes.
///
/// MHD gives an added connection to the worker its socket's number names (the number modulo the workers). Numbers
/// come in whatever order the process's other files left free, so connections accepted one after another may all
/// have even numbers, and land on one of two workers; each connection is therefore renumbered (a duplicate at a
/// number of the right remainder) for the next worker in turn.
final class ConnectionAcceptor: Sendable {
    private let listener: Int32
    private let daemon: Daemon
    private let core: ServerCore
    private let connectionLimit: Int
    /// MHD's worker threads, which connections are dealt to in turn.
    private let workers: Int
    /// Connections accepted so far, which says whose turn it is.
    private let accepted = Atomic<Int>(0)
    private let stopping = Atomic<Bool>(false)
    private let thread: Mutex<pthread_t?>

    /// MHD's daemon, which is safe to hand connections to from any thread (it was started with `MHD_USE_ITC`).
    private struct Daemon: @unchecked Sendable { let pointer: OpaquePointer }

    /// Starts accepting on `listener` (non-blocking) for `daemon`.
    /// - Throws: `HTTPServerError` when the thread cannot start.
    init(listener: Int32, daemon: OpaquePointer, core: ServerCore, connectionLimit: Int, workers: Int)
        throws(HTTPServerError)
    {
        self.listener = listener
        self.daemon = Daemon(pointer: daemon)
        self.core = core
        self.connectionLimit = connectionLimit
        self.workers = max(1, workers)
        self.thread = Mutex(nil)
        let thread = try ProcessSignals.withSignalsBlocked { () throws(HTTPServerError) in
            try startServerThread("accepts connections") { self.run() }
        }
        self.thread.withLock { $0 = thread }
    }

    /// Stops accepting and waits for the thread to end. The caller shuts the listening socket down first, which
    /// wakes the thread at once; otherwise it notices within its poll interval.
    func stop() {
        stopping.store(true, ordering: .releasing)
        guard let thread = self.thread.withLock({ $0.take() }) else { return }
        pthread_join(thread, nil)
    }

    private func run() {
        var lastComplaint: timespec?
        while !stopping.load(ordering: .acquiring) {
            core.cutSlowClients()
            if core.openConnections.load(ordering: .acquiring) >= connectionLimit {
                pause(milliseconds: 5)
                continue
            }
            var ready = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
            let polled = poll(&ready, 1, ConnectionAcceptor.pollMilliseconds)
            if polled <= 0 { continue }  // the interval passed (the stop flag is read again) or a signal came
            var address = sockaddr_storage()
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let socket = withUnsafeMutablePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    suggest_accept(listener, $0, &length)
                }
            }
            guard socket >= 0 else {
                let code = system_errno()
                switch code {
                case EAGAIN, EWOULDBLOCK, EINTR, ECONNABORTED, EPROTO:
                    continue  // another connection's trouble, or none was waiting after all
                case EINVAL, EBADF, ENOTSOCK:
                    // The socket was shut down: the server is draining (it says so before it shuts the socket).
                    if core.draining.load(ordering: .relaxed) || stopping.load(ordering: .acquiring) { return }
                    fallthrough
                default:
                    // Out of descriptors or memory, or the socket unusable while the server is not stopping: the
                    // connection stays in the backlog; say so now and then. Ending the thread here left a server
                    // that answered no new connection and said nothing of it.
                    if ConnectionAcceptor.secondPassed(since: &lastComplaint) {
                        core.log("cannot accept a connection: \(HTTPServerError.describe(code)); retrying")
                    }
                    pause(milliseconds: 50)
                    continue
                }
            }
            let turn = accepted.wrappingAdd(1, ordering: .relaxed).oldValue % workers
            let client = Self.numbered(socket, forWorker: turn, of: workers)
            // Counted before MHD has it: its worker may close it (and count it out) before the call returns.
            core.openConnections.add(1, ordering: .acquiringAndReleasing)
            let added = withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    MHD_add_connection(daemon.pointer, client, $0, length)
                }
            }
            // Refused (the limit per client address, or out of memory): MHD has closed it and logged why.
            if added != .YES { core.openConnections.subtract(1, ordering: .acquiringAndReleasing) }
        }
    }

    /// `socket`, or a duplicate of it whose number MHD gives to worker `worker` of `workers` (the number modulo
    /// `workers`), the original closed. A duplicate takes the lowest free number from the one asked for up: usually
    /// the nearest right one; when that number was taken, the next right one above what was found is asked for, a
    /// few dozen times at most. When none is found, or none is free (the process at its limit of files), the
    /// connection keeps its own number and MHD's choice: spreading is best effort, never a refusal.
    static func numbered(_ socket: Int32, forWorker worker: Int, of workers: Int) -> Int32 {
        guard workers > 1 else { return socket }
        var candidate = Int(socket)
        for _ in 0..<64 {
            let remainder = candidate % workers
            if remainder == worker {
                if candidate == Int(socket) { return socket }
                close(socket)
                return Int32(candidate)
            }
            if candidate != Int(socket) { close(Int32(candidate)) }
            let wanted = candidate + (worker - remainder + workers) % workers
            let duplicate = system_duplicate_at_least(socket, Int32(clamping: wanted))
            guard duplicate >= 0 else { return socket }
            candidate = Int(duplicate)
        }
        if candidate != Int(socket) { close(Int32(candidate)) }
        return socket
    }

    /// How long a poll of the listening socket waits before the stop flag is read again.
    private static let pollMilliseconds: Int32 = 250

    /// Whether a second has passed since `last` (or there was none), which then becomes now.
    private static func secondPassed(since last: inout timespec?) -> Bool {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        if let previous = last, now.tv_sec - previous.tv_sec < 1 { return false }
        last = now
        return true
    }
}
