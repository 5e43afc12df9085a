import CSystem
import SuggestCore
import SuggestSQLiteStore

/// Where a command writes: standard output for results, standard error for errors and progress.
///
/// The process uses file descriptors directly (no Foundation: start-up time); tests use `CapturedOutput`.
public protocol OutputSink: AnyObject {
    /// Appends `text`; a buffering sink may write it later.
    /// - Throws: `OutputError` when bytes cannot be written, now or at an earlier write: a sink that failed once
    ///   writes nothing more.
    func write(_ text: String) throws(OutputError)
    /// Writes out everything buffered.
    /// - Throws: `OutputError` as `write(_:)`.
    func flush() throws(OutputError)
}

/// A write to standard output (or another stream) that failed: the stream's name and the system's error number.
public struct OutputError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What messages call the stream: `standard output`.
    public var name: String
    /// The `errno` of the failed `write`.
    public var code: Int32

    /// - Parameters:
    ///   - name: what messages call the stream.
    ///   - code: the `errno` of the failed `write`.
    public init(name: String, code: Int32) {
        self.name = name
        self.code = code
    }

    /// Whether the reader went away (`suggest export | head -1`): the command stops, and says nothing, since
    /// whoever closed the pipe asked for no more.
    public var isBrokenPipe: Bool { code == EPIPE }

    /// `cannot write standard output: No space left on device`.
    public var description: String {
        "cannot write \(name): " + ErrorNumber.describe(code)
    }
}

/// A buffered writer on a file descriptor.
///
/// The first failed `write(2)` is kept: every later `write` and `flush` throws it and writes nothing, so a command
/// stops at the next line it writes (an export into a full disk or a closed pipe ends at once, not at its end).
public final class FileDescriptorOutput: OutputSink {
    private let descriptor: Int32
    private let name: String
    private var buffer: [UInt8] = []
    private let autoFlush: Bool
    private var failure: OutputError?

    /// - Parameters:
    ///   - descriptor: an open descriptor; it is not closed here.
    ///   - name: what an error calls it (default: `standard output` for 1, `standard error` for 2).
    ///   - autoFlush: write at every `write` instead of once 64 KiB are gathered (standard error).
    public init(descriptor: Int32, name: String? = nil, autoFlush: Bool = false) {
        self.descriptor = descriptor
        self.name = name ?? (descriptor == 1 ? "standard output" : descriptor == 2 ? "standard error" : "output")
        self.autoFlush = autoFlush
        buffer.reserveCapacity(1 << 16)
    }

    deinit { try? flush() }

    /// Appends `text` to the buffer, and writes the buffer out once it holds 64 KiB (at once with `autoFlush`).
    /// - Throws: `OutputError` for this write's failure or an earlier one.
    public func write(_ text: String) throws(OutputError) {
        if let failure { throw failure }
        buffer.append(contentsOf: text.utf8)
        if autoFlush || buffer.count >= 1 << 16 { try flush() }
    }

    /// Writes out the buffer, retrying after interruptions and short writes.
    /// - Throws: `OutputError` for the first `write(2)` that fails, or an earlier failure.
    public func flush() throws(OutputError) {
        if let failure { throw failure }
        let code = FileDescriptorWriting.writeAll(descriptor, buffer)
        guard code == 0 else {
            buffer.removeAll()
            let error = OutputError(name: name, code: code)
            failure = error
            throw error
        }
        buffer.removeAll(keepingCapacity: true)
    }
}

/// Output kept in memory: a test, or a program that runs a command line in process, reads what it wrote.
public final class CapturedOutput: OutputSink {
    /// Everything written so far.
    public private(set) var text = ""
    /// An empty output.
    public init() {}
    /// Appends `text`; never fails.
    public func write(_ text: String) { self.text += text }
    /// Does nothing: nothing is buffered.
    public func flush() {}
}

/// Everything a command may touch outside itself: a process hands over its streams and variables, a test its own.
public struct CommandIO {
    /// Where results go.
    public var standardOutput: OutputSink
    /// Where errors and progress go, one line each.
    public var standardError: OutputSink
    /// Standard input, read whole or line by line.
    public var standardInput: ByteSource
    /// The variables of `CommandIO.environmentVariables`, the only ones any command reads.
    public var environment: [String: String]
    /// The working directory for relative paths (for example `SampleData/`).
    public var currentDirectory: String
    /// What runs `suggest serve` in this process: set by the server's executable (`suggest-serve`), which links the
    /// HTTP server; without it, `serve` runs that executable from beside this one.
    public var serve: (@Sendable (ParsedArguments, CommandIO) throws -> Int32)?
    /// Whether standard error is a terminal, where progress is shown (`progress(_:)`).
    public var standardErrorIsTerminal: Bool
    /// The variables of `environment` whose bytes were not UTF-8, with the bytes as an error shows them: a command
    /// that would find its store through one refuses to run (exit 64) rather than use the repaired path.
    var unreadableVariables: [String: String] = [:]

    /// - Parameters:
    ///   - standardOutput: where results go.
    ///   - standardError: where errors and progress go.
    ///   - standardInput: what `-` and `--json` read.
    ///   - environment: the variables of `environmentVariables` that are set.
    ///   - currentDirectory: what relative paths are relative to.
    ///   - serve: what runs `suggest serve` in this process; `nil` to run the server's executable.
    ///   - standardErrorIsTerminal: whether progress is shown (a process's `isatty(2)`).
    public init(
        standardOutput: OutputSink, standardError: OutputSink, standardInput: ByteSource,
        environment: [String: String], currentDirectory: String = ".",
        serve: (@Sendable (ParsedArguments, CommandIO) throws -> Int32)? = nil, standardErrorIsTerminal: Bool = false
    ) {
        self.standardErrorIsTerminal = standardErrorIsTerminal
        self.standardOutput = standardOutput
        self.standardError = standardError
        self.standardInput = standardInput
        self.environment = environment
        self.currentDirectory = currentDirectory
        self.serve = serve
    }

    /// The environment variables commands read (where the store is, and where `demo` makes its temporary store):
    /// all a process needs to gather.
    public static var environmentVariables: [String] { StoreLocation.environmentVariables + ["TMPDIR"] }

    /// Writes a result.
    /// - Throws: `OutputError` when standard output refuses it (a full disk, a closed pipe): the command stops.
    func out(_ text: String) throws(OutputError) { try standardOutput.write(text) }

    /// Writes a message or progress as one line, its control characters escaped (`TerminalText.line`). A standard
    /// error that cannot be written has nowhere left to complain.
    func err(_ text: String) { try? standardError.write(TerminalText.line(text)) }

    /// Shows `text` as the progress line, over the one before, when standard error is a terminal; elsewhere (a
    /// log, a pipe, a CI job) nothing, as git and curl do: a line every 100,000 donations filled logs, and made
    /// "errors are one line on standard error" ambiguous.
    func progress(_ text: String) {
        guard standardErrorIsTerminal else { return }
        try? standardError.write("\r" + TerminalText.escaped(text) + "\u{1B}[K")
    }

    /// Clears the progress line, if one was shown, so that what comes next starts on a clean line.
    func endProgress() {
        guard standardErrorIsTerminal else { return }
        try? standardError.write("\(Self.clearLine)")
    }

    /// Back to the line's start, and the line erased: what ends a progress line (also in a signal handler,
    /// `ImportInterrupts`, hence a static string).
    static let clearLine: StaticString = "\r\u{1B}[K"
}
