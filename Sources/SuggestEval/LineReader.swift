import SuggestCore

/// Reads text line by line from a file, a file descriptor or a string, without Foundation and without copying
/// lines that fit in the read buffer: `LineStream`, with the sources and errors of `SuggestEval`.
///
/// Lines end at `\n`; a `\r` before it is dropped, and a last line without `\n` still counts (its final `\r`
/// dropped too). Line numbers are 1-based, as error messages show them. The bytes handed to the body are valid only
/// during the call. A line longer than `LineStream.donationLineLimit` (64 MiB, the limit of `suggest import`) ends
/// the reading with an error: memory stays bounded whatever the input (`suggest eval /dev/zero`). A UTF-8
/// byte-order mark at the start of the input is dropped.
public enum LineReader {
    /// Where lines come from.
    public enum Source: Sendable {
        /// A file by path.
        case file(String)
        /// An open file descriptor, read to its end and left open (`0` for standard input).
        case fileDescriptor(Int32, name: String)
        /// Text in memory: for tests and small inputs.
        case text(String)

        /// A short name for messages: the path, the descriptor's name, or `text`.
        public var name: String {
            switch self {
            case .file(let path): return path
            case .fileDescriptor(_, let name): return name
            case .text: return "text"
            }
        }
    }

    /// Roughly how many bytes one batch of `nextBatch` holds.
    static let batchSize = 4 << 20

    /// Calls `body` with each line's bytes and 1-based number.
    /// - Throws: `FileError` when the file cannot be opened or read, or has a line longer than the limit (the lines
    ///   before it have been handed to `body`); whatever `body` throws, unchanged.
    /// - Complexity: O(n) in the size of the input.
    /// - Parameter requiringBreakAtEnd: whether a last line without a line break is an error rather than a line:
    ///   for files whose every line ends in one (the published histories `convert` reads), where a last line
    ///   without it is most likely cut short, and may still parse ("933 1214 1" of "933 1214 1082..." would be a
    ///   message dated 1970).
    public static func forEachLine(
        in source: Source, requiringBreakAtEnd: Bool = false, _ body: (UnsafeBufferPointer<UInt8>, Int) throws -> Void
    ) throws {
        let lines = try open(source)
        while true {
            let line: UnsafeBufferPointer<UInt8>?
            do {
                line = try lines.nextLine()
            } catch {
                throw FileError(path: source.name, operation: "read", reason: error.reason, errorNumber: error.code)
            }
            guard let line else { return }
            if lines.lineWasTooLong {
                throw FileError(
                    path: source.name, operation: "read",
                    reason: "line \(lines.lineNumber) is longer than \(LineStream.donationLineLimit >> 20) MiB")
            }
            if requiringBreakAtEnd && lines.lineEndedWithoutBreak {
                throw FileError(
                    path: source.name, operation: "read",
                    reason: "its last line (\(lines.lineNumber)) has no line break: the file looks cut short (a "
                        + "download or a copy that stopped?); get the whole file")
            }
            try body(line, lines.lineNumber)
        }
    }

    /// A stream of `source`'s lines, `\r` dropped at their ends, read in 1 MiB reads, lines up to the limit.
    /// - Throws: `FileError` when the file cannot be opened.
    static func open(_ source: Source) throws(FileError) -> LineStream {
        let limit = LineStream.donationLineLimit
        switch source {
        case .file(let path):
            do {
                return try LineStream(path: path, maximumLineLength: limit, skipsByteOrderMark: true)
            } catch {
                throw FileError(path: path, operation: "open", reason: error.reason, errorNumber: error.code)
            }
        case .fileDescriptor(let descriptor, _):
            return LineStream(descriptor: descriptor, maximumLineLength: limit, skipsByteOrderMark: true)
        case .text(let text):
            return LineStream(bytes: Array(text.utf8), maximumLineLength: limit, skipsByteOrderMark: true)
        }
    }

    /// The next batch of whole lines of about `batchSize` bytes from `lines`, opened on `source`; `nil` at the end.
    /// A batch that names an `overlongLine` is the last.
    /// - Throws: `FileError` when the source cannot be read.
    static func nextBatch(of lines: LineStream, from source: Source) throws(FileError) -> LineBatch? {
        do {
            return try lines.nextBatch(minimumBytes: batchSize)
        } catch {
            throw FileError(path: source.name, operation: "read", reason: error.reason, errorNumber: error.code)
        }
    }
}
