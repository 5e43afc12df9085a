import CMicroHTTPD
import CSystem
import Dispatch
import Synchronization

/// Threads of the server's own that run the handlers of requests that may wait (`HTTPServer.Configuration
/// .handlerThreads`), while MHD's worker that read the request goes on with its other connections.
///
/// A handler that waits for something other requests also wait for (a commit they share) holds its worker: on two
/// workers, two such requests at a time, however many connections are sending them. Run here, each waits on a
/// thread of its own, and as many as there are threads wait together.
final class HandlerThreads: Sendable {
    private let jobs = Mutex(Jobs())
    /// Signalled once per job queued, and once per thread at the stop.
    private let queued = DispatchSemaphore(value: 0)
    private let threads = Mutex<[pthread_t]>([])

    private struct Jobs {
        var waiting: [@Sendable () -> Void] = []
        var stopping = false
    }

    /// Starts `count` threads, with `ProcessSignals.Signal.all` blocked as on MHD's workers.
    /// - Throws: `HTTPServerError` when the system cannot start a thread; those already started are stopped.
    init(count: Int) throws(HTTPServerError) {
        do {
            for _ in 0..<count {
                let thread = try ProcessSignals.withSignalsBlocked { () throws(HTTPServerError) in
                    try startServerThread("runs request handlers") { self.work() }
                }
                threads.withLock { $0.append(thread) }
            }
        } catch {
            stop()
            throw error
        }
    }

    /// Runs `job` on the first thread free; once the threads are stopping, on the caller's thread, so that no job
    /// is left without a thread (a request read on a kept-alive connection at the last moment of a stop).
    func run(_ job: @escaping @Sendable () -> Void) {
        let queuedJob = jobs.withLock { jobs in
            guard !jobs.stopping else { return false }
            jobs.waiting.append(job)
            return true
        }
        guard queuedJob else { return job() }
        queued.signal()
    }

    /// Lets every job queued so far run to its end, then ends the threads and waits for them.
    func stop() {
        let running = threads.withLock { threads in
            defer { threads = [] }
            return threads
        }
        jobs.withLock { $0.stopping = true }
        for _ in running { queued.signal() }
        for thread in running { pthread_join(thread, nil) }
    }

    private func work() {
        while true {
            queued.wait()
            let job = jobs.withLock { jobs -> (@Sendable () -> Void)? in
                jobs.waiting.isEmpty ? nil : jobs.waiting.removeFirst()
            }
            guard let job else { return }  // only the stop signals without a job
            job()
        }
    }
}
