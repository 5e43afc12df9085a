import CSystem
import SuggestCore

/// A stream of bytes read in chunks: a file, standard input, or bytes in memory (tests). The lines are
/// `LineStream`'s, read as `import` always has: in 64 KiB reads, a `\r` dropped only before a `\n`; a line over
/// 64 MiB ends the input; a UTF-8 byte-order mark at the start is dropped. A failed read is an error that names
/// the input (exit 1; 64 for a directory), never a quiet end of it.
public final class ByteSource {
    private let lines: LineStream
    /// How errors name the input: its path, or "standard input".
    private let name: String
    /// The number of the line `nextLine` returned last (1-based).
    public var lineNumber: Int { lines.lineNumber }
    /// Bytes consumed so far, for progress.
    public var bytesRead: Int { lines.bytesRead }
    /// A line longer than this ends the input: `nextLine` hands it over empty, sets `lineWasTooLong`, and reads
    /// nothing more.
    public let maximumLineLength = ByteSource.lineLimit
    /// Whether the line `nextLine` returned last was longer than `maximumLineLength` (and so the last).
    public var lineWasTooLong: Bool { lines.lineWasTooLong }

    /// What a regular file held past the read position when the source was made: an end before that many bytes, in
    /// a file that is smaller now, means it was cut short while it was read (truncated at a line break, it was
    /// imported as a prefix, exit 0).
    private var expectedBytes: Int?

    private static let chunkSize = 1 << 16
    private static let lineLimit = LineStream.donationLineLimit

    private init(descriptor: Int32, closesDescriptor: Bool, name: String) {
        lines = LineStream(
            descriptor: descriptor, closesDescriptor: closesDescriptor, chunkSize: Self.chunkSize,
            maximumLineLength: Self.lineLimit, carriageReturns: .dropBeforeNewline, onReadError: .throwError,
            skipsByteOrderMark: true)
        lines.isCommandInput = true
        self.name = name
        var info = stat()
        let position = lseek(descriptor, 0, SEEK_CUR)
        if fstat(descriptor, &info) == 0, system_is_regular_file(info.st_mode) != 0, position >= 0 {
            expectedBytes = Int(info.st_size) - Int(position)
        }
    }

    /// Reads from an open descriptor (standard input is 0).
    public convenience init(descriptor: Int32) {
        self.init(descriptor: descriptor, closesDescriptor: false, name: descriptor == 0 ? "standard input" : "input")
    }

    /// Reads from bytes in memory.
    public init(bytes: [UInt8]) {
        lines = LineStream(
            bytes: bytes, maximumLineLength: Self.lineLimit, carriageReturns: .dropBeforeNewline,
            skipsByteOrderMark: true)
        name = "input"
    }

    /// Reads the UTF-8 bytes of `text`.
    public convenience init(text: String) { self.init(bytes: Array(text.utf8)) }

    /// Whether `path` names a regular file this process may read: for a hint when a file's name was taken for an
    /// option's value.
    static func isReadableFile(_ path: String) -> Bool {
        var info = stat()
        return !path.isEmpty && stat(path, &info) == 0 && system_is_directory(info.st_mode) == 0 && access(path, R_OK) == 0
    }

    /// What a command says of an empty FILE: "cannot read : No such file or directory" left the reader to guess
    /// that the name was empty.
    static let emptyName = "the file name is empty; give a FILE, or - for standard input"

    /// Opens a file for reading.
    /// - Throws: `CommandError.usage` naming the file when its path names nothing this process may read, `.failure`
    ///   when the system could not open it (`ErrorNumber.blamesThePath`).
    public convenience init(path: String) throws(CommandError) {
        // "cannot read : No such file or directory" left the reader to guess that the name was empty.
        guard !path.isEmpty else {
            throw CommandError.usage(Self.emptyName)
        }
        let fd = system_open(path, O_RDONLY)
        guard fd >= 0 else {
            let number = system_errno()
            let message = "cannot read \(path): \(ErrorNumber.describe(number))"
            throw ErrorNumber.blamesThePath(number) ? .usage(message) : .failure(message)
        }
        var info = stat()
        if fstat(fd, &info) == 0, system_is_directory(info.st_mode) != 0 {
            close(fd)
            throw CommandError.usage("\(path) is a directory, not a file; give a JSON Lines file, or - for standard input")
        }
        self.init(descriptor: fd, closesDescriptor: true, name: path)
    }

    /// A read that failed: the system's failure (exit 1), unless the input is a directory (`import - < /tmp`),
    /// which is the user's to correct, as `import /tmp` is.
    private static func readFailure(_ error: LineStream.SystemError, name: String) -> CommandError {
        let message = "cannot read \(name): \(error.reason)"
        return error.code == EISDIR ? .usage(message) : .failure(message)
    }

    /// The size of the file behind the source, when it is a regular file (for progress in percent).
    public var totalBytes: Int? { lines.totalBytes }

    /// Calls `body` with the next line's bytes (without the line break), or returns `false` at the end.
    /// - Throws: `CommandError.failure` when reading fails, or when a regular file ends before the size it had when
    ///   the source was made; `.usage` when the input is a directory (`suggest import - < /tmp`).
    public func nextLine(_ body: (UnsafeBufferPointer<UInt8>) -> Void) throws(CommandError) -> Bool {
        let line: UnsafeBufferPointer<UInt8>?
        do {
            line = try lines.nextLine()
        } catch {
            throw Self.readFailure(error, name: name)
        }
        guard let line else {
            // Cut short: fewer bytes than it held, and it holds fewer now (a file of /sys says 4096 and holds less).
            if let expectedBytes, lines.bytesRead < expectedBytes, !lines.lineWasTooLong,
                let now = lines.totalBytes, now < expectedBytes
            {
                throw .failure(
                    "\(name) was cut short while it was read: it held \(expectedBytes) bytes, and ended after "
                        + "\(lines.bytesRead); read it again once it is whole")
            }
            return false
        }
        body(line)
        return true
    }

    /// Everything that is left, as bytes, which must hold more than white space: one document (`donate --json`,
    /// `share --json`).
    /// - Parameter what: what the document should be, for the message when there is none.
    /// - Throws: `CommandError.usage` when the input is empty or longer than `maximumLineLength`, `.failure` when
    ///   reading fails.
    /// - Parameter limit: the most bytes `what` may have, when fewer than `maximumLineLength`: reading stops past
    ///   it (a share request of `/dev/zero` was read to 64 MiB before its limit of 256 KiB refused it).
    public func readAll(what: String, atMost limit: Int? = nil) throws(CommandError) -> [UInt8] {
        let all = try readAll(atMost: limit, what: what)
        guard all.contains(where: { $0 != 0x20 && $0 != 0x09 && $0 != 0x0A && $0 != 0x0D }) else {
            throw CommandError.usage("\(name) is empty; give \(what)")
        }
        return all
    }

    /// Everything that is left, as bytes.
    /// - Throws: `CommandError.usage` when it is longer than `maximumLineLength`, `.failure` when reading fails.
    public func readAll() throws(CommandError) -> [UInt8] { try readAll(atMost: nil, what: nil) }

    private func readAll(atMost limit: Int?, what: String?) throws(CommandError) -> [UInt8] {
        let all: [UInt8]?
        do {
            all = try lines.readAll(atMost: limit)
        } catch {
            throw Self.readFailure(error, name: name)
        }
        guard let all else {
            if let limit, let what, limit < maximumLineLength {
                throw CommandError.usage("\(name) is longer than \(limit) bytes; \(what) is at most that")
            }
            throw CommandError.usage("\(name) is longer than \(maximumLineLength >> 20) MiB; one donation or request is a few KB")
        }
        return all
    }
}

/// A file or standard input, as a store's batch import reads it.
extension ByteSource: JSONLineSource {}
