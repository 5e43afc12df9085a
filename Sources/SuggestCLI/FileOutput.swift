import CSystem
import SuggestCore
import SuggestSQLiteStore

/// Writes a whole file, for reports.
enum FileOutput {
    /// Writes `text` to `path`, replacing it (through a link, into a device or a pipe: wherever the path leads).
    /// A file of this process's user is replaced whole where it can be (`replaceWhole`): a write that fails part-way
    /// (a full disk, a file-size limit) then leaves the file as it was, not the first part of the new one under its
    /// name (a page cut at 8 KiB in place of a good one). Anything else is written in place.
    /// - Throws: `CommandError.failure` naming the file when it cannot be written.
    static func write(_ text: String, to path: String) throws(CommandError) {
        let bytes = Array(text.utf8)
        if try replaceWhole(path, with: bytes) { return }
        guard let file = fopen(path, "w") else { throw failure(path) }
        let written = fwrite(bytes, 1, bytes.count, file)
        guard fclose(file) == 0, written == bytes.count else { throw failure(path) }
    }

    private static func failure(_ path: String, _ code: Int32 = system_errno()) -> CommandError {
        CommandError.failure("cannot write \(path): \(ErrorNumber.describe(code))")
    }

    /// Writes `bytes` to a new file beside the one `path` leads to and renames it over that one, when nothing else
    /// of the file changes so: a regular file of this process's user with one name, its mode and group kept, or no
    /// file yet (made with the mode `fopen` gives). Through a link, the link's file is replaced.
    /// - Returns: `false`, having written nothing, when it cannot be done so (a device, a pipe, another user's file,
    ///   a hard link, a link that leads nowhere, a directory this process may not add a file to): the caller writes
    ///   in place.
    /// - Throws: `CommandError.failure` when the new file cannot be written whole or renamed; it is removed.
    private static func replaceWhole(_ path: String, with bytes: [UInt8]) throws(CommandError) -> Bool {
        guard let resolved = realpath(path, nil) ?? (access(path, F_OK) != 0 ? parentResolved(path) : nil) else {
            return false
        }
        let target = String(cString: resolved)
        free(resolved)
        var info = stat()
        var link = stat()
        // A link that leads nowhere is written through in place, as `fopen` does.
        if lstat(path, &link) == 0, system_is_symbolic_link(link.st_mode) != 0, stat(path, &info) != 0 { return false }
        let exists = stat(target, &info) == 0
        if exists {
            guard system_is_regular_file(info.st_mode) != 0, info.st_uid == geteuid(), info.st_nlink == 1 else {
                return false
            }
            // The file this process's standard output or error goes to (`--html /dev/stdout > page`): replaced,
            // what the command prints next would go to the old file, unlinked.
            for descriptor in Int32(0)...2 {
                var standard = stat()
                if fstat(descriptor, &standard) == 0, standard.st_dev == info.st_dev, standard.st_ino == info.st_ino {
                    return false
                }
            }
        }
        var template = Array((StoreLocation.parent(of: target) + "/.suggest-XXXXXX").utf8CString)
        let descriptor = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard descriptor >= 0 else { return false }
        let temporary = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let mask = umask(0)
        umask(mask)
        let mode = exists ? info.st_mode & 0o7777 : 0o666 & ~mask
        guard fchmod(descriptor, mode) == 0, !exists || fchown(descriptor, uid_t.max, info.st_gid) == 0 else {
            close(descriptor)
            unlink(temporary)
            return false
        }
        // The first failure is the one said (its `errno`); the new file goes whatever failed.
        var problem: CommandError?
        let code = FileDescriptorWriting.writeAll(descriptor, bytes)
        if code != 0 { problem = failure(path, code) }
        if problem == nil && fsync(descriptor) != 0 { problem = failure(path) }
        if close(descriptor) != 0 && problem == nil { problem = failure(path) }
        if problem == nil && rename(temporary, target) != 0 { problem = failure(path) }
        if let problem {
            unlink(temporary)
            throw problem
        }
        return true
    }

    /// The resolved form of a path not there yet: its directory resolved, its name kept.
    private static func parentResolved(_ path: String) -> UnsafeMutablePointer<CChar>? {
        guard let directory = realpath(StoreLocation.parent(of: path), nil) else { return nil }
        defer { free(directory) }
        let name = path.split(separator: "/", omittingEmptySubsequences: false).last.map(String.init) ?? path
        return strdup(String(cString: directory) + "/" + name)
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
    /// - Throws: `CommandError.failure` naming the option, as `write` would; `CommandError.usage` for an empty path.
    static func checkWritable(output path: String, option: String) throws(CommandError) {
        // "cannot write : No such file or directory", and only after the work it was to hold.
        guard !path.isEmpty else { throw CommandError.usage("\(option) names no file; give a file path") }
        var info = stat()
        if stat(path, &info) == 0 {
            if system_is_directory(info.st_mode) != 0 {
                throw CommandError.failure("cannot write \(option) \(path): it is a directory; give a file path")
            }
            guard access(path, W_OK) == 0 else {
                throw CommandError.failure(
                    "cannot write \(option) \(path): \(ErrorNumber.describeLast())")
            }
            return
        }
        let directory = StoreLocation.parent(of: path)
        guard access(directory, W_OK | X_OK) == 0 else {
            throw CommandError.failure(
                "cannot write \(option) \(path): its directory \(directory): \(ErrorNumber.describeLast())")
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
