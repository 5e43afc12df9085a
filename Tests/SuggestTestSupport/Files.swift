#if canImport(Glibc)
    import Glibc
#endif

/// A fresh directory under `/tmp` (`/tmp/suggest-LABEL-XXXXXX`, made by `mkdtemp`), removed with everything in it
/// when the value goes away.
public final class TemporaryDirectory {
    public let path: String

    public init(_ label: String = "test") throws(HarnessError) {
        var template = Array("/tmp/suggest-\(label)-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { buffer in buffer.baseAddress.flatMap { mkdtemp($0) } }
        guard let made else { throw HarnessError("mkdtemp failed: \(String(cString: strerror(errno)))") }
        path = String(cString: made)
    }

    deinit { removeTree(path) }

    /// A path inside the directory.
    public func callAsFunction(_ name: String) -> String { path + "/" + name }
}

/// Removes `path` and, if it is a directory, everything below it (like `rm -rf`, without following links).
public func removeTree(_ path: String) {
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
public func directoryEntries(_ path: String) -> [String] {
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
public func readFile(_ path: String) throws(HarnessError) -> [UInt8] {
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
public func writeFile(_ path: String, _ bytes: [UInt8]) throws(HarnessError) {
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

public func writeFile(_ path: String, _ text: String) throws(HarnessError) { try writeFile(path, Array(text.utf8)) }
