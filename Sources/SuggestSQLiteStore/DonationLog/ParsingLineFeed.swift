import Dispatch
import SuggestCore

/// The lines of an import, read and parsed on a second thread a batch at a time, handed to the store one by one.
///
/// Parsing is a fifth of an import's work; on its own core it overlaps with SQLite's. The order of lines, their
/// numbers and every error are as a single thread would give them: the store still stops at the first invalid
/// line, and the reader stops soon after it, since the store cancels the feed by dropping it.
final class ParsingLineFeed {
    /// One line: its number and the donation on it, or why there is none.
    struct ParsedLine: Sendable {
        var line: Int
        var donation: Result<PreparedDonation, InputError>
    }

    private struct Batch: Sendable {
        var lines: [ParsedLine]
        /// How far the reader had read when it finished the batch, for progress.
        var bytesRead: Int
    }

    /// A batch ends at this many lines, or at `batchBytes` of them: the reader runs at most `pipe`'s capacity of
    /// batches ahead, and a donation parsed takes a few times its line's bytes, so a file of lines of megabytes
    /// (a thousand people with long names each) must not be read thousands of lines ahead.
    private static let batchSize = 2048
    private static let batchBytes = 1 << 20
    /// The first batch is small, and each next one four times larger up to `batchSize`: the store waits for the
    /// first batch before it writes anything, and a server's writer starts a feed for every request of a group,
    /// one after the other. With 2,048 lines first, it waited for a core to parse them at each request's start
    /// (a twelfth of its time at bodies of 3,000).
    private static let firstBatchSize = 32
    private let pipe = BatchPipe<Batch>(capacity: 4)
    /// The batch being handed out, last line first: `popLast()` moves a line out, where reading it by index would
    /// copy it (a retain and a release of each of its strings and arrays, a tenth of the store's side of an import).
    private var current: [ParsedLine] = []
    private var finished = false
    /// Bytes read from the source by the end of the batch being handed out.
    private(set) var bytesRead = 0

    /// Starts reading `source` on another thread; `source` must not be used elsewhere from now on.
    /// - Parameter parse: one non-blank line's bytes to a donation.
    init(
        source: any JSONLineSource,
        parse: @escaping @Sendable (UnsafeBufferPointer<UInt8>) -> Result<PreparedDonation, InputError>
    ) {
        // The reader thread is the only one that touches `source` from here on.
        nonisolated(unsafe) let source = source
        let pipe = self.pipe
        DispatchQueue.global().async {
            var lines: [ParsedLine] = []
            lines.reserveCapacity(Self.batchSize)
            var bytesInBatch = 0
            var batchLimit = Self.firstBatchSize
            var more = true
            while more {
                var overlong = false
                do {
                    more = try source.nextLine { bytes in
                        if source.lineWasTooLong {
                            overlong = true
                            return
                        }
                        if LineStream.isBlank(bytes) { return }  // blank lines are allowed
                        lines.append(ParsedLine(line: source.lineNumber, donation: parse(bytes)))
                        bytesInBatch += bytes.count
                    }
                } catch {
                    // The lines before the failed read first, in order; then the error, which ends the import.
                    lines.reverse()
                    if !lines.isEmpty, !pipe.put(.success(Batch(lines: lines, bytesRead: source.bytesRead))) { return }
                    _ = pipe.put(.failure(error))
                    return
                }
                if overlong {
                    // Not a line `--skip-invalid` could skip: the stream stops there rather than read an endless
                    // line to its end. The lines before it first, so that an earlier invalid line is the error.
                    lines.reverse()
                    if !lines.isEmpty, !pipe.put(.success(Batch(lines: lines, bytesRead: source.bytesRead))) { return }
                    let message =
                        "the line is longer than \(source.maximumLineLength >> 20) MiB (a donation is a few KB); "
                        + "nothing was imported"
                    _ = pipe.put(.failure(InputError(field: nil, message: message, line: source.lineNumber)))
                    return
                }
                if lines.count >= batchLimit || bytesInBatch >= Self.batchBytes || (!more && !lines.isEmpty) {
                    lines.reverse()
                    guard pipe.put(.success(Batch(lines: lines, bytesRead: source.bytesRead))) else { return }
                    lines.removeAll(keepingCapacity: true)
                    bytesInBatch = 0
                    batchLimit = min(batchLimit * 4, Self.batchSize)
                }
            }
            _ = pipe.put(nil)
        }
    }

    deinit { pipe.cancel() }

    /// The next line in file order, or `nil` after the last one.
    func next() throws -> ParsedLine? {
        while current.isEmpty {
            guard !finished, let batch = try pipe.take()?.get() else {
                finished = true
                return nil
            }
            current = batch.lines
            bytesRead = batch.bytesRead
        }
        return current.popLast()
    }
}
