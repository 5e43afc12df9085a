#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A stream of bytes read in chunks: a file, standard input, or bytes in memory (tests).
public final class ByteSource {
    private let descriptor: Int32?
    private let ownsDescriptor: Bool
    private var memory: [UInt8]
    private var memoryOffset = 0
    private var buffer: [UInt8] = []
    private var start = 0
    private var atEnd = false
    /// The number of the line `nextLine` returned last (1-based).
    public private(set) var lineNumber = 0
    /// Bytes consumed so far, for progress.
    public private(set) var bytesRead = 0
    /// How far past `start` the buffer is known to hold no line break, so that a long line is searched once,
    /// not again after every read.
    private var searched = 0
    /// Lines longer than this are not kept whole: `nextLine` hands over an empty line and sets `lineWasTooLong`.
    public let maximumLineLength = 64 << 20
    /// Whether the line `nextLine` returned last was cut for being longer than `maximumLineLength`.
    public private(set) var lineWasTooLong = false
    private var skippingLongLine = false

    /// Reads from an open descriptor (standard input is 0).
    public init(descriptor: Int32) {
        self.descriptor = descriptor
        ownsDescriptor = false
        memory = []
    }

    /// Reads from bytes in memory.
    public init(bytes: [UInt8]) {
        descriptor = nil
        ownsDescriptor = false
        memory = bytes
    }

    public convenience init(text: String) { self.init(bytes: Array(text.utf8)) }

    /// Opens a file for reading.
    /// - Throws: `CommandError.usage` naming the file when it cannot be opened.
    public init(path: String) throws(CommandError) {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else {
            throw CommandError.usage("cannot read \(path): \(String(cString: strerror(errno)))")
        }
        var info = stat()
        if fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFDIR {
            close(fd)
            throw CommandError.usage("\(path) is a directory, not a file")
        }
        descriptor = fd
        ownsDescriptor = true
        memory = []
    }

    deinit { if ownsDescriptor, let descriptor { close(descriptor) } }

    /// The size of the file behind the source, when it is a regular file (for progress in percent).
    public var totalBytes: Int? {
        guard let descriptor else { return memory.count }
        var info = stat()
        guard fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return nil }
        return Int(info.st_size)
    }

    private func fill() -> Bool {
        if start > 0 && start >= buffer.count / 2 {
            buffer.removeFirst(start)
            start = 0
        }
        // An over-long line is dropped as it streams in, so memory stays bounded (`import /dev/zero`).
        if buffer.count - start > maximumLineLength {
            buffer.removeSubrange(start...)
            searched = 0
            skippingLongLine = true
        }
        if let descriptor {
            let chunk = 1 << 16
            let old = buffer.count
            buffer.append(contentsOf: repeatElement(0, count: chunk))
            var count: Int
            repeat {
                count = buffer.withUnsafeMutableBytes { raw in
                    guard let base = raw.baseAddress else { return -1 }
                    return read(descriptor, base + old, chunk)
                }
            } while count < 0 && errno == EINTR
            buffer.removeLast(chunk - max(count, 0))
            return count > 0
        }
        guard memoryOffset < memory.count else { return false }
        buffer.append(contentsOf: memory[memoryOffset...])
        memoryOffset = memory.count
        return true
    }

    /// Calls `body` with the next line's bytes (without the line break), or returns `false` at the end.
    public func nextLine(_ body: (UnsafeBufferPointer<UInt8>) throws -> Void) rethrows -> Bool {
        while true {
            if let newline = buffer[(start + searched)...].firstIndex(of: 0x0A) {
                var end = newline
                if end > start && buffer[end - 1] == 0x0D { end -= 1 }
                lineNumber += 1
                bytesRead += newline + 1 - start
                var lineStart = start
                start = newline + 1
                searched = 0
                lineWasTooLong = skippingLongLine
                if skippingLongLine {
                    skippingLongLine = false
                    lineStart = end
                }
                try buffer.withUnsafeBufferPointer { try body(UnsafeBufferPointer(rebasing: $0[lineStart..<end])) }
                return true
            }
            searched = buffer.count - start
            if atEnd || !fill() {
                atEnd = true
                guard start < buffer.count || skippingLongLine else { return false }
                lineNumber += 1
                bytesRead += buffer.count - start
                let lineStart = skippingLongLine ? buffer.count : start
                let end = buffer.count
                start = buffer.count
                searched = 0
                lineWasTooLong = skippingLongLine
                skippingLongLine = false
                try buffer.withUnsafeBufferPointer { try body(UnsafeBufferPointer(rebasing: $0[lineStart..<end])) }
                return true
            }
        }
    }

    /// Everything that is left, as bytes.
    public func readAll() -> [UInt8] {
        while !atEnd && fill() {}
        atEnd = true
        let rest = Array(buffer[start...])
        start = buffer.count
        bytesRead += rest.count
        return rest
    }
}
