import CSystem
import Synchronization

/// Lines read from a file descriptor or from bytes in memory, one at a time or in batches of whole lines: the one
/// reader behind `suggest import`, `donate --json`, `share`, `eval`, the converters and `suggest-bench parse`.
///
/// Lines end at `\n`, which is not part of the line; a last line without `\n` still counts. What happens to a `\r`
/// before the line break, to a line longer than a limit and to a failed `read` is the caller's choice, because the
/// commands that read lines have always differed there (see `CarriageReturns`, `maximumLineLength`, `OnReadError`).
/// Line numbers are 1-based and count every line, blank ones too.
///
/// A line longer than `maximumLineLength` ends the stream: it is never read to its end, so an endless line
/// (`suggest import /dev/zero`) is refused after the limit's worth of bytes, in bounded memory.
public final class LineStream {
    /// How many reads of a command's input (streams with `isCommandInput`) are under way in the process: a signal
    /// handler asks it whether a command is waiting for its input (`suggest import` ends at once then, where it
    /// acted on a signal only when a line came, and a service manager's SIGTERM waited as long as a stalled pipe).
    public static let readsUnderWay = Atomic<Int>(0)
    /// Whether this stream reads what the command was given (not a file of its own, such as a store's spool),
    /// and so counts in `readsUnderWay`.
    public var isCommandInput = false

    /// Whether a line is blank: only spaces, tabs and `\r` (the end of a line written on Windows), which every
    /// JSON Lines reader here skips.
    public static func isBlank(_ line: UnsafeBufferPointer<UInt8>) -> Bool {
        line.allSatisfy { $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }
    }

    /// What happens to a `\r` at the end of a line.
    public enum CarriageReturns: Sendable {
        /// Kept: a line is every byte before its `\n` (`suggest-bench parse`).
        case keep
        /// A `\r` right before `\n` is dropped; a last line without `\n` keeps a final `\r` (`suggest import`).
        case dropBeforeNewline
        /// A final `\r` is dropped from every line, the last one too (`suggest eval`, the converters).
        case drop
    }

    /// What a failed `read` does.
    public enum OnReadError: Sendable {
        /// `nextLine`, `nextBatch` and `readAll` throw it; the part of a line read before it is not handed out.
        case throwError
        /// It ends the input as the end of the file would: what was read is handed out, then nothing more.
        case endInput
    }

    /// A failed `open` or `read`, with the system's error number.
    public struct SystemError: Error, Sendable, Equatable {
        /// The `errno` value the call failed with (`ENOENT`, `EIO`).
        public var code: Int32

        /// The error for the system error number `code`.
        public init(code: Int32) { self.code = code }

        /// The error for the current `errno`.
        public static var current: SystemError { SystemError(code: system_errno()) }

        /// The system's message (`No such file or directory`).
        public var reason: String { ErrorNumber.describe(code) }
    }

    /// The longest line of donation JSON Lines that `import` and `eval` read (64 MiB): a donation is a few KB, and a
    /// line past this is not one.
    public static let donationLineLimit = 64 << 20

    /// The descriptor read, or -1 for bytes in memory.
    private let descriptor: Int32
    private let closesDescriptor: Bool
    /// The size of one `read`.
    private let chunkSize: Int
    private let carriageReturns: CarriageReturns
    private let onReadError: OnReadError
    /// The bytes read and not yet handed out are `storage[start..<end]`.
    private var storage: UnsafeMutablePointer<UInt8>
    private var capacity: Int
    private var start = 0
    private var end = 0
    /// How far past `start` the buffer is known to hold no line break, so that a long line is searched once, not
    /// again after every read.
    private var searched = 0
    private var atEnd = false
    private let memoryCount: Int?
    /// Whether the stream stopped at a line longer than `maximumLineLength`: it hands out nothing more.
    private var stoppedAtLongLine = false
    /// Whether a UTF-8 byte-order mark at the start of the input is still to be looked for (and dropped).
    private var byteOrderMarkPending: Bool

    /// The longest line (`nil`: no limit), in bytes without its line break, that the stream hands out. A longer line
    /// ends the stream as soon as its length is known to pass the limit (after at most one more read): `nextLine`
    /// hands it over empty with `lineWasTooLong` set, `nextBatch` names it in `LineBatch.overlongLine`, and nothing
    /// after it is read. The stream holds at most the limit plus one read. A limit given below 1 is taken as 1 (a
    /// limit of 0 made every line too long), and one near `Int.max` as "no limit" would be (the stream adds to it).
    public let maximumLineLength: Int?

    /// A line limit as the stream keeps it: between 1 and a quarter of `Int.max`.
    private static func lineLimit(_ limit: Int) -> Int { min(max(limit, 1), Int.max / 4) }
    /// Whether the line `nextLine` returned last was longer than `maximumLineLength`: it was handed over empty, and
    /// the stream ends there.
    public private(set) var lineWasTooLong = false
    /// Whether the line `nextLine` returned last ended the input without a line break: the last line of a file
    /// that does not end in `\n`, or of one cut short.
    public private(set) var lineEndedWithoutBreak = false
    /// The number of the line handed out last (1-based); after a batch, of the batch's last line.
    public private(set) var lineNumber = 0
    /// Bytes handed out so far (line breaks included, the dropped part of an over-long line not), for progress.
    public private(set) var bytesRead = 0

    /// Reads an open descriptor (`0` for standard input).
    /// - Parameters:
    ///   - closesDescriptor: whether the stream closes `descriptor` when it goes.
    ///   - chunkSize: the size of one `read`.
    ///   - skipsByteOrderMark: whether a UTF-8 byte-order mark (`EF BB BF`) at the very start of the input is
    ///     dropped, as editors on Windows write one; it is not part of the first line then, nor of `bytesRead`'s
    ///     lines (it counts as read).
    public init(
        descriptor: Int32, closesDescriptor: Bool = false, chunkSize: Int = 1 << 20,
        maximumLineLength: Int? = nil, carriageReturns: CarriageReturns = .drop,
        onReadError: OnReadError = .throwError, skipsByteOrderMark: Bool = false
    ) {
        byteOrderMarkPending = skipsByteOrderMark
        self.descriptor = descriptor
        self.closesDescriptor = closesDescriptor
        self.chunkSize = max(chunkSize, 1)
        self.maximumLineLength = maximumLineLength.map(Self.lineLimit)
        self.carriageReturns = carriageReturns
        self.onReadError = onReadError
        memoryCount = nil
        // The buffer grows at the first read: every command holds a stream on standard input, and most never read
        // it (a 128 KiB allocation is an mmap, and page faults, at every start).
        capacity = 0
        storage = .allocate(capacity: 1)
    }

    /// Reads bytes in memory, all of them at once.
    public init(
        bytes: [UInt8], maximumLineLength: Int? = nil, carriageReturns: CarriageReturns = .drop,
        skipsByteOrderMark: Bool = false
    ) {
        byteOrderMarkPending = skipsByteOrderMark
        descriptor = -1
        closesDescriptor = false
        chunkSize = 1
        self.maximumLineLength = maximumLineLength.map(Self.lineLimit)
        self.carriageReturns = carriageReturns
        onReadError = .endInput
        memoryCount = bytes.count
        capacity = max(bytes.count, 1)
        storage = .allocate(capacity: capacity)
        bytes.withUnsafeBufferPointer { source in
            if let base = source.baseAddress { storage.update(from: base, count: source.count) }
        }
        end = bytes.count
    }

    /// Opens a file for reading; the stream closes it.
    /// - Throws: `SystemError` when `open` fails.
    public convenience init(
        path: String, chunkSize: Int = 1 << 20, maximumLineLength: Int? = nil,
        carriageReturns: CarriageReturns = .drop, onReadError: OnReadError = .throwError,
        skipsByteOrderMark: Bool = false
    ) throws(SystemError) {
        let descriptor = system_open(path, O_RDONLY)
        guard descriptor >= 0 else { throw .current }
        self.init(
            descriptor: descriptor, closesDescriptor: true, chunkSize: chunkSize,
            maximumLineLength: maximumLineLength, carriageReturns: carriageReturns, onReadError: onReadError,
            skipsByteOrderMark: skipsByteOrderMark)
    }

    deinit {
        storage.deallocate()
        if closesDescriptor { close(descriptor) }
    }

    /// The size of the input when it is a regular file or bytes in memory (for progress in percent), else `nil`.
    public var totalBytes: Int? {
        if let memoryCount { return memoryCount }
        var info = stat()
        guard fstat(descriptor, &info) == 0, system_is_regular_file(info.st_mode) != 0 else { return nil }
        return Int(info.st_size)
    }

    /// The next line's bytes, without its line break, or `nil` at the end of the input. The bytes are valid until
    /// the next call on this stream. A line longer than `maximumLineLength` is handed over empty, with
    /// `lineWasTooLong` set, and is the last one.
    /// - Throws: `SystemError` when a `read` fails and the stream was made with `.throwError`.
    /// - Complexity: O(n) in the length of the line, amortised.
    public func nextLine() throws(SystemError) -> UnsafeBufferPointer<UInt8>? {
        guard !stoppedAtLongLine else { return nil }
        try dropByteOrderMark()
        var newline = firstNewline()
        while newline == nil && !atEnd {
            // One byte of slack: a `\r` that the line break would drop does not count.
            if let maximumLineLength, end - start > maximumLineLength + 1 { return cutLongLine() }
            if try fill() { newline = firstNewline() } else { atEnd = true }
        }
        let lineEnd: Int
        let consumed: Int
        if let newline {
            consumed = newline + 1 - start
            lineEnd = newline - (carriageReturns != .keep && endsInCarriageReturn(start, newline) ? 1 : 0)
        } else {
            // The input has ended: what is left is a last line without a line break, if anything.
            guard start < end else { return nil }
            consumed = end - start
            lineEnd = end - (carriageReturns == .drop && endsInCarriageReturn(start, end) ? 1 : 0)
        }
        if let maximumLineLength, lineEnd - start > maximumLineLength { return cutLongLine() }
        bytesRead += consumed
        lineNumber += 1
        let lineStart = start
        start = newline.map { $0 + 1 } ?? end
        searched = 0
        lineWasTooLong = false
        lineEndedWithoutBreak = newline == nil
        return UnsafeBufferPointer(start: storage + lineStart, count: lineEnd - lineStart)
    }

    /// Ends the stream at the line that begins at `start`, which is longer than `maximumLineLength`, and hands it
    /// over empty.
    private func cutLongLine() -> UnsafeBufferPointer<UInt8> {
        lineNumber += 1
        lineWasTooLong = true
        stoppedAtLongLine = true
        atEnd = true
        start = end
        searched = 0
        return UnsafeBufferPointer(start: storage + start, count: 0)
    }

    /// The next run of whole lines, at least `minimumBytes` long unless the input ends first (a line longer than
    /// that makes a batch of its own), or `nil` at the end of the input.
    ///
    /// A line longer than `maximumLineLength` ends the stream: the batch holds the lines before it (perhaps none) and
    /// names it in `overlongLine`, and the next call returns `nil`.
    /// - Throws: `SystemError` when a `read` fails and the stream was made with `.throwError`; the lines read since
    ///   the last batch are then not handed out.
    /// - Complexity: O(n) in the bytes of the batch.
    public func nextBatch(minimumBytes: Int) throws(SystemError) -> LineBatch? {
        guard !stoppedAtLongLine else { return nil }
        try dropByteOrderMark()
        // `whole`: how many bytes from `start` are whole lines; `scanned`: how far the search for the last line
        // break got. Both are offsets from `start`, which `fill` may move.
        var whole = 0
        var scanned = 0
        func scan() {
            var from = start + scanned
            while from < end, let found = memchr(storage + from, 0x0A, end - from) {
                from = UnsafeRawPointer(storage).distance(to: UnsafeRawPointer(found)) + 1
                whole = from - start
            }
            scanned = end - start
        }
        scan()
        var unfinishedTooLong = false
        while !atEnd {
            if whole > 0 && end - start >= minimumBytes { break }
            if let maximumLineLength, end - start - whole > maximumLineLength + 1 {
                unfinishedTooLong = true
                break
            }
            if try fill() { scan() } else { atEnd = true }
        }
        // What the batch may hold: its whole lines, and at the end of the input the last line without a break.
        let cut = atEnd && !unfinishedTooLong ? end : start + whole
        var overlong: Int?
        var lineStart = start
        var lines = 0
        while lineStart < cut {
            let found = memchr(storage + lineStart, 0x0A, cut - lineStart)
            let lineEnd = found.map { UnsafeRawPointer(storage).distance(to: UnsafeRawPointer($0)) } ?? cut
            if let maximumLineLength {
                let dropsReturn = found == nil ? carriageReturns == .drop : carriageReturns != .keep
                let length = lineEnd - lineStart - (dropsReturn && endsInCarriageReturn(lineStart, lineEnd) ? 1 : 0)
                if length > maximumLineLength {
                    overlong = lineNumber + lines + 1
                    break
                }
            }
            lines += 1
            lineStart = lineEnd + 1
        }
        let batchEnd = min(lineStart, cut)
        if overlong == nil && unfinishedTooLong { overlong = lineNumber + lines + 1 }
        guard batchEnd > start || overlong != nil else { return nil }
        let batch = LineBatch(
            bytes: Array(UnsafeBufferPointer(start: storage + start, count: batchEnd - start)),
            firstLine: lineNumber + 1, carriageReturns: carriageReturns, overlongLine: overlong)
        lineNumber += lines
        bytesRead += batchEnd - start
        if let overlong {
            lineNumber = overlong
            lineWasTooLong = true
            stoppedAtLongLine = true
            atEnd = true
            start = end
            searched = 0
            return batch
        }
        // What is left is the start of one line: move it to the front now, while it is short, so that the reads
        // for the next batch do not have to move a batch's worth of lines.
        memmove(storage, storage + batchEnd, end - batchEnd)
        end -= batchEnd
        start = 0
        searched = 0
        return batch
    }

    /// Everything that is left, for a reader of one document (`donate --json`, `share --json`); `nil` if it is longer
    /// than `maximumLineLength`, which the caller reports: it never gets a part of the input as if it were all.
    /// - Throws: `SystemError` when a `read` fails and the stream was made with `.throwError`.
    /// - Parameter limit: fewer bytes than `maximumLineLength` to read at most (`nil` when it is more than this).
    public func readAll(atMost limit: Int? = nil) throws(SystemError) -> [UInt8]? {
        guard !stoppedAtLongLine else { return nil }
        let bound = [maximumLineLength, limit].compactMap { $0 }.min()
        try dropByteOrderMark()
        while !atEnd, try fill() {
            if let bound, end - start > bound { return nil }
        }
        atEnd = true
        if let bound, end - start > bound { return nil }
        let rest = Array(UnsafeBufferPointer(start: storage + start, count: end - start))
        start = end
        searched = 0
        bytesRead += rest.count
        return rest
    }

    /// Drops a UTF-8 byte-order mark at the very start of the input, when the stream was made to, once.
    private func dropByteOrderMark() throws(SystemError) {
        guard byteOrderMarkPending else { return }
        while end - start < 3 && !atEnd {
            if !(try fill()) { atEnd = true }
        }
        byteOrderMarkPending = false
        if end - start >= 3 && storage[start] == 0xEF && storage[start + 1] == 0xBB && storage[start + 2] == 0xBF {
            start += 3
            bytesRead += 3
        }
    }

    private func endsInCarriageReturn(_ lineStart: Int, _ lineEnd: Int) -> Bool {
        lineEnd > lineStart && storage[lineEnd - 1] == 0x0D
    }

    /// The index of the first `\n` at or after `start`, remembering how far there is none.
    private func firstNewline() -> Int? {
        let from = start + searched
        if from < end, let found = memchr(storage + from, 0x0A, end - from) {
            return UnsafeRawPointer(storage).distance(to: UnsafeRawPointer(found))
        }
        searched = end - start
        return nil
    }

    /// Reads one more chunk after `end`.
    /// - Returns: `false` at the end of the input (or at a failed `read`, with `.endInput`).
    private func fill() throws(SystemError) -> Bool {
        guard descriptor >= 0 else { return false }
        if capacity - end < chunkSize {
            let kept = end - start
            if kept + chunkSize > capacity {
                capacity = max(2 * capacity, kept + chunkSize)
                let larger = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity)
                larger.update(from: storage + start, count: kept)
                storage.deallocate()
                storage = larger
            } else {
                memmove(storage, storage + start, kept)
            }
            start = 0
            end = kept
        }
        var count: Int
        if isCommandInput { Self.readsUnderWay.add(1, ordering: .relaxed) }
        repeat {
            count = read(descriptor, storage + end, chunkSize)
        } while count < 0 && system_errno() == EINTR
        if isCommandInput { Self.readsUnderWay.subtract(1, ordering: .relaxed) }
        if count < 0 {
            if onReadError == .endInput { return false }
            throw .current
        }
        end += count
        return count > 0
    }
}

/// A run of whole lines read ahead (`LineStream.nextBatch`), so that another thread can take them apart.
public struct LineBatch: Sendable {
    /// The bytes of the lines, each ending in `\n` except perhaps the last line of the input.
    public var bytes: [UInt8]
    /// The 1-based number of the first line.
    public var firstLine: Int
    /// What the stream does to a `\r` at the end of a line, done here too.
    public var carriageReturns: LineStream.CarriageReturns
    /// The number of the line right after these when it is longer than the stream's `maximumLineLength`: the stream
    /// stopped there, and that line is in no batch.
    public var overlongLine: Int?

    /// A batch of lines, as `LineStream.nextBatch` makes them.
    /// - Parameters:
    ///   - bytes: whole lines, each ending in `\n` except perhaps the input's last.
    ///   - firstLine: the 1-based number of the first of them.
    ///   - carriageReturns: what `forEachLine` does to a `\r` at the end of a line.
    ///   - overlongLine: the number of the over-long line that ended the stream right after these, if one did.
    public init(
        bytes: [UInt8], firstLine: Int, carriageReturns: LineStream.CarriageReturns = .drop, overlongLine: Int? = nil
    ) {
        self.bytes = bytes
        self.firstLine = firstLine
        self.carriageReturns = carriageReturns
        self.overlongLine = overlongLine
    }

    /// Calls `body` with each line's bytes (without its line break, `\r` as the stream treats it) and number.
    public func forEachLine<Failure: Error>(
        _ body: (UnsafeBufferPointer<UInt8>, Int) throws(Failure) -> Void
    ) throws(Failure) {
        let result: Result<Void, Failure> = bytes.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return .success(()) }
            var start = 0
            var line = firstLine
            while start < buffer.count {
                let found = memchr(base + start, 0x0A, buffer.count - start)
                let end = found.map { UnsafeRawPointer(base).distance(to: UnsafeRawPointer($0)) } ?? buffer.count
                var stop = end
                let dropsReturn = found == nil ? carriageReturns == .drop : carriageReturns != .keep
                if dropsReturn, stop > start, buffer[stop - 1] == 0x0D { stop -= 1 }
                do throws(Failure) {
                    try body(UnsafeBufferPointer(rebasing: buffer[start..<stop]), line)
                } catch {
                    return .failure(error)
                }
                start = end + 1
                line += 1
            }
            return .success(())
        }
        try result.get()
    }
}
