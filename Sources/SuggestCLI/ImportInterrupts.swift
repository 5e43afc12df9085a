import CSystem
import Synchronization
import SuggestCore

/// What Ctrl-C (SIGINT) or SIGTERM does to `suggest import`, which is all or nothing. Before the import has written
/// anything (opening the store, waiting for the first line of a slow pipe), the process ends at once, saying that
/// nothing was imported. Once it writes, the signal is noted and the import stops at its next check (every 256
/// donations), its transaction rolled back; a signal that comes after the last check finds everything recorded, and
/// the report says so. A second signal while the import takes back what it recorded is only said (instant in the
/// embedded store, whose transaction is simply not committed; up to seconds on Redis, whose rounds the process undoes
/// itself, where a second Ctrl-C, pressed just then, left half an import), as it is while the import is about to
/// act on the first, and a third ends the process at once. A signal while the import waits for its input (a read
/// of it under way, `LineStream.readsUnderWay`) ends it at once.
enum ImportInterrupts {
    /// Set at the import's first donation: from then on a signal is noted, not acted on.
    static let writing = Atomic<Bool>(false)
    /// The signal received while writing, 0 for none.
    static let received = Atomic<Int32>(0)
    /// How many signals came while writing.
    static let count = Atomic<Int>(0)
    /// Set when the import acts on the signal (its check throws): from then on it is taking back what it recorded.
    static let unwinding = Atomic<Bool>(false)
    /// Whether standard error is a terminal, where a progress line may stand (`CommandIO.progress`): each message
    /// of the handler clears it first.
    private static let onTerminal = Atomic<Bool>(false)

    /// The actions the signals had before `watch()`, given back by `stopWatching()` (the handler never reads them).
    private static let previous = Mutex<[(Int32, (@convention(c) (Int32) -> Void)?)]>([])

    /// Starts watching SIGINT and SIGTERM, unless a signal is ignored (a shell's background job ignores SIGINT: a
    /// Ctrl-C meant for the script must not stop it).
    /// - Parameter standardErrorIsTerminal: the command's `CommandIO.standardErrorIsTerminal`.
    static func watch(standardErrorIsTerminal: Bool) {
        // Initialized here, not first in a signal handler (a global's lazy initialization takes a lock).
        writing.store(false, ordering: .relaxed)
        received.store(0, ordering: .relaxed)
        count.store(0, ordering: .relaxed)
        unwinding.store(false, ordering: .relaxed)
        onTerminal.store(standardErrorIsTerminal, ordering: .relaxed)
        _ = LineStream.readsUnderWay.load(ordering: .relaxed)
        let replaced = [SIGINT, SIGTERM].filter { system_signal_is_ignored($0) == 0 }.map { ($0, signal($0, handle)) }
        previous.withLock { $0 = replaced }
    }

    /// Gives the signals back the actions they had.
    static func stopWatching() {
        for (signalNumber, action) in previous.withLock({ $0 }) { signal(signalNumber, action) }
        previous.withLock { $0 = [] }
    }

    /// Called by the import at its checks: the first marks that writing has begun; then a signal noted stops it.
    static func check() throws(CommandError) {
        writing.store(true, ordering: .relaxed)
        let signalNumber = received.load(ordering: .relaxed)
        guard signalNumber == 0 else {
            unwinding.store(true, ordering: .relaxed)
            throw .interrupted(signal: signalNumber)
        }
    }

    /// Writes `message` on standard error, on a line of its own: a progress line there is cleared first.
    /// Async-signal-safe.
    private static func say(_ message: StaticString) {
        if onTerminal.load(ordering: .relaxed) {
            let clear = CommandIO.clearLine
            _ = write(2, clear.utf8Start, clear.utf8CodeUnitCount)
        }
        _ = write(2, message.utf8Start, message.utf8CodeUnitCount)
    }

    /// Only async-signal-safe work: atomics, `write`, `_exit`.
    private static let handle: @convention(c) (Int32) -> Void = { signalNumber in
        if !writing.load(ordering: .relaxed) {
            let message: StaticString = """
                suggest import: interrupted before anything was written; nothing was imported

                """
            say(message)
            _exit(128 + signalNumber)
        }
        _ = received.compareExchange(expected: 0, desired: signalNumber, ordering: .relaxed)
        let signals = count.add(1, ordering: .relaxed).newValue
        // Waiting for its input, it acts on nothing until a line comes: a single SIGTERM from a service manager
        // waited as long as a stalled pipe did. Nothing is committed while input is still being read (the embedded
        // store commits after the last line; a Redis import reads all of its input before it writes).
        if !unwinding.load(ordering: .relaxed) && LineStream.readsUnderWay.load(ordering: .relaxed) > 0 {
            let message: StaticString = """
                suggest import: interrupted while it waited for its input; stopped at once, nothing was imported

                """
            say(message)
            _exit(128 + signalNumber)
        }
        switch signals {
        case 1:
            return
        case 2:
            let message: StaticString = """
                suggest import: interrupted again; stopping cleanly first (interrupt once more to stop at once: in a \
                Redis store what it had recorded may then stay; importing the same file again records its lines with \
                identifiers once)

                """
            say(message)
        default:
            let message: StaticString = """
                suggest import: stopped at once; in a Redis store what it had recorded may have stayed ('suggest \
                export' shows it; importing the same file again records its lines with identifiers once)

                """
            say(message)
            _exit(128 + signalNumber)
        }
    }
}
