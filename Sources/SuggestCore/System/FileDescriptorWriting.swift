import CSystem

/// `write(2)` until every byte is written: the one loop behind every file the package writes whole (an exported
/// file, a command's output, a report, an import's temporary file).
public enum FileDescriptorWriting {
    /// Writes all of `bytes` to `descriptor`, retrying after an interruption (`EINTR`) and after a short write.
    /// - Returns: 0 once every byte is written, else the `errno` of the write that failed; a write that took no byte
    ///   (which `write(2)` does not do for a regular file, a pipe or a socket) fails with `EIO`, where a loop that
    ///   added the 0 and went on would never end.
    public static func writeAll(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer) -> Int32 {
        guard let base = bytes.baseAddress else { return 0 }
        var offset = 0
        while offset < bytes.count {
            let written = write(descriptor, base + offset, bytes.count - offset)
            if written > 0 {
                offset += written
                continue
            }
            if written < 0 {
                let code = system_errno()
                if code == EINTR { continue }
                return code
            }
            return EIO
        }
        return 0
    }

    /// `writeAll(_:_:)` of an array's bytes.
    public static func writeAll(_ descriptor: Int32, _ bytes: [UInt8]) -> Int32 {
        bytes.withUnsafeBytes { writeAll(descriptor, $0) }
    }
}
