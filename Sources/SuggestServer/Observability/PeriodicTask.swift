import Dispatch
import Synchronization

/// Work run every `interval` on a thread of its own until stopped: the access log's flush, the keys file's watch,
/// the store's maintenance.
final class PeriodicTask: Sendable {
    private let interval: Duration
    private let work: @Sendable () -> Void
    private let stopped = Atomic(false)
    private let wake = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)
    private let label: String

    init(label: String, every interval: Duration, _ work: @escaping @Sendable () -> Void) {
        self.label = label
        self.interval = interval
        self.work = work
    }

    func start() {
        DispatchQueue(label: label).async { [self] in
            let nanoseconds = Int(interval.components.seconds) * 1_000_000_000
                + Int(interval.components.attoseconds / 1_000_000_000)
            while !stopped.load(ordering: .acquiring) {
                work()
                _ = wake.wait(timeout: .now() + .nanoseconds(nanoseconds))
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
