import CMicroHTTPD
import CSystem
import Synchronization

/// Waits for the signals that would end a server or ask it something (SIGTERM, SIGINT, SIGHUP and the others whose
/// default action ends a process) on a thread of its own, and calls a handler for each, in order.
///
/// A signal handler may only do what is async-signal-safe; a thread that waits with `sigwait` may do anything,
/// such as stop a server gracefully or reload a file. For that the signals must be blocked in every thread, or the
/// kernel delivers them to one that does not block them: make the watcher first thing in `main`, before any
/// thread starts, and every later thread inherits the blocked set. (`HTTPServer` also starts its workers with them
/// blocked.) The signals stay blocked after `stop()`.
///
/// ```swift
/// let signals = try ProcessSignals { signal in
///     if signal == .hangUp {
///         reloadKeys()
///     } else if signal.asksToStop {
///         server.stop(gracePeriod: .seconds(10))
///         finished.signal()
///     }
/// }
/// ```
public final class ProcessSignals: Sendable {
    /// A signal the watcher can wait for.
    public struct Signal: Hashable, Sendable, CustomStringConvertible {
        /// The signal's number.
        public let number: Int32

        private init(_ number: Int32) { self.number = number }

        /// SIGTERM: the service manager asks the process to stop.
        public static let terminate = Signal(SIGTERM)
        /// SIGINT: Ctrl-C.
        public static let interrupt = Signal(SIGINT)
        /// SIGHUP: by convention, reload the configuration.
        public static let hangUp = Signal(SIGHUP)
        /// SIGQUIT: a stop as graceful as SIGTERM's (nginx's convention), rather than the default core dump.
        public static let quit = Signal(SIGQUIT)
        #if os(Linux)
            /// SIGPWR: the power is failing (an uninterruptible power supply's daemon sends it).
            public static let powerFailure = Signal(SIGPWR)
        #endif
        /// SIGXCPU: the process passed its soft limit of CPU time; the kernel ends it at the hard one.
        public static let cpuTimeLimit = Signal(SIGXCPU)

        /// SIGTERM, SIGINT, SIGHUP, then the others whose default action ends the process without a word: a
        /// stray `kill -USR1` (which other servers use to reopen logs) or a timer's signal would end a server that
        /// left them alone, with no drain and no log line.
        public static let all: [Signal] =
            [.terminate, .interrupt, .hangUp, .quit, .cpuTimeLimit] + linuxOnly
            + [SIGUSR1, SIGUSR2, SIGALRM, SIGVTALRM, SIGPROF, SIGIO].map(Signal.init)

        #if os(Linux)
            private static let linuxOnly = [powerFailure, Signal(SIGSTKFLT)]
        #else
            private static let linuxOnly: [Signal] = []
        #endif

        /// Whether the signal asks the process to stop: SIGTERM, SIGINT, SIGQUIT, SIGPWR and SIGXCPU. SIGHUP asks
        /// for a reload; the others ask nothing of a server.
        public var asksToStop: Bool {
            #if os(Linux)
                if number == SIGPWR { return true }
            #endif
            return [SIGTERM, SIGINT, SIGQUIT, SIGXCPU].contains(number)
        }

        public var description: String {
            var names: [Int32: String] = [
                SIGTERM: "SIGTERM", SIGINT: "SIGINT", SIGHUP: "SIGHUP", SIGQUIT: "SIGQUIT", SIGXCPU: "SIGXCPU",
                SIGUSR1: "SIGUSR1", SIGUSR2: "SIGUSR2", SIGALRM: "SIGALRM", SIGVTALRM: "SIGVTALRM", SIGPROF: "SIGPROF",
                SIGIO: "SIGIO",
            ]
            #if os(Linux)
                names[SIGPWR] = "SIGPWR"
                names[SIGSTKFLT] = "SIGSTKFLT"
            #endif
            return names[number] ?? "signal \(number)"
        }
    }

    private let waiter: Waiter
    private let thread: Mutex<pthread_t?>

    /// What the waiting thread holds: the set it waits for, the handler, and whether to stop.
    private final class Waiter: Sendable {
        let signals: [Signal]
        let handler: @Sendable (Signal) -> Void
        let stopping = Atomic<Bool>(false)

        init(signals: [Signal], handler: @escaping @Sendable (Signal) -> Void) {
            self.signals = signals
            self.handler = handler
        }

        var set: sigset_t {
            var set = sigset_t()
            sigemptyset(&set)
            for signal in signals { sigaddset(&set, signal.number) }
            return set
        }

        func run() {
            var waited = set
            while true {
                var number: Int32 = 0
                let result = pendingStop().map { number = $0; return 0 } ?? sigwait(&waited, &number)
                if stopping.load(ordering: .acquiring) { return }
                guard result == 0, let signal = signals.first(where: { $0.number == number }) else { continue }
                handler(signal)
            }
        }

        /// A signal asking to stop that is pending now, taken first: `sigwait` hands out the lowest-numbered
        /// pending signal, and SIGHUPs (1) sent faster than a reload of a large keys file takes kept SIGTERM (15)
        /// waiting as long as they came.
        private func pendingStop() -> Int32? {
            var stops = sigset_t()
            sigemptyset(&stops)
            for signal in signals where signal.asksToStop { sigaddset(&stops, signal.number) }
            var now = timespec(tv_sec: 0, tv_nsec: 0)
            let number = sigtimedwait(&stops, nil, &now)
            return number > 0 ? number : nil
        }
    }

    /// Blocks `signals` in the calling thread (and so in every thread it starts from now on) and starts the thread
    /// that waits for them.
    /// - Parameters:
    ///   - signals: the signals to wait for; `Signal.all` unless given.
    ///   - handler: called on the waiting thread for each signal, one at a time; it may block (a graceful stop),
    ///     and signals that arrive meanwhile wait (one of each kind is kept).
    /// - Throws: `HTTPServerError` when no signal is given or the thread cannot start.
    public init(_ signals: [Signal] = Signal.all, handler: @escaping @Sendable (Signal) -> Void) throws(HTTPServerError)
    {
        guard let first = signals.first else {
            throw HTTPServerError("no signal to wait for; give at least one, such as SIGTERM")
        }
        _ = first
        let waiter = Waiter(signals: signals, handler: handler)
        var set = waiter.set
        let blocked = pthread_sigmask(SIG_BLOCK, &set, nil)
        guard blocked == 0 else {
            throw HTTPServerError("cannot block signals: \(HTTPServerError.describe(blocked))")
        }
        let thread = try startServerThread("waits for signals") { waiter.run() }
        self.waiter = waiter
        self.thread = Mutex(thread)
    }

    deinit { stop() }

    /// Ends the waiting thread and waits for it (unless called from the handler itself, which returns first).
    /// Signals stay blocked: one that arrives from now on stays pending.
    public func stop() {
        guard let thread = self.thread.withLock({ $0.take() }) else { return }
        waiter.stopping.store(true, ordering: .releasing)
        // Wakes the waiting thread: a signal sent to that thread alone, which it takes from sigwait and, seeing
        // the flag, returns.
        _ = pthread_kill(thread, waiter.signals[0].number)
        if pthread_equal(thread, pthread_self()) != 0 {
            pthread_detach(thread)
        } else {
            pthread_join(thread, nil)
        }
    }

    /// Blocks, in the calling thread and so in every thread it starts, the signals of `Signal.all` that do not ask
    /// the process to stop (SIGHUP, SIGUSR1, timers' signals): until a watcher waits for them, they wait, where
    /// their default action would end the process. Call it first thing in `main`, before any thread starts: a
    /// thread started earlier (a dispatch queue's, which leaves SIGPROF open) takes them and ends the process
    /// even once the watcher runs. The signals that ask for a stop keep their default action until then: a
    /// process stopped while it starts has nothing to drain.
    public static func holdUntilWatched() {
        var set = sigset_t()
        sigemptyset(&set)
        for signal in Signal.all where !signal.asksToStop { sigaddset(&set, signal.number) }
        pthread_sigmask(SIG_BLOCK, &set, nil)
    }

    /// Runs `body` with `Signal.all` blocked in the calling thread, so that threads it starts begin with them
    /// blocked; the calling thread's mask is restored afterwards.
    /// - Parameter body: the work, typically starting threads.
    /// - Returns: what `body` returns.
    public static func withSignalsBlocked<Result, Failure: Error>(_ body: () throws(Failure) -> Result) throws(Failure)
        -> Result
    {
        var set = sigset_t()
        sigemptyset(&set)
        for signal in Signal.all { sigaddset(&set, signal.number) }
        var previous = sigset_t()
        pthread_sigmask(SIG_BLOCK, &set, &previous)
        defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
        return try body()
    }
}
