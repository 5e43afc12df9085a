import SuggestCore

/// Writes donations as JSON Lines (the form `import` and `eval` read) to a file descriptor, buffered: the sink
/// `suggest convert` streams into.
///
///     let output = JSONLinesOutput(fileDescriptor: 1, name: "standard output")
///     try HistoryConverter.collegeMsg(.file(path)) { try output.write($0) }
///     try output.flush()
///
/// Not `Sendable`; one writer per descriptor. Call `flush()` at the end: a buffer still full when the object goes
/// away is written then, but a failure there can no longer be reported.
public final class JSONLinesOutput {
    private let descriptor: Int32
    private let name: String
    private var buffer: [UInt8] = []
    /// Bytes gathered before one `write(2)`.
    static let bufferSize = 1 << 16

    /// - Parameters:
    ///   - fileDescriptor: an open descriptor (`1` for standard output); it is not closed here.
    ///   - name: what error messages call it.
    public init(fileDescriptor: Int32, name: String) {
        descriptor = fileDescriptor
        self.name = name
        buffer.reserveCapacity(Self.bufferSize + 4096)
    }

    deinit { try? flush() }

    /// Appends one donation as one line.
    /// - Throws: `FileError` when a full buffer cannot be written.
    /// - Complexity: O(n) in the size of the donation's JSON.
    public func write(_ interaction: Interaction) throws(FileError) {
        buffer.append(contentsOf: interaction.jsonLine.utf8)
        buffer.append(0x0A)
        if buffer.count >= Self.bufferSize { try flush() }
    }

    /// Writes out everything buffered.
    /// - Throws: `FileError` when the descriptor refuses the bytes.
    public func flush() throws(FileError) {
        let failure = buffer.withUnsafeBytes { FileSystem.writeAll(descriptor, $0, name: name) }
        buffer.removeAll(keepingCapacity: true)
        if let failure { throw failure }
    }
}
