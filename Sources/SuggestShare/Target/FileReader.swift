import CSystem
import SuggestCore

/// Reads a whole file with the C library, so that the module needs no Foundation.
enum FileReader {
    /// Info.plists are a few kilobytes; anything this large is not one.
    static let maximumBytes = 16 << 20

    /// Why a file could not be read, in words ("no such file or directory").
    struct Failure: Error {
        var reason: String
    }

    /// The bytes of the file at `path`.
    /// - Throws: `Failure` when the file cannot be opened or read, is a directory, or exceeds `maximumBytes`.
    /// - Complexity: O(n) in the size of the file.
    static func read(_ path: String) throws(Failure) -> [UInt8] {
        let descriptor = system_open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw Failure(reason: describe(system_errno())) }
        defer { close(descriptor) }
        var result: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { raw in readSome(descriptor, raw.baseAddress, raw.count) }
            if count < 0 {
                let code = system_errno()
                if code == EINTR { continue }
                throw Failure(reason: describe(code))
            }
            if count == 0 { return result }
            result.append(contentsOf: buffer[0..<count])
            guard result.count <= maximumBytes else {
                throw Failure(reason: "it is larger than \(maximumBytes >> 20) MiB, too large for an Info.plist")
            }
        }
    }

    private static func describe(_ code: Int32) -> String {
        switch code {
        case ENOENT: return "no such file or directory"
        case EACCES: return "permission denied"
        case EISDIR: return "it is a directory"
        default: return ErrorNumber.describe(code).lowercased()
        }
    }
}

/// The C library's `read(2)`, under a name that `FileReader.read(_:)` does not shadow.
private func readSome(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
    read(descriptor, buffer, count)
}
