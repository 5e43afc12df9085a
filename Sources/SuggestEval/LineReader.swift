#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Reads text line by line from a file, a file descriptor or a string, without Foundation and without copying
/// lines that fit in the read buffer.
///
/// Lines end at `\n`; a `\r` before it is dropped, and a last line without `\n` still counts. Line numbers are
/// 1-based, as error messages show them. The bytes handed to the body are valid only during the call.
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

    /// The size of one `read`.
    static let chunkSize = 1 << 20

    /// Calls `body` with each line's bytes and 1-based number.
    /// - Throws: `FileError` when the file cannot be opened or read; whatever `body` throws, unchanged.
    /// - Complexity: O(n) in the size of the input.
    public static func forEachLine(
        in source: Source, _ body: (UnsafeBufferPointer<UInt8>, Int) throws -> Void
    ) throws {
        switch source {
        case .file(let path):
            let descriptor = open(path, O_RDONLY)
            guard descriptor >= 0 else { throw FileError.current(path: path, operation: "open") }
            defer { close(descriptor) }
            try forEachLine(descriptor: descriptor, name: path, body)
        case .fileDescriptor(let descriptor, let name):
            try forEachLine(descriptor: descriptor, name: name, body)
        case .text(let text):
            var copy = text
            try copy.withUTF8 { bytes in
                var number = 0
                var start = 0
                var index = 0
                while index < bytes.count {
                    if bytes[index] == 0x0A {
                        number += 1
                        try body(trimmed(UnsafeBufferPointer(rebasing: bytes[start..<index])), number)
                        start = index + 1
                    }
                    index += 1
                }
                if start < bytes.count {
                    try body(trimmed(UnsafeBufferPointer(rebasing: bytes[start...])), number + 1)
                }
            }
        }
    }

    private static func forEachLine(
        descriptor: Int32, name: String, _ body: (UnsafeBufferPointer<UInt8>, Int) throws -> Void
    ) throws {
        let buffer = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: chunkSize)
        defer { buffer.deallocate() }
        guard let base = buffer.baseAddress else { return }
        // The start of a line that spans two reads.
        var carry: [UInt8] = []
        var number = 0
        while true {
            let count = read(descriptor, base, chunkSize)
            if count < 0 {
                if errno == EINTR { continue }
                throw FileError.current(path: name, operation: "read")
            }
            if count == 0 { break }
            var start = 0
            while start < count {
                guard let found = memchr(base + start, 0x0A, count - start) else {
                    carry.append(contentsOf: UnsafeBufferPointer(start: base + start, count: count - start))
                    break
                }
                let end = found.assumingMemoryBound(to: UInt8.self) - base
                number += 1
                if carry.isEmpty {
                    try body(trimmed(UnsafeBufferPointer(start: base + start, count: end - start)), number)
                } else {
                    carry.append(contentsOf: UnsafeBufferPointer(start: base + start, count: end - start))
                    try carry.withUnsafeBufferPointer { try body(trimmed($0), number) }
                    carry.removeAll(keepingCapacity: true)
                }
                start = end + 1
            }
        }
        if !carry.isEmpty {
            try carry.withUnsafeBufferPointer { try body(trimmed($0), number + 1) }
        }
    }

    /// The line without a final `\r`.
    @inline(__always)
    private static func trimmed(_ line: UnsafeBufferPointer<UInt8>) -> UnsafeBufferPointer<UInt8> {
        if let last = line.last, last == 0x0D { return UnsafeBufferPointer(rebasing: line.dropLast()) }
        return line
    }
}
