import CSystem
import Dispatch
import SuggestCore
import SystemThread

/// Dispatch's thread pool, started while descriptors are free. A command that reads its input on another thread
/// starts the pool, whose event descriptors (an `epoll` and an `eventfd`) it cannot do without: where the process
/// could open no more files (`ulimit -n 7` with a store, a spool or sockets open), Dispatch stopped the process with
/// an illegal instruction and no word on standard error. Started first, it takes them before anything else, and a
/// later open that finds no descriptor fails as a store or a file does, with its one line.
///
/// Nor does the pool start where the system refuses threads (an address-space limit too small for a thread's
/// stack, `ulimit -v 30000`; a limit on processes): Dispatch retries a refused thread every second for as long as
/// the refusal lasts, and the command would wait for ever. A thread of the system's own is asked for first, and the
/// pool's first one is waited for a few seconds, not for ever.
enum DispatchPool {
    /// Starts Dispatch's pool now, unless not even its own descriptors are free or the system refuses threads.
    /// - Throws: `CommandError.failure` naming the limit.
    static func start() throws(CommandError) {
        let limit = system_raise_descriptor_limit(fewestDescriptors)
        if limit >= 0 && limit < fewestDescriptors {
            throw .failure(
                "cannot start: the limit on open files is \(limit) (ulimit -n), below the \(fewestDescriptors) this "
                    + "command needs; raise it")
        }
        try require(2)
        switch startSystemThread({}) {
        case .success(let thread):
            pthread_join(thread, nil)
        case .failure(let refused):
            throw threadsRefused(ErrorNumber.describe(refused.number))
        }
        // Waited on the monotonic clock, as every timed wait is: Dispatch's timed wait is measured on the date.
        let started = MonotonicSemaphore()
        DispatchQueue.global().async { started.signal() }
        guard started.wait(timeout: .seconds(firstThreadSeconds)) else {
            throw threadsRefused("Dispatch started no thread within \(firstThreadSeconds) s")
        }
    }

    /// The fewest descriptors a command that starts the pool runs under, the soft limit raised towards the hard one
    /// first. The pool keeps four of its own: an `epoll`, an `eventfd`, a timer, and, opened every second while a
    /// worker runs, `/proc/PID/stat`, which its monitor of blocked workers reads and stops the process without a
    /// word when it cannot open. With the command's own files (a store's five, the input, the standard three) at
    /// the limit, one `eval` in sixty at `ulimit -n 6` was killed so, and the check above cannot see ahead to it.
    static let fewestDescriptors = 32

    /// How long the pool's first thread is waited for: far longer than a loaded machine takes to start one.
    static let firstThreadSeconds = 10

    private static func threadsRefused(_ why: String) -> CommandError {
        .failure(
            "cannot start: the system refuses new threads (\(why)); raise the limit on address space (ulimit -v) "
                + "or on processes (ulimit -u)")
    }

    /// Throws when the process cannot open `count` more descriptors now.
    private static func require(_ count: Int) throws(CommandError) {
        var opened: [Int32] = []
        defer { for descriptor in opened { close(descriptor) } }
        for _ in 0..<count {
            let descriptor = system_open("/dev/null", O_RDONLY | O_CLOEXEC)
            guard descriptor >= 0 else {
                let number = system_errno()
                // Only the limit is this check's business; a system without /dev/null fails where it fails.
                guard number == EMFILE || number == ENFILE else { return }
                let advice = number == EMFILE ? "raise the limit (ulimit -n) or close some" : "retry in a moment"
                throw CommandError.failure(
                    "cannot start: too many files are open (\(ErrorNumber.describe(number))); \(advice)")
            }
            opened.append(descriptor)
        }
    }
}
