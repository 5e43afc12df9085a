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
}
