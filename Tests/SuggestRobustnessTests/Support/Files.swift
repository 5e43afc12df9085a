import SuggestTestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// The size of a file in bytes; 0 when it does not exist.
func fileSize(_ path: String) -> Int {
    var info = stat()
    return stat(path, &info) == 0 ? Int(info.st_size) : 0
}

/// Whether `path` exists (as anything).
func fileExists(_ path: String) -> Bool {
    var info = stat()
    return lstat(path, &info) == 0
}

/// Every regular file directly in `directory`, name and raw bytes, as a reader of the disk would see them.
func filesIn(_ directory: String) throws(HarnessError) -> [(name: String, bytes: [UInt8])] {
    var files: [(name: String, bytes: [UInt8])] = []
    for name in directoryEntries(directory) {
        var info = stat()
        guard lstat(directory + "/" + name, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { continue }
        files.append((name, try readFile(directory + "/" + name)))
    }
    return files
}

/// Whether `needle` occurs anywhere in `haystack` (`memchr` for the first byte, then `memcmp`).
func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
    guard let first = needle.first else { return true }
    return haystack.withUnsafeBufferPointer { hay in
        needle.withUnsafeBufferPointer { part in
            guard let base = hay.baseAddress, let partBase = part.baseAddress, hay.count >= part.count else {
                return false
            }
            var start = 0
            let last = hay.count - part.count
            while start <= last {
                guard let found = memchr(base + start, Int32(first), last - start + 1) else { return false }
                let offset = UnsafeRawPointer(base).distance(to: UnsafeRawPointer(found))
                if memcmp(base + offset, partBase, part.count) == 0 { return true }
                start = offset + 1
            }
            return false
        }
    }
}

/// Runs a shell-free helper program (mount, chattr, setpriv) and returns whether it succeeded, with its output.
@discardableResult
func runTool(_ executable: String, _ arguments: [String], scratch: String) -> (ok: Bool, output: String) {
    guard access(executable, X_OK) == 0 else { return (false, "\(executable) is not installed") }
    guard
        let child = try? ChildProcess(
            executable: executable, arguments: arguments, environment: ["PATH": "/usr/sbin:/usr/bin:/sbin:/bin"],
            inputPath: nil, scratch: scratch)
    else { return (false, "cannot start \(executable)") }
    let outcome = child.wait(timeout: 30)
    return (outcome.status == 0, outcome.output + outcome.error)
}
