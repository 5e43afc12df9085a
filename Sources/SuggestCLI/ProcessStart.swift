import CSystem

/// What both executables (`suggest` and `suggest-serve`) settle before anything opens a file or a socket.
public enum ProcessStart {
    /// - A closed pipe (`suggest export | head`, a log reader that went away) ends a write with an error, not the
    ///   process with a signal.
    /// - A standard descriptor the process was started without is held by `/dev/null`, so that nothing this process
    ///   opens later lands on it: a store's file, a keys file, or a client's connection on descriptor 2 would
    ///   receive the error and access-log lines meant for standard error. Held so that it still acts closed:
    ///   standard input write-only (reading it fails, as `suggest import - <&-` must), standard output and error
    ///   read-only (writing them fails, as `suggest export >&-` must say).
    /// - A file-size limit (`ulimit -f`) ends a write with an error (`EFBIG`), not the process with a signal that
    ///   leaves a half-written file or a temporary one behind.
    /// - Under a tight limit on address space (`ulimit -v`), one heap for every thread (`addressSpaceIsLimited`);
    ///   otherwise `heapArenas`, if given, rather than glibc's eight a core. The environment (`MALLOC_ARENA_MAX` or
    ///   its tunable), when it sets the number, decides.
    public static func settle(heapArenas: Int32? = nil) {
        system_ignore_signal(SIGPIPE)
        system_ignore_signal(SIGXFSZ)
        if !environmentSetsMalloc("MALLOC_ARENA_MAX", tunable: "arena_max") {
            if addressSpaceIsLimited {
                system_limit_heap_arenas(1)
            } else if let heapArenas {
                system_limit_heap_arenas(heapArenas)
            }
        }
        for (descriptor, flags) in [(Int32(0), O_WRONLY), (1, O_RDONLY), (2, O_RDONLY)] {
            var status = stat()
            guard fstat(descriptor, &status) != 0 && system_errno() == EBADF else { continue }
            // open() takes the lowest free descriptor: this one, since those below it are open by now.
            _ = system_open("/dev/null", flags)
        }
    }

    /// Whether the process runs under a tight limit on its address space (`RLIMIT_AS`, `ulimit -v`, below 4 GiB).
    /// glibc's malloc reserves 64 MB of address space for each heap it gives a thread that contends for one (128 MB
    /// asked for first), up to eight a core: under a limit of 100 MB, an import's second thread would find none and the
    /// process die (SIGSEGV, no word), where one heap for all imports 20,000 donations within 60 MB. One heap
    /// costs an import about a sixth of its time (threads wait for it), so it is taken only under such a limit; a
    /// generous one (a unit's `LimitAS=16G`) leaves room for every heap.
    public static var addressSpaceIsLimited: Bool {
        let limit = system_byte_limit(Int32(RLIMIT_AS.rawValue))
        return limit >= 0 && limit < 4 << 30
    }

    /// Whether the environment sets one of glibc malloc's settings, by its variable or its tunable: then it, not
    /// this program, decides.
    public static func environmentSetsMalloc(_ variable: String, tunable: String) -> Bool {
        let tunables = getenv("GLIBC_TUNABLES").map { String(cString: $0) } ?? ""
        return getenv(variable) != nil || tunables.contains("glibc.malloc.\(tunable)")
    }

    /// For the server (`suggest serve` before it execs `suggest-serve`, which then holds the other signals its
    /// watcher takes: `ProcessSignals.holdUntilWatched`): blocks SIGHUP in the calling thread and in what it execs:
    /// SIGHUP asks the server to read its keys again, and until its watcher waits for it (once the store is open),
    /// one would end the process by its default action
    /// (a reload sent right after a start killed it, exit 129). Held, it waits for the watcher, which blocks it in
    /// every thread and takes it.
    public static func holdHangUps() {
        var hangUp = sigset_t()
        sigemptyset(&hangUp)
        sigaddset(&hangUp, SIGHUP)
        pthread_sigmask(SIG_BLOCK, &hangUp, nil)
    }
}
