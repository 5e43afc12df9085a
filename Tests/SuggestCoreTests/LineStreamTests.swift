import SuggestTestSupport
import Testing

@testable import SuggestCore

#if canImport(Glibc)
    import Glibc
#endif

/// The one line reader: its three ways with `\r`, its limit, its batches and its read errors.
@Suite struct LineStreamTests {
    /// Every line of `stream` with its number and whether it was cut.
    static func lines(_ stream: LineStream) throws -> [(text: String, number: Int, cut: Bool)] {
        var lines: [(String, Int, Bool)] = []
        while let line = try stream.nextLine() {
            lines.append((String(decoding: line, as: UTF8.self), stream.lineNumber, stream.lineWasTooLong))
        }
        #expect(try stream.nextLine() == nil)
        return lines
    }

    /// A stream reading `text` from a file in reads of `chunkSize` bytes.
    static func file(
        _ text: String, in directory: TemporaryDirectory, chunkSize: Int, maximumLineLength: Int? = nil,
        carriageReturns: LineStream.CarriageReturns = .drop
    ) throws -> LineStream {
        try writeFile(directory("input"), Array(text.utf8))
        return try LineStream(
            path: directory("input"), chunkSize: chunkSize, maximumLineLength: maximumLineLength,
            carriageReturns: carriageReturns)
    }

    @Test(arguments: [
        (LineStream.CarriageReturns.keep, ["a\r", "b", "\r", "", "c\r"]),
        (.dropBeforeNewline, ["a", "b", "", "", "c\r"]),
        (.drop, ["a", "b", "", "", "c"]),
    ])
    func carriageReturns(policy: LineStream.CarriageReturns, expected: [String]) throws {
        let text = "a\r\nb\n\r\n\nc\r"
        let directory = try TemporaryDirectory("lines")
        for chunkSize in [1, 2, 3, 1 << 20] {
            let read = try Self.lines(Self.file(text, in: directory, chunkSize: chunkSize, carriageReturns: policy))
            #expect(read.map(\.text) == expected)
            #expect(read.map(\.number) == [1, 2, 3, 4, 5])
        }
        let inMemory = try Self.lines(LineStream(bytes: Array(text.utf8), carriageReturns: policy))
        #expect(inMemory.map(\.text) == expected)
        let stream = try Self.file(text, in: directory, chunkSize: 2, carriageReturns: policy)
        var batched: [String] = []
        while let batch = try stream.nextBatch(minimumBytes: 1) {
            batch.forEachLine { line, _ in batched.append(String(decoding: line, as: UTF8.self)) }
        }
        #expect(batched == expected)
    }

    @Test func emptyInputHasNoLinesAndALastLineNeedsNoBreak() throws {
        #expect(try Self.lines(LineStream(bytes: [])).isEmpty)
        #expect(try Self.lines(LineStream(bytes: Array("\n".utf8))).map(\.text) == [""])
        let directory = try TemporaryDirectory("lines")
        #expect(try Self.lines(Self.file("", in: directory, chunkSize: 4)).isEmpty)
        let stream = try Self.file("one\ntwo", in: directory, chunkSize: 2)
        #expect(try Self.lines(stream).map(\.text) == ["one", "two"])
        #expect(stream.bytesRead == 7 && stream.totalBytes == 7)
    }

    @Test func aLineOverTheLimitIsHandedOverEmptyAndTheNextOneWhole() throws {
        let long = String(repeating: "x", count: 40)
        let text = "short\n\(long)\r\nafter\n\(long)"
        let directory = try TemporaryDirectory("lines")
        let read = try Self.lines(Self.file(text, in: directory, chunkSize: 4, maximumLineLength: 10))
        #expect(read.map(\.text) == ["short", "", "after", ""])
        #expect(read.map(\.cut) == [false, true, false, true])
        #expect(read.map(\.number) == [1, 2, 3, 4])
        // Bytes in memory are all there from the start: only a last line without a break is ever over the limit.
        let inMemory = try Self.lines(LineStream(bytes: Array(text.utf8), maximumLineLength: 10))
        #expect(inMemory.map(\.text) == ["short", long, "after", ""])
        #expect(inMemory.map(\.cut) == [false, false, false, true])
    }

    @Test func batchesHoldWholeLinesNumberedAsTheLinesAre() throws {
        var random = SeededRandom(seed: 11)
        var text = ""
        for _ in 0..<300 {
            text += String(repeating: "y", count: Int.random(in: 0..<40, using: &random))
            text += Bool.random(using: &random) ? "\r\n" : "\n"
        }
        text += "tail\r"
        let directory = try TemporaryDirectory("lines")
        let expected = try Self.lines(Self.file(text, in: directory, chunkSize: 1 << 20)).map { ($0.text, $0.number) }
        for (chunkSize, minimumBytes) in [(1, 1), (7, 50), (64, 1_000), (1 << 20, 1 << 22)] {
            let stream = try Self.file(text, in: directory, chunkSize: chunkSize)
            var batched: [(String, Int)] = []
            var bytes = 0
            while let batch = try stream.nextBatch(minimumBytes: minimumBytes) {
                #expect(batch.bytes.last == 0x0A || batch.bytes.last == 0x0D)
                bytes += batch.bytes.count
                batch.forEachLine { line, number in batched.append((String(decoding: line, as: UTF8.self), number)) }
            }
            #expect(batched.map(\.0) == expected.map(\.0) && batched.map(\.1) == expected.map(\.1))
            #expect(bytes == text.utf8.count && stream.bytesRead == bytes && stream.lineNumber == expected.count)
        }
    }

    @Test func readErrorsAreThrownOrEndTheInput() throws {
        let directory = try TemporaryDirectory("lines")
        let thrown = try LineStream(path: directory.path)
        #expect(throws: LineStream.SystemError(code: EISDIR)) { try thrown.nextLine() }
        #expect(LineStream.SystemError(code: EISDIR).reason == "Is a directory")
        #expect(throws: LineStream.SystemError(code: ENOENT)) { try LineStream(path: directory("missing")) }
        #expect(try LineStream(path: directory.path, onReadError: .endInput).nextLine() == nil)
        #expect(throws: LineStream.SystemError(code: EISDIR)) {
            try LineStream(path: directory.path).nextBatch(minimumBytes: 1)
        }
    }

    @Test func readAllHandsOverWhatIsLeft() throws {
        let directory = try TemporaryDirectory("lines")
        let stream = try Self.file("first\r\nsecond\nthird", in: directory, chunkSize: 3)
        #expect(try stream.nextLine().map { String(decoding: $0, as: UTF8.self) } == "first")
        #expect(try stream.readAll() == Array("second\nthird".utf8))
        #expect(stream.bytesRead == 19)
        #expect(try stream.nextLine() == nil)
    }

    /// One document longer than the limit is refused whole (`nil`), never handed over in part.
    @Test func readAllRefusesMoreThanTheLimit() throws {
        let long = LineStream(bytes: Array(repeating: 0x20, count: 100), maximumLineLength: 10, carriageReturns: .keep)
        #expect(try long.readAll() == nil)
        let short = LineStream(bytes: Array("{}\n".utf8), maximumLineLength: 10, carriageReturns: .keep)
        #expect(try short.readAll() == Array("{}\n".utf8))
    }
}
