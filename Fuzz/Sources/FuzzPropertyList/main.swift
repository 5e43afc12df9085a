import CLibFuzzer
import FuzzShareHarness

#if canImport(Glibc)
    import Glibc
#endif

// libFuzzer calls this with each input; a problem the harness reports stops the run like a crash, and libFuzzer
// saves the input as crash-<sha1> (scripts/fuzz.sh copies it to Fuzz/regressions/PropertyList/).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let problems = PropertyListHarness.check(Array(UnsafeBufferPointer(start: data, count: size)))
    if let first = problems.first { fatalError(first) }
    return 0
}

var argc = CommandLine.argc
var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
exit(LLVMFuzzerRunDriver(&argc, &argv, fuzzOne))
