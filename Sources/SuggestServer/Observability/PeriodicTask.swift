import Dispatch
import Synchronization
import SystemThread

/// Work run every `interval` on a thread of its own until stopped: the access log's flush, the keys file's watch,
/// the store's maintenance and checkpoints.
///
/// The interval is waited on the monotonic clock (`MonotonicSemaphore`): with Dispatch's timed wait, measured on
/// the wall clock, a clock set back a day while the server ran stopped its checkpoints, log and keys watch for a
/// day, readiness still 200.
final class PeriodicTask: Sendable {
    private let interval: Duration
    private let work: @Sendable () -> Void
    private let stopped = Atomic(false)
    private let wake = MonotonicSemaphore()
    private let finished = DispatchSemaphore(value: 0)
    private let label: String

    init(label: String, every interval: Duration, _ work: @escaping @Sendable () -> Void) {
        self.label = label
        self.interval = interval
        self.work = work
    }

    func start() {
        DispatchQueue(label: label).async { [self] in
            while !stopped.load(ordering: .acquiring) {
                work()
                _ = wake.wait(timeout: interval)
            }
            finished.signal()
        }
    }

    /// Stops the task and waits for the run under way, if any, to end.
    func stop() {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        wake.signal()
        finished.wait()
    }
}
