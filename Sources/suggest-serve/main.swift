import CSystem
import SuggestCLI

// The server's executable: the whole command line, with `serve` run in this process (`suggest serve` replaces
// itself with this program). It gathers the process's surroundings as `suggest` does and hands them over.
let io = CommandIO(
    standardOutput: FileDescriptorOutput(descriptor: 1),
    standardError: FileDescriptorOutput(descriptor: 2, autoFlush: true),
    standardInput: ByteSource(descriptor: 0), environment: ServeOptions.environment(), serve: ServeOptions.serve)

// Two heaps for the server's threads, not glibc's eight per core: JSON Lines bodies of 1,000 donations, parsed on
// 4 of the 32 handler threads, left 190 MB resident on the 1M store where two heaps keep it under 95 MB, with the
// same rates (Benchmarks/README.md, "The server's memory under donations and floods"). MALLOC_ARENA_MAX or the
// glibc.malloc.arena_max tunable, when set, decides.
if getenv("MALLOC_ARENA_MAX") == nil
    && !(getenv("GLIBC_TUNABLES").map { String(cString: $0).contains("glibc.malloc.arena_max") } ?? false)
{
    system_limit_heap_arenas(2)
}

exit(SuggestCommandLine.run(Array(CommandLine.arguments.dropFirst()), io: io))
