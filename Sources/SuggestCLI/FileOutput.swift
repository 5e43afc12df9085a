import CSystem
import SuggestSQLiteStore

/// Writes a whole file, for reports.
enum FileOutput {
    /// Writes `text` to `path`, replacing it (through a link, into a device or a pipe: wherever the path leads).
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

    /// Refuses an output path that names the input itself (through any link; `-` for standard input), which
    /// writing would destroy: `eval LOG --html LOG` replaced the log with the page.
    /// - Throws: `CommandError.usage` naming the option.
    static func checkDistinct(output: String, option: String, from input: String) throws(CommandError) {
        let same = input == "-" ? isStandardInput(output) : isSameFile(output, input)
        if same {
            throw CommandError.usage(
                "\(option) \(output) is the input \(input == "-" ? "(standard input)" : "file \(input)"); give another path")
        }
    }

    /// Refuses, before any work, an output path that `write(_:to:)` could not write: a directory, a file or a
    /// directory without write permission, a directory that does not exist. (`eval --html /tmp` replayed the
    /// whole history, then failed and printed no figures.) Whatever changes afterwards, `write` still says so.
    /// - Throws: `CommandError.failure` naming the option, as `write` would.
    static func checkWritable(output path: String, option: String) throws(CommandError) {
        var info = stat()
        if stat(path, &info) == 0 {
            if system_is_directory(info.st_mode) != 0 {
                throw CommandError.failure("cannot write \(option) \(path): it is a directory; give a file path")
            }
            guard access(path, W_OK) == 0 else {
                throw CommandError.failure(
                    "cannot write \(option) \(path): \(String(cString: strerror(system_errno())))")
            }
            return
        }
        let directory = StoreLocation.parent(of: path)
        guard access(directory, W_OK | X_OK) == 0 else {
            throw CommandError.failure(
                "cannot write \(option) \(path): its directory \(directory): \(String(cString: strerror(system_errno())))")
        }
    }

    /// Whether two paths lead to one file.
    static func isSameFile(_ first: String, _ second: String) -> Bool {
        var one = stat()
        var other = stat()
        guard stat(first, &one) == 0, stat(second, &other) == 0 else { return false }
        return one.st_dev == other.st_dev && one.st_ino == other.st_ino
    }

    /// Whether `path` leads to the file standard input reads (`/dev/stdin`, a link to it, the file redirected in):
    /// `/dev/stdin` leads there too.
    static func isStandardInput(_ path: String) -> Bool { isSameFile(path, "/dev/stdin") }
}
