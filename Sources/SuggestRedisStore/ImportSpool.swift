import CSystem
import SuggestCore

/// A temporary file of lines, written once and read back in order: the valid lines of an import between its two
/// passes. Removed when the value goes away.
final class Spool {
    private let descriptor: Int32
    private var buffer: [UInt8] = []
    private var reading: LineStream?

    init() throws(StoreError) {
        // $TMPDIR first, as every other program's temporary files: /tmp may be a small tmpfs.
        let directory = getenv("TMPDIR").map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        var template = Array((directory + "/suggest-import-XXXXXX").utf8CString)
        let descriptor = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard descriptor >= 0 else {
            throw StoreError(
                .failed,
                "cannot create a temporary file for the import in \(directory) (TMPDIR): "
                    + ErrorNumber.describeLast())
        }
        template.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) }
        self.descriptor = descriptor
    }

    deinit { close(descriptor) }

    func append(_ line: [UInt8]) throws(StoreError) {
        buffer += line
        buffer.append(0x0A)
        if buffer.count >= 1 << 20 { try flush() }
    }

    private func flush() throws(StoreError) {
        let code = FileDescriptorWriting.writeAll(descriptor, buffer)
        guard code == 0 else {
            throw StoreError(
                .diskFull, "cannot write the import's temporary file: \(ErrorNumber.describe(code))")
        }
        buffer.removeAll(keepingCapacity: true)
    }

    func rewind() throws(StoreError) {
        try flush()
        guard lseek(descriptor, 0, SEEK_SET) == 0 else {
            throw StoreError(.failed, "cannot read back the import's temporary file")
        }
        reading = LineStream(descriptor: descriptor, closesDescriptor: false, carriageReturns: .keep)
    }

    func next() throws(StoreError) -> [UInt8]? {
        do {
            return try reading?.nextLine().map(Array.init)
        } catch {
            throw StoreError(.failed, "cannot read back the import's temporary file: \(error.reason)")
        }
    }
}
