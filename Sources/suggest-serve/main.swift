import CSystem
import HTTPServer
import SuggestCLI

// The server's executable: the whole command line, with `serve` run in this process (`suggest serve` replaces
// itself with this program). It gathers the process's surroundings as `suggest` does and hands them over.
// Before any thread starts (the access log's, the store's): every thread inherits the signals held for the watcher.
ProcessSignals.holdUntilWatched()
// Two heaps for the server's threads, not glibc's eight per core: JSON Lines bodies of 1,000 donations, parsed on
// 4 of the 32 handler threads, left 190 MB resident on the 1M store where two heaps keep it under 95 MB, with the
// same rates (Benchmarks/README.md, "The server's memory under donations and floods").
ProcessStart.settle(heapArenas: 2)
let io = CommandIO(
    standardOutput: FileDescriptorOutput(descriptor: 1),
    standardError: FileDescriptorOutput(descriptor: 2, autoFlush: true),
    standardInput: ByteSource(descriptor: 0), environment: ServeOptions.environment(), serve: ServeOptions.serve,
    standardErrorIsTerminal: isatty(2) == 1)

// Large blocks (bodies, a transaction's working state, the ranking mirror's lists) mapped from 128 KiB on, whatever
// was freed before, so that they leave nothing resident when freed: a JSON Lines body of 2,000 donations is about
// 600 KB, and from the heaps, 24 such bodies in flight took the server about 9 MB higher at the peak than mapped
// (Benchmarks/README.md, "Request bodies mapped, not kept in the heaps"). The environment (MALLOC_MMAP_THRESHOLD_,
// MALLOC_TRIM_THRESHOLD_ or the glibc.malloc tunables), when it sets one, decides.
if !ProcessStart.environmentSetsMalloc("MALLOC_MMAP_THRESHOLD_", tunable: "mmap_threshold")
    && !ProcessStart.environmentSetsMalloc("MALLOC_TRIM_THRESHOLD_", tunable: "trim_threshold")
{
    system_fix_heap_thresholds(128 << 10, 1 << 20)
}

// Descriptors for every connection the server may hold (`--max-connections`, 1,024 by default) and its store's
// files, within what the administrator allows: the soft limit a shell or a unit gives (often 1,024) is raised to
// the hard limit, up to 65,536.
_ = system_raise_descriptor_limit(65_536)

exit(SuggestCommandLine.run(Array(CommandLine.arguments.dropFirst()), io: io))
