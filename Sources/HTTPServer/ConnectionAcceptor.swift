import CMicroHTTPD
import CSystem
import Synchronization

/// Accepts connections on the listening socket, on a thread of its own, and hands each to MHD's workers
/// (`MHD_add_connection`), which take turns by socket number.
///
/// MHD's own accepting gives a worker that wakes first up to ten connections in a row: a client that opens its
/// connections at once (a load balancer, a benchmark) got them all on one thread, and the other workers sat idle.
/// Accepting here spreads them, and keeps the connection limit exact over all workers: at the limit nothing is
/// accepted, and clients wait in the listen backlog until a connection closes.
final class ConnectionAcceptor: Sendable {
    private let listener: Int32
    private let daemon: Daemon
    private let core: ServerCore
    private let connectionLimit: Int
    private let stopping = Atomic<Bool>(false)
    private let thread: Mutex<pthread_t?>

    /// MHD's daemon, which is safe to hand connections to from any thread (it was started with `MHD_USE_ITC`).
    private struct Daemon: @unchecked Sendable { let pointer: OpaquePointer }

    /// Starts accepting on `listener` (non-blocking) for `daemon`.
    /// - Throws: `HTTPServerError` when the thread cannot start.
    init(listener: Int32, daemon: OpaquePointer, core: ServerCore, connectionLimit: Int) throws(HTTPServerError) {
        self.listener = listener
        self.daemon = Daemon(pointer: daemon)
        self.core = core
        self.connectionLimit = connectionLimit
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
            if core.openConnections.load(ordering: .acquiring) >= connectionLimit {
                pause(milliseconds: 5)
                continue
            }
            var ready = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
            let polled = poll(&ready, 1, ConnectionAcceptor.pollMilliseconds)
            if polled <= 0 { continue }  // the interval passed (the stop flag is read again) or a signal came
            var address = sockaddr_storage()
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let client = withUnsafeMutablePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    suggest_accept(listener, $0, &length)
                }
            }
            guard client >= 0 else {
                let code = system_errno()
                switch code {
                case EAGAIN, EWOULDBLOCK, EINTR, ECONNABORTED, EPROTO:
                    continue  // another connection's trouble, or none was waiting after all
                case EINVAL, EBADF, ENOTSOCK:
                    return  // the socket was shut down: the server is stopping
                default:
                    // Out of descriptors or memory: the connection stays in the backlog; say so now and then.
                    if ConnectionAcceptor.secondPassed(since: &lastComplaint) {
                        core.log("cannot accept a connection: \(String(cString: strerror(code))); retrying")
                    }
                    pause(milliseconds: 50)
                    continue
                }
            }
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

    /// How long a poll of the listening socket waits before the stop flag is read again.
    private static let pollMilliseconds: Int32 = 250

    private func pause(milliseconds: Int) {
        var interval = timespec(tv_sec: 0, tv_nsec: milliseconds * 1_000_000)
        _ = nanosleep(&interval, nil)
    }

    /// Whether a second has passed since `last` (or there was none), which then becomes now.
    private static func secondPassed(since last: inout timespec?) -> Bool {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        if let previous = last, now.tv_sec - previous.tv_sec < 1 { return false }
        last = now
        return true
    }
}
