import CMicroHTTPD
import CSystem
import SystemThread

/// Starts one of the server's own threads (the acceptor, the signal waiter), running `body` until it returns; the
/// caller joins or detaches the thread it gets.
/// - Parameter purpose: what the thread does, for the error: "accepts connections".
/// - Throws: `HTTPServerError` naming the purpose when the system cannot start the thread.
func startServerThread(_ purpose: String, _ body: @escaping @Sendable () -> Void) throws(HTTPServerError) -> pthread_t {
    switch startSystemThread(body) {
    case .success(let thread): return thread
    case .failure(let refused):
        throw HTTPServerError("cannot start the thread that \(purpose): \(HTTPServerError.describe(refused.number))")
    }
}

/// Puts the calling thread to sleep for about `milliseconds` (under a second): for the server's own threads, which
/// poll a flag or a count.
func pause(milliseconds: Int) {
    var interval = timespec(tv_sec: 0, tv_nsec: milliseconds * 1_000_000)
    _ = nanosleep(&interval, nil)
}
