import CMicroHTTPD
import CSystem

/// Starts one of the server's own threads (the acceptor, the signal waiter), running `body` until it returns; the
/// caller joins or detaches the thread it gets.
/// - Parameter purpose: what the thread does, for the error: "accepts connections".
/// - Throws: `HTTPServerError` naming the purpose when the system cannot start the thread.
func startServerThread(_ purpose: String, _ body: @escaping @Sendable () -> Void) throws(HTTPServerError) -> pthread_t {
    final class Body {
        let run: @Sendable () -> Void
        init(_ run: @escaping @Sendable () -> Void) { self.run = run }
    }
    var thread = pthread_t()
    let context = Unmanaged.passRetained(Body(body)).toOpaque()
    let created = pthread_create(
        &thread, nil,
        { raw in
            guard let raw else { return nil }
            Unmanaged<Body>.fromOpaque(raw).takeRetainedValue().run()
            return nil
        }, context)
    guard created == 0 else {
        Unmanaged<Body>.fromOpaque(context).release()
        throw HTTPServerError("cannot start the thread that \(purpose): \(HTTPServerError.describe(created))")
    }
    return thread
}

/// Puts the calling thread to sleep for about `milliseconds` (under a second): for the server's own threads, which
/// poll a flag or a count.
func pause(milliseconds: Int) {
    var interval = timespec(tv_sec: 0, tv_nsec: milliseconds * 1_000_000)
    _ = nanosleep(&interval, nil)
}
