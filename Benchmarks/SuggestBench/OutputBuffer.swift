#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A byte buffer written to a file descriptor in large chunks: the generator's output path.
///
/// Appends go through an unsafe pointer with no bounds check per byte; `reserve(_:)` before each record
/// guarantees the room (a record is far below the slack kept at the end).
final class OutputBuffer {
    struct WriteError: Error, CustomStringConvertible {
        var description: String
    }

    private let descriptor: Int32
    private let capacity: Int
    private let base: UnsafeMutablePointer<UInt8>
    private(set) var count = 0
    /// Bytes handed to the descriptor so far.
    private(set) var written = 0

    init(descriptor: Int32, capacity: Int = 1 << 22) {
        self.descriptor = descriptor
        self.capacity = capacity
        base = .allocate(capacity: capacity)
    }

    deinit { base.deallocate() }

    /// Flushes first when fewer than `bytes` are free.
    @inline(__always)
    func reserve(_ bytes: Int) throws(WriteError) {
        if count + bytes > capacity { try flush() }
    }

    @inline(__always)
    func append(_ byte: UInt8) {
        base[count] = byte
        count += 1
    }

    /// Appends ASCII text from a static string (member names and fixed pieces).
    @inline(__always)
    func append(_ text: StaticString) {
        let length = text.utf8CodeUnitCount
        (base + count).update(from: text.utf8Start, count: length)
        count += length
    }

    func append(_ text: String) {
        var text = text
        text.withUTF8 { bytes in
            guard let source = bytes.baseAddress else { return }
            (base + count).update(from: source, count: bytes.count)
            count += bytes.count
        }
    }

    /// Appends bytes kept in an array (cached names).
    @inline(__always)
    func append(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let source = bytes.baseAddress else { return }
        (base + count).update(from: source, count: bytes.count)
        count += bytes.count
    }

    /// A non-negative decimal integer.
    @inline(__always)
    func append(decimal value: Int) {
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 24 bytes of scratch, enough for any Int
        var remaining = UInt(value.magnitude)
        var length = 0
        withUnsafeMutableBytes(of: &digits) { scratch in
            repeat {
                scratch[23 - length] = UInt8(48 + remaining % 10)
                remaining /= 10
                length += 1
            } while remaining > 0
            for offset in 0..<length { base[count + offset] = scratch[24 - length + offset] }
        }
        count += length
    }

    /// `width` digits, zero-padded.
    @inline(__always)
    func append(padded value: Int, width: Int) {
        var remaining = value
        for offset in stride(from: width - 1, through: 0, by: -1) {
            base[count + offset] = UInt8(48 + remaining % 10)
            remaining /= 10
        }
        count += width
    }

    /// `width` upper-case hexadecimal digits of the low bits of `value`.
    @inline(__always)
    func append(hex value: UInt64, width: Int) {
        var remaining = value
        for offset in stride(from: width - 1, through: 0, by: -1) {
            let nibble = UInt8(remaining & 15)
            base[count + offset] = nibble < 10 ? 48 + nibble : 55 + nibble
            remaining >>= 4
        }
        count += width
    }

    func flush() throws(WriteError) {
        var offset = 0
        while offset < count {
            let result = write(descriptor, base + offset, count - offset)
            if result < 0 {
                if errno == EINTR { continue }
                throw WriteError(description: "cannot write the output: \(String(cString: strerror(errno)))")
            }
            offset += result
        }
        written += count
        count = 0
    }
}
