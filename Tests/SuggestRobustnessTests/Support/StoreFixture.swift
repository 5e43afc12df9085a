import SuggestTestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// A store directory of its own for one test, with a scratch directory beside it (never inside: the privacy
/// tests read every file of the store).
final class StoreFixture {
    let root: TemporaryDirectory
    let store: String
    let scratch: String

    /// - Parameter existing: a store directory elsewhere to work on (the soak test's), instead of a new one.
    init(_ label: String = "store", existing: String? = nil) throws(HarnessError) {
        root = try TemporaryDirectory(label)
        store = existing ?? root("store")
        scratch = root("scratch")
        guard mkdir(scratch, 0o755) == 0 else { throw HarnessError("cannot create \(scratch)") }
    }

    /// Runs `suggest ARGUMENTS --store STORE`.
    @discardableResult
    func run(
        _ arguments: [String], input: [UInt8]? = nil, environment: [String: String] = [:], timeout: Double = 60
    ) throws(HarnessError) -> ProcessOutcome {
        try Suggest.run(
            arguments + ["--store", store], input: input, scratch: scratch, environment: environment, timeout: timeout)
    }

    /// Runs a command that must succeed, and returns its standard output.
    @discardableResult
    func succeed(_ arguments: [String], input: [UInt8]? = nil) throws(HarnessError) -> String {
        let outcome = try run(arguments, input: input)
        guard outcome.status == 0 else { throw HarnessError("suggest \(arguments.joined(separator: " ")): \(outcome)") }
        return outcome.output
    }

    /// Starts `suggest ARGUMENTS --store STORE` without waiting.
    func start(_ arguments: [String], input: [UInt8]? = nil) throws(HarnessError) -> ChildProcess {
        try Suggest.start(arguments + ["--store", store], input: input, scratch: scratch)
    }

    /// Imports JSON Lines through the binary.
    func importLines(_ lines: [String], extra: [String] = []) throws(HarnessError) {
        try succeed(["import", "-", "--quiet"] + extra, input: Array((lines.joined(separator: "\n") + "\n").utf8))
    }

    /// Keeps every donation and suggests every conversation, whatever the date: tests choose their own dates.
    func keepEverything() throws(HarnessError) {
        try succeed(["config", "--max-age-days", "0", "--idle-days", "0"])
    }
}
