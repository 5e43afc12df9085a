import CSystem

/// Writes a whole file, for reports.
enum FileOutput {
    /// Writes `text` to `path`, replacing it whole or not at all: the text goes to a file beside it, renamed over it
    /// once complete, so that a failure part-way (a full disk) leaves the old file as it was, not a cut-off page.
    /// - Throws: `CommandError.failure` naming the file when it cannot be written.
    static func write(_ text: String, to path: String) throws(CommandError) {
        let partial = path + ".partial-\(getpid())"
        guard let file = fopen(partial, "w") else {
            throw CommandError.failure("cannot write \(path): \(String(cString: strerror(system_errno())))")
        }
        let bytes = Array(text.utf8)
        let written = fwrite(bytes, 1, bytes.count, file)
        let closed = fclose(file)
        guard written == bytes.count, closed == 0, rename(partial, path) == 0 else {
            let reason = String(cString: strerror(system_errno()))
            unlink(partial)
            throw CommandError.failure("cannot write \(path): \(reason)")
        }
    }

    /// Refuses an output path that names the input file itself (through any link), which writing would destroy:
    /// `eval LOG --html LOG` replaced the log with the page.
    /// - Throws: `CommandError.usage` naming the option.
    static func checkDistinct(output: String, option: String, from input: String) throws(CommandError) {
        var out = stat()
        var source = stat()
        guard stat(output, &out) == 0, stat(input, &source) == 0 else { return }
        if out.st_dev == source.st_dev && out.st_ino == source.st_ino {
            throw CommandError.usage("\(option) \(output) is the input file \(input); give another path for the page")
        }
    }
}
