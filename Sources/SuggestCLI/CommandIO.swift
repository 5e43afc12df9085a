import CSystem
import SuggestSQLiteStore

/// Where a command writes: standard output for results, standard error for errors and progress.
///
/// The process uses file descriptors directly (no Foundation: start-up time); tests use `CapturedOutput`.
public protocol OutputSink: AnyObject {
    func write(_ text: String)
    func flush()
}

/// A buffered writer on a file descriptor.
public final class FileDescriptorOutput: OutputSink {
    private let descriptor: Int32
    private var buffer: [UInt8] = []
    private let autoFlush: Bool

    public init(descriptor: Int32, autoFlush: Bool = false) {
        self.descriptor = descriptor
        self.autoFlush = autoFlush
        buffer.reserveCapacity(1 << 16)
    }

    deinit { flush() }

    public func write(_ text: String) {
        buffer.append(contentsOf: text.utf8)
        if autoFlush || buffer.count >= 1 << 16 { flush() }
    }

    public func flush() {
        var offset = 0
        while offset < buffer.count {
            let written = buffer.withUnsafeBytes { raw in
                CSystem.write(descriptor, raw.baseAddress.map { $0 + offset }, buffer.count - offset)
            }
            if written < 0 {
                if system_errno() == EINTR { continue }
                break  // a closed pipe: nothing more can be said
            }
            offset += written
        }
        buffer.removeAll(keepingCapacity: true)
    }
}

/// Output kept in memory, for tests.
public final class CapturedOutput: OutputSink {
    public private(set) var text = ""
    public init() {}
    public func write(_ text: String) { self.text += text }
    public func flush() {}
}

/// Everything a command may touch outside itself.
public struct CommandIO {
    public var standardOutput: OutputSink
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

    public init(
        standardOutput: OutputSink, standardError: OutputSink, standardInput: ByteSource,
        environment: [String: String], currentDirectory: String = ".",
        serve: (@Sendable (ParsedArguments, CommandIO) throws -> Int32)? = nil
    ) {
        self.standardOutput = standardOutput
        self.standardError = standardError
        self.standardInput = standardInput
        self.environment = environment
        self.currentDirectory = currentDirectory
        self.serve = serve
    }

    /// The environment variables commands read (where the store is): all a process needs to gather.
    public static var environmentVariables: [String] { StoreLocation.environmentVariables }

    func out(_ text: String) { standardOutput.write(text) }
    func err(_ text: String) { standardError.write(text) }
}
