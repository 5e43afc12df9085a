#if canImport(Glibc)
    import Glibc
#endif

/// A failure of the test harness itself (a file it cannot write, a process it cannot start), as opposed to a
/// failed expectation about `suggest`.
struct HarnessError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// A fresh directory under `/tmp`, removed with everything in it when the value goes away.
final class TemporaryDirectory {
    let path: String

    init(_ label: String = "robust") throws(HarnessError) {
        var template = Array("/tmp/suggest-\(label)-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { buffer in buffer.baseAddress.flatMap { mkdtemp($0) } }
        guard let made else { throw HarnessError("mkdtemp failed: \(String(cString: strerror(errno)))") }
        path = String(cString: made)
    }

    deinit { removeTree(path) }

    /// A path inside the directory.
    func callAsFunction(_ name: String) -> String { path + "/" + name }
}

/// Removes `path` and, if it is a directory, everything below it (like `rm -rf`, without following links).
func removeTree(_ path: String) {
    var info = stat()
    guard lstat(path, &info) == 0 else { return }
    if info.st_mode & S_IFMT == S_IFDIR {
        for name in directoryEntries(path) { removeTree(path + "/" + name) }
        rmdir(path)
    } else {
        unlink(path)
    }
}

/// The names in a directory, without `.` and `..`, sorted.
func directoryEntries(_ path: String) -> [String] {
    guard let directory = opendir(path) else { return [] }
    defer { closedir(directory) }
    var names: [String] = []
    while let entry = readdir(directory) {
        let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
            String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
        }
        if name != "." && name != ".." { names.append(name) }
    }
    return names.sorted()
}

/// The whole content of a file, as raw bytes.
func readFile(_ path: String) throws(HarnessError) -> [UInt8] {
    let descriptor = open(path, O_RDONLY)
    guard descriptor >= 0 else { throw HarnessError("cannot read \(path): \(String(cString: strerror(errno)))") }
    defer { close(descriptor) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 1 << 16)
    while true {
        let count = chunk.withUnsafeMutableBytes { raw in read(descriptor, raw.baseAddress, raw.count) }
        if count < 0 && errno == EINTR { continue }
        guard count > 0 else { break }
        bytes += chunk[0..<count]
    }
    return bytes
}

/// Writes `bytes` to `path`, replacing the file.
func writeFile(_ path: String, _ bytes: [UInt8]) throws(HarnessError) {
    let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    guard descriptor >= 0 else { throw HarnessError("cannot write \(path): \(String(cString: strerror(errno)))") }
    defer { close(descriptor) }
    var offset = 0
    while offset < bytes.count {
        let written = bytes.withUnsafeBytes { raw in
            raw.baseAddress.map { write(descriptor, $0 + offset, raw.count - offset) } ?? 0
        }
        if written < 0 && errno == EINTR { continue }
        guard written > 0 else { throw HarnessError("cannot write \(path): \(String(cString: strerror(errno)))") }
        offset += written
    }
}

func writeFile(_ path: String, _ text: String) throws(HarnessError) { try writeFile(path, Array(text.utf8)) }

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
