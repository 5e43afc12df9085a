import CSystem
import SuggestCore

/// The few file-system calls the module makes, without Foundation.
enum FileSystem {
    /// Whether `path` names a file this process may read.
    static func isReadable(_ path: String) -> Bool { access(path, R_OK) == 0 }

    /// `write(2)` of the whole buffer (`FileDescriptorWriting.writeAll`).
    /// - Returns: `nil` on success, else the error of the write that failed.
    static func writeAll(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer, name: String) -> FileError? {
        let code = FileDescriptorWriting.writeAll(descriptor, bytes)
        guard code != 0 else { return nil }
        return FileError(path: name, operation: "write", reason: ErrorNumber.describe(code), errorNumber: code)
    }
}
