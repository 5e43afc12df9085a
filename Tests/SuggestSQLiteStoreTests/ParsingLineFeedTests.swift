import Dispatch
import SuggestCore
import Testing

@testable import SuggestSQLiteStore

/// The feed that parses an import's lines on a second thread (`ParsingLineFeed`).
@Suite struct ParsingLineFeedTests {
    /// Lines of `{}` that stop coming after `gateAfter` of them until `open()`: a slow client's body, or a parser
    /// that has not got that far.
    final class GatedLines: JSONLineSource, @unchecked Sendable {
        private let count: Int
        private let gateAfter: Int
        private let gate = DispatchSemaphore(value: 0)
        private(set) var lineNumber = 0
        var bytesRead: Int { lineNumber * 3 }
        let totalBytes: Int? = nil
        let lineWasTooLong = false
        let maximumLineLength = 1 << 20

        init(count: Int, gateAfter: Int) {
            self.count = count
            self.gateAfter = gateAfter
        }

        func open() { gate.signal() }

        func nextLine(_ body: (UnsafeBufferPointer<UInt8>) -> Void) throws -> Bool {
            guard lineNumber < count else { return false }
            if lineNumber == gateAfter { gate.wait() }
            lineNumber += 1
            Array("{}".utf8).withUnsafeBufferPointer(body)
            return true
        }
    }

    /// The store waits for the feed's first batch before it writes anything, and a server's writer starts a feed
    /// for each request of a group in turn: the first batch is a few lines, not the 2,048 of the later ones, which
    /// the writer waited for a core to parse at the start of every request (a twelfth of its time at bodies of
    /// 3,000). Every line still comes, once, in order.
    @Test func theFirstLinesComeBeforeABatchIsFull() throws {
        let source = GatedLines(count: 3_000, gateAfter: 100)
        let feed = ParsingLineFeed(source: source) { _ in .failure(InputError(field: nil, message: "not parsed")) }
        // Opened in 10 s whatever happens, so that a feed that waits for a full batch fails the test, not hangs it.
        DispatchQueue.global().asyncAfter(deadline: .now() + 10) { source.open() }
        let started = ContinuousClock.now
        let first = try #require(try feed.next())
        let waited = ContinuousClock.now - started
        #expect(first.line == 1)
        #expect(waited < .seconds(5), "the first line waited \(waited) for lines the source had not given")
        source.open()
        var lines = [first.line]
        while let line = try feed.next() { lines.append(line.line) }
        #expect(lines == Array(1...3_000))
    }
}
