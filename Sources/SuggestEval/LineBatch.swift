#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif
import SuggestCore

/// A run of whole lines read ahead, so that another core can parse them while the replay goes on.
struct LineBatch: Sendable {
    /// The bytes of the lines, each ending in `\n` except perhaps the last line of the input.
    var bytes: [UInt8]
    /// The 1-based number of the first line.
    var firstLine: Int

    /// The donations of the batch, blank lines skipped.
    /// - Throws: `InputError` for the first line that is not a valid donation, with its line number.
    func interactions() throws(InputError) -> [Interaction] {
        var interactions: [Interaction] = []
        interactions.reserveCapacity(bytes.count / 200)
        let result: Result<Void, InputError> = bytes.withUnsafeBufferPointer { buffer in
            var start = 0
            var line = firstLine
            while start < buffer.count {
                var end = start
                while end < buffer.count, buffer[end] != 0x0A { end += 1 }
                var stop = end
                if stop > start, buffer[stop - 1] == 0x0D { stop -= 1 }
                do {
                    if let interaction = try Evaluator.interaction(
                        jsonLine: UnsafeBufferPointer(rebasing: buffer[start..<stop]), line: line)
                    {
                        interactions.append(interaction)
                    }
                } catch let error as InputError {
                    return .failure(error)
                } catch {
                    return .failure(InputError(field: nil, message: "\(error)", line: line))
                }
                start = end + 1
                line += 1
            }
            return .success(())
        }
        try result.get()
        return interactions
    }
}

/// Reads a source in batches of whole lines, for `Evaluator.evaluateConcurrently`.
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
