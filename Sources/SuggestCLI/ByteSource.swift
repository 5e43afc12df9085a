import SuggestCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A stream of bytes read in chunks: a file, standard input, or bytes in memory (tests). The lines are
/// `LineStream`'s, read as `import` always has: in 64 KiB reads, a `\r` dropped only before a `\n`, lines over
/// 64 MiB cut, and a failed read taken for the end of the input.
public final class ByteSource {
    private let lines: LineStream
    /// The number of the line `nextLine` returned last (1-based).
    public var lineNumber: Int { lines.lineNumber }
    /// Bytes consumed so far, for progress.
    public var bytesRead: Int { lines.bytesRead }
    /// Lines longer than this are not kept whole: `nextLine` hands over an empty line and sets `lineWasTooLong`.
    public let maximumLineLength = ByteSource.lineLimit
    /// Whether the line `nextLine` returned last was cut for being longer than `maximumLineLength`.
    public var lineWasTooLong: Bool { lines.lineWasTooLong }

    private static let chunkSize = 1 << 16
    private static let lineLimit = 64 << 20

    private init(descriptor: Int32, closesDescriptor: Bool) {
        lines = LineStream(
            descriptor: descriptor, closesDescriptor: closesDescriptor, chunkSize: Self.chunkSize,
            maximumLineLength: Self.lineLimit, carriageReturns: .dropBeforeNewline, onReadError: .endInput)
    }

    /// Reads from an open descriptor (standard input is 0).
    public convenience init(descriptor: Int32) { self.init(descriptor: descriptor, closesDescriptor: false) }

    /// Reads from bytes in memory.
    public init(bytes: [UInt8]) {
        lines = LineStream(bytes: bytes, maximumLineLength: Self.lineLimit, carriageReturns: .dropBeforeNewline)
    }

    public convenience init(text: String) { self.init(bytes: Array(text.utf8)) }

    /// Opens a file for reading.
    /// - Throws: `CommandError.usage` naming the file when it cannot be opened.
    public convenience init(path: String) throws(CommandError) {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else {
            throw CommandError.usage("cannot read \(path): \(String(cString: strerror(errno)))")
        }
        var info = stat()
        if fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFDIR {
            close(fd)
            throw CommandError.usage("\(path) is a directory, not a file")
        }
        self.init(descriptor: fd, closesDescriptor: true)
    }

    /// The size of the file behind the source, when it is a regular file (for progress in percent).
    public var totalBytes: Int? { lines.totalBytes }

    /// Calls `body` with the next line's bytes (without the line break), or returns `false` at the end.
    public func nextLine(_ body: (UnsafeBufferPointer<UInt8>) throws -> Void) rethrows -> Bool {
        // `try?` loses nothing: made with `.endInput`, the stream ends at a failed read instead of throwing.
        guard let line = try? lines.nextLine() else { return false }
        try body(line)
        return true
    }

    /// Everything that is left, as bytes.
    public func readAll() -> [UInt8] { (try? lines.readAll()) ?? [] }
}
