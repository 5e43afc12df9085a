#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif
/// Reads a source in batches of whole lines, for `Evaluator.evaluatePipelined`.
final class LineBatchReader {
    /// Roughly how many bytes one batch holds.
    static let batchSize = 4 << 20

    private let source: LineReader.Source
    private var descriptor: Int32 = -1
    private var ownsDescriptor = false
    private var carried: [UInt8] = []
    private var nextLine = 1
    private var finished = false

    init(_ source: LineReader.Source) throws {
        self.source = source
        switch source {
        case .file(let path):
            descriptor = open(path, O_RDONLY)
            guard descriptor >= 0 else { throw FileError.current(path: path, operation: "open") }
            ownsDescriptor = true
        case .fileDescriptor(let given, _):
            descriptor = given
        case .text(let text):
            carried = Array(text.utf8)
        }
    }

    deinit {
        if ownsDescriptor { close(descriptor) }
    }

    /// The next batch, or `nil` at the end.
    /// - Throws: `FileError` when the source cannot be read.
    func next() throws -> LineBatch? {
        guard !finished else { return nil }
        var bytes = carried
        carried = []
        var atEnd = descriptor < 0
        var chunk = [UInt8](repeating: 0, count: LineReader.chunkSize)
        // Read until the batch is big enough and holds a line break, or the input ends.
        while !atEnd, bytes.count < Self.batchSize || !bytes.contains(0x0A) {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw FileError.current(path: source.name, operation: "read")
            }
            if count == 0 {
                atEnd = true
            } else {
                bytes.append(contentsOf: chunk[0..<count])
            }
        }
        if atEnd {
            finished = true
        } else if let lastBreak = bytes.lastIndex(of: 0x0A) {
            carried = Array(bytes[(lastBreak + 1)...])
            bytes.removeSubrange((lastBreak + 1)...)
        }
        guard !bytes.isEmpty else { return nil }
        let batch = LineBatch(bytes: bytes, firstLine: nextLine)
        nextLine += bytes.reduce(0) { $0 + ($1 == 0x0A ? 1 : 0) }
        return batch
    }
}
