import CSystem

/// A counting semaphore whose timed wait is measured on the monotonic clock, which no change of the date moves.
///
/// `DispatchSemaphore.wait(timeout:)` on Linux hands `sem_timedwait` a deadline on the wall clock (libdispatch turns
/// its deadline into a date), and the kernel measures that deadline on the wall clock as it is stepped: a wait of a
/// second under way when NTP or an operator set the clock back a day lasted a day and a second. A server's periodic
/// work (its checkpoints, log, keys watch) waited so, and stopped for as long as the clock had gone back. A condition
/// variable bound to `CLOCK_MONOTONIC` waits as long as it was asked to, whatever happens to the date.
public final class MonotonicSemaphore: @unchecked Sendable {
    // Allocated, never moved: a pthread mutex or condition variable may not change its address once in use.
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    /// Signals not yet taken by a wait; read and written under `mutex`.
    private var count: Int

    /// A semaphore holding `value` signals.
    public init(value: Int = 0) {
        count = value
        pthread_mutex_init(mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    /// Adds a signal, waking one waiter if any waits.
    public func signal() {
        pthread_mutex_lock(mutex)
        count += 1
        pthread_cond_signal(condition)
        pthread_mutex_unlock(mutex)
    }

    /// Takes a signal, waiting for one as long as it takes.
    public func wait() {
        pthread_mutex_lock(mutex)
        while count == 0 { pthread_cond_wait(condition, mutex) }
        count -= 1
        pthread_mutex_unlock(mutex)
    }

    /// Takes a signal, waiting for one at most `timeout` as the monotonic clock counts it.
    /// - Returns: whether a signal was taken; `false` when the time ran out first.
    public func wait(timeout: Duration) -> Bool {
        var deadline = timespec()
        clock_gettime(CLOCK_MONOTONIC, &deadline)
        let (seconds, attoseconds) = max(timeout, .zero).components
        let nanoseconds = Int(deadline.tv_nsec) + Int(attoseconds / 1_000_000_000)
        deadline.tv_sec += Int(seconds) + nanoseconds / 1_000_000_000
        deadline.tv_nsec = nanoseconds % 1_000_000_000
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        while count == 0 {
            if pthread_cond_timedwait(condition, mutex, &deadline) == ETIMEDOUT { break }
        }
        guard count > 0 else { return false }
        count -= 1
        return true
    }
}
