import CSystem
import SuggestSQLiteStore

/// Writes a whole file, for reports.
enum FileOutput {
    /// Writes `text` to `path`, replacing it (through a link, into a device or a pipe: wherever the path leads).
    /// A regular file, or one not there yet, is replaced whole: the text is written beside it and renamed over it,
    /// so that a write that fails part-way (a full disk, a file-size limit) leaves the file as it was, not the first
    /// part of the new one under its name (found by a probe: a page cut at 8 KiB replaced a good one).
    /// - Throws: `CommandError.failure` naming the file when it cannot be written.
    static func write(_ text: String, to path: String) throws(CommandError) {
        func failure() -> CommandError {
            CommandError.failure("cannot write \(path): \(String(cString: strerror(system_errno())))")
        }
        // Where the path leads, so that a link stays a link and its target is what gets replaced.
        let target = realpath(path, nil).map { resolved in
            defer { free(resolved) }
            return String(cString: resolved)
        } ?? path
        var info = stat()
        let exists = stat(target, &info) == 0
        let bytes = Array(text.utf8)
        guard !exists || system_is_regular_file(info.st_mode) != 0 else {
            guard let file = fopen(path, "w") else { throw failure() }
            let written = fwrite(bytes, 1, bytes.count, file)
            guard fclose(file) == 0, written == bytes.count else { throw failure() }
            return
        }
        let temporary = target + ".partial-\(getpid())"
        guard let file = fopen(temporary, "wx") else { throw failure() }
        let written = fwrite(bytes, 1, bytes.count, file)
        let flushed = fflush(file) == 0 && fsync(fileno(file)) == 0
        let closed = fclose(file) == 0
        guard written == bytes.count, flushed, closed else {
            let error = failure()
            unlink(temporary)
            throw error
        }
        // The file's own permissions, kept: a page others could read stays so, one that only its owner could too.
        if exists { chmod(temporary, info.st_mode & 0o7777) }
        guard rename(temporary, target) == 0 else {
            let error = failure()
            unlink(temporary)
            throw error
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
