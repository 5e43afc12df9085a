import CSystem

/// The few file-system calls the module makes, without Foundation.
enum FileSystem {
    /// Whether `path` names a file this process may read.
    static func isReadable(_ path: String) -> Bool { access(path, R_OK) == 0 }

    /// `write(2)` of the whole buffer, retried after interruptions and short writes.
    /// - Returns: `nil` on success, else the error for `errno`.
    static func writeAll(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer, name: String) -> FileError? {
        guard let base = bytes.baseAddress else { return nil }
        var written = 0
        while written < bytes.count {
            let count = write(descriptor, base + written, bytes.count - written)
            if count < 0 {
                if system_errno() == EINTR { continue }
                return FileError.current(path: name, operation: "write")
            }
            written += count
        }
        return nil
    }
}
