import CLibFuzzer
import FuzzHarness

#if canImport(Glibc)
    import Glibc
#endif

// libFuzzer calls this with each input; a problem the harness reports stops the run like a crash, and libFuzzer
// saves the input as crash-<sha1> (scripts/fuzz.sh copies it to Fuzz/regressions/CommandLine/).
// One throwaway store template per fuzzing process; each input runs against a fresh copy of it.
nonisolated(unsafe) let harness: CommandLineHarness = {
    do { return try CommandLineHarness() } catch { fatalError("\(error)") }
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let problems = harness.check(UnsafeBufferPointer(start: data, count: size))
    if let first = problems.first { fatalError(first) }
    return 0
}

var argc = CommandLine.argc
var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
exit(LLVMFuzzerRunDriver(&argc, &argv, fuzzOne))
