import SuggestTestSupport
import Testing

@testable import SuggestCore

#if canImport(Glibc)
    import Glibc
#endif

/// The one "write every byte" loop: what it wrote, and the error it says when a write fails.
@Suite struct FileDescriptorWritingTests {
    @Test func everyByteIsWrittenAndAFailureIsItsErrno() throws {
        let directory = try TemporaryDirectory("write-all")
        let path = directory("file")
        let bytes = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        try #require(descriptor >= 0)
        #expect(FileDescriptorWriting.writeAll(descriptor, bytes) == 0)
        #expect(FileDescriptorWriting.writeAll(descriptor, []) == 0)
        close(descriptor)
        #expect(try readFile(path) == bytes)
        // No descriptor (not a closed one: another test may have opened its number since), and a device that is
        // always full.
        #expect(FileDescriptorWriting.writeAll(-1, bytes) == EBADF)
        let full = open("/dev/full", O_WRONLY)
        try #require(full >= 0)
        defer { close(full) }
        #expect(FileDescriptorWriting.writeAll(full, bytes) == ENOSPC)
        #expect(ErrorNumber.describe(ENOSPC) == "No space left on device")
    }

    /// `import` called a file that failed to open with EIO a usage error (64) and `eval` a failure (1): each door
    /// had a list of its own. One rule now: what names nothing readable is the user's to correct, the rest the
    /// system's.
    @Test func aFileThatCannotBeOpenedIsBlamedOnThePathOnlyWhenItNamesNothingReadable() {
        for code in [ENOENT, EACCES, EPERM, ENOTDIR, ELOOP, ENAMETOOLONG, ENXIO, ENODEV] {
            #expect(ErrorNumber.blamesThePath(code), "\(ErrorNumber.describe(code))")
        }
        for code in [EIO, EMFILE, ENFILE, ENOMEM, EINTR, EOVERFLOW] {
            #expect(!ErrorNumber.blamesThePath(code), "\(ErrorNumber.describe(code))")
        }
    }
}
