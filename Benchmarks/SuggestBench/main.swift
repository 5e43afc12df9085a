#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

// suggest-bench: synthetic histories and benchmarks of the ranker, the store and whole processes.
// The work lives in one type per subcommand; this file only dispatches.
signal(SIGPIPE, SIG_IGN)
exit(BenchCommandLine.run(Array(CommandLine.arguments.dropFirst())))
