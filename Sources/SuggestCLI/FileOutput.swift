import CSystem

/// Writes a whole file, for reports.
enum FileOutput {
    /// Writes `text` to `path`, replacing it.
    /// - Throws: `CommandError.failure` naming the file when it cannot be written.
    static func write(_ text: String, to path: String) throws(CommandError) {
        guard let file = fopen(path, "w") else {
            throw CommandError.failure("cannot write \(path): \(String(cString: strerror(system_errno())))")
        }
        let bytes = Array(text.utf8)
        let written = fwrite(bytes, 1, bytes.count, file)
        let closed = fclose(file)
        guard written == bytes.count, closed == 0 else {
            throw CommandError.failure("cannot write \(path): \(String(cString: strerror(system_errno())))")
        }
    }
}
