import CSystem

/// The monotonic clock, in seconds: deadlines for retries and the age of a failure.
func monotonicSeconds() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
}

/// Sleeps the calling thread (a retry's back-off); resumes after a signal for the time left.
func sleep(seconds: Double) {
    guard seconds > 0 else { return }
    let whole = Int(seconds)
    var request = timespec(tv_sec: whole, tv_nsec: Int((seconds - Double(whole)) * 1e9))
    var remaining = timespec()
    while nanosleep(&request, &remaining) != 0 && system_errno() == EINTR { request = remaining }
}
