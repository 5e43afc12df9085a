import Dispatch
import SystemThread
import Testing

/// The semaphore the server's periodic work and the Redis client's connection wait use, since Dispatch's timed wait
/// is measured on the wall clock (a clock set back a day stopped a server's checkpoints for a day). That the wait
/// follows the monotonic clock cannot be shown here without stepping the machine's clock; these show it keeps a
/// semaphore's promises, and that its deadline and its clock agree (a deadline on one clock waited for on the other
/// returns at once, or decades later).
@Suite struct MonotonicSemaphoreTests {
    @Test func aWaitWithNoSignalLastsItsTimeout() {
        let semaphore = MonotonicSemaphore()
        let started = ContinuousClock.now
        #expect(!semaphore.wait(timeout: .milliseconds(200)))
        let waited = ContinuousClock.now - started
        #expect(waited >= .milliseconds(200) && waited < .seconds(5), "\(waited)")
    }

    @Test func signalsGivenBeforeAreTakenAtOnceAndCounted() {
        let semaphore = MonotonicSemaphore(value: 2)
        semaphore.signal()
        let started = ContinuousClock.now
        for _ in 0..<3 { #expect(semaphore.wait(timeout: .seconds(10))) }
        #expect(ContinuousClock.now - started < .seconds(5))
        #expect(!semaphore.wait(timeout: .zero))
    }

    @Test func aSignalFromAnotherThreadEndsTheWait() {
        let semaphore = MonotonicSemaphore()
        let done = MonotonicSemaphore()
        DispatchQueue.global().async {
            semaphore.wait()
            done.signal()
        }
        semaphore.signal()
        #expect(done.wait(timeout: .seconds(10)), "the untimed wait was not woken")
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(50)) { semaphore.signal() }
        let started = ContinuousClock.now
        #expect(semaphore.wait(timeout: .seconds(30)))
        #expect(ContinuousClock.now - started < .seconds(10))
    }
}
