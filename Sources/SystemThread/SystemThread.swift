import CSystem

/// Why the system refused a thread: the error number `pthread_create` gave (`EAGAIN` under a limit on processes).
public struct ThreadRefused: Error, Sendable {
    public let number: Int32
}

/// Starts a thread of the system's own, running `body` until it returns; the caller joins or detaches it.
///
/// For the work that must not wait on libdispatch: a queue asks the system for a thread when work comes, and one
/// refused (a container's limit on processes) is retried inside `async`, on the caller's thread, for as long as the
/// refusal lasts.
public func startSystemThread(_ body: @escaping @Sendable () -> Void) -> Result<pthread_t, ThreadRefused> {
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
        return .failure(ThreadRefused(number: created))
    }
    return .success(thread)
}
