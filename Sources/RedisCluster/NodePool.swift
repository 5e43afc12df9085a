import Synchronization
import SystemThread

/// The connections to one node: at most `limit` open at once, idle ones kept for the next caller.
///
/// A caller takes a permit (waiting, at most the command timeout, when all are out), then an idle connection or a
/// new one; giving the connection back returns the permit. A broken or stale connection is closed instead of kept.
final class NodePool: Sendable {
    let endpoint: RedisEndpoint
    private let idle = Mutex<[RedisConnection]>([])
    /// Waited on the monotonic clock: Dispatch's timed wait is measured on the wall clock, and a date set back
    /// while a caller waited for a connection stretched the command timeout by as much.
    private let permits: MonotonicSemaphore
    /// When a connection to this node last failed (monotonic seconds, 0 for never): a topology refresh asks
    /// nodes that failed recently last.
    private let lastFailure = Mutex<Double>(0)

    init(endpoint: RedisEndpoint, limit: Int) {
        self.endpoint = endpoint
        permits = MonotonicSemaphore(value: limit)
    }

    /// A connection for one caller's exclusive use; give it back with ``release(_:)``.
    /// - Throws: ``RedisError/timeout(_:seconds:waitingFor:)`` when no connection comes free in time, or the
    ///   error of opening a new one (``RedisError/unreachable(_:reason:)``,
    ///   ``RedisError/authenticationFailed(_:reason:)``).
    func acquire(configuration: RedisClusterConfiguration) throws(RedisError) -> RedisConnection {
        if !permits.wait(timeout: configuration.commandTimeout) {
            throw .timeout(
                endpoint, seconds: configuration.commandTimeout.seconds,
                waitingFor: "free connection (all \(configuration.connectionsPerNode) in use; raise connectionsPerNode)"
            )
        }
        while let connection = idle.withLock({ $0.popLast() }) {
            if !connection.isStale { return connection }
        }
        do {
            return try RedisConnection(to: endpoint, configuration: configuration)
        } catch {
            permits.signal()
            if case .unreachable = error { noteFailure() }
            throw error
        }
    }

    /// Takes a connection back: kept when healthy, closed when broken.
    func release(_ connection: RedisConnection) {
        if !connection.isBroken {
            idle.withLock { $0.append(connection) }
        } else {
            noteFailure()
        }
        permits.signal()
    }

    /// Closes every idle connection: after one failed, the others to the same server are likely dead too.
    func closeIdle() {
        // Taken out under the lock, closed (by going away) after it: closing a socket is a system call.
        var closing: [RedisConnection] = []
        idle.withLock { swap(&closing, &$0) }
        closing.removeAll()
    }

    /// Records that a connection to this node failed now.
    func noteFailure() {
        let now = monotonicSeconds()
        lastFailure.withLock { $0 = now }
        closeIdle()
    }

    /// Whether a connection to this node failed within the last `seconds`.
    func failedRecently(within seconds: Double) -> Bool {
        let failure = lastFailure.withLock { $0 }
        return failure > 0 && monotonicSeconds() - failure < seconds
    }
}

