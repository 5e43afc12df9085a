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

    /// `Int.max`, the obvious "no limit", overflowed the stream's own arithmetic and ended the process; a limit
    /// of 0 or less made every line too long without a word. Both are public parameters.
    @Test func aLimitAtEitherExtremeIsTakenInRange() throws {
        let text = Array("{}\nab\n".utf8)
        #expect(try Self.lines(LineStream(bytes: text, maximumLineLength: .max)).map(\.text) == ["{}", "ab"])
        #expect(LineStream(bytes: text, maximumLineLength: -3).maximumLineLength == 1)
        let memory = MemoryJSONLines(bytes: text, maximumLineLength: .max)
        var lengths: [Int] = []
        while try memory.nextLine({ lengths.append($0.count) }) {}
        #expect(lengths == [2, 2] && !memory.lineWasTooLong)
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

    /// The error names the limit in a unit that writes it whole: a server's smaller limit is not "0 MiB".
    @Test(arguments: [(64 << 20, "64 MiB"), (512 << 10, "512 KiB"), (1000, "1000 bytes"), ((1 << 20) + 1, "1048577 bytes")])
    func aLineOverTheLimitIsRefusedNamingTheLimit(limit: Int, named: String) {
        #expect(MemoryJSONLines.tooLong(limit).message.contains("longer than \(named) ("))
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

    /// A line over the limit is the last one: handed over empty and marked, and nothing after it is read (issue 13,
    /// item 3: `import` read an endless line to its end).
    @Test func aLineOverTheLimitEndsTheStream() throws {
        let long = String(repeating: "x", count: 40)
        let exactly = String(repeating: "y", count: 10)
        let text = "short\n\(exactly)\r\n\(long)\r\nafter\n"
        let directory = try TemporaryDirectory("lines")
        for chunkSize in [1, 4, 64, 1 << 20] {
            let stream = try Self.file(text, in: directory, chunkSize: chunkSize, maximumLineLength: 10)
            let read = try Self.lines(stream)
            #expect(read.map(\.text) == ["short", exactly, ""], "chunk \(chunkSize)")
            #expect(read.map(\.cut) == [false, false, true])
            #expect(read.map(\.number) == [1, 2, 3])
            #expect(try stream.readAll() == nil)
        }
        // Bytes in memory, and a last line without a break, obey the same limit.
        let inMemory = try Self.lines(LineStream(bytes: Array(text.utf8), maximumLineLength: 10))
        #expect(inMemory.map(\.text) == ["short", exactly, ""])
        let lastLine = LineStream(bytes: Array("a\n\(long)".utf8), maximumLineLength: 10)
        #expect(try Self.lines(lastLine).map(\.cut) == [false, true])
        // A `\r` before the break is not part of the line: ten bytes and a `\r` fit a limit of ten.
        let withReturn = LineStream(bytes: Array("\(exactly)\r\n".utf8), maximumLineLength: 10)
        #expect(try Self.lines(withReturn).map(\.cut) == [false])
    }

    /// An endless line is refused after about the limit's worth of bytes: the stream never holds much more.
    @Test func anEndlessLineIsRefusedInBoundedMemory() throws {
        let zero = open("/dev/zero", O_RDONLY)
        try #require(zero >= 0)
        let stream = LineStream(
            descriptor: zero, closesDescriptor: true, chunkSize: 1 << 16, maximumLineLength: 1 << 20)
        let line = try #require(try stream.nextLine())
        #expect(line.isEmpty && stream.lineWasTooLong && stream.lineNumber == 1)
        #expect(try stream.nextLine() == nil)
        let again = open("/dev/zero", O_RDONLY)
        try #require(again >= 0)
        let batches = LineStream(
            descriptor: again, closesDescriptor: true, chunkSize: 1 << 16, maximumLineLength: 1 << 20)
        let batch = try #require(try batches.nextBatch(minimumBytes: 1 << 22))
        #expect(batch.bytes.isEmpty && batch.overlongLine == 1)
        #expect(try batches.nextBatch(minimumBytes: 1 << 22).map(\.bytes.count) == nil)
    }

    /// Batches stop before a line over the limit and name it; the lines before it are all there, in order.
    @Test func batchesEndBeforeALineOverTheLimit() throws {
        var random = SeededRandom(seed: 13)
        let directory = try TemporaryDirectory("lines")
        for round in 0..<40 {
            var lines: [String] = []
            for _ in 0..<Int.random(in: 1..<60, using: &random) {
                lines.append(String(repeating: "z", count: Int.random(in: 0...20, using: &random)))
            }
            let overlong = Int.random(in: 0..<lines.count, using: &random)
            lines[overlong] = String(repeating: "L", count: Int.random(in: 21...200, using: &random))
            let ending = round % 2 == 0 ? "\n" : ""
            let text = lines.joined(separator: round % 3 == 0 ? "\r\n" : "\n") + ending
            let chunkSize = [1, 3, 16, 1 << 20][round % 4]
            let stream = try Self.file(text, in: directory, chunkSize: chunkSize, maximumLineLength: 20)
            var batched: [String] = []
            var named: Int?
            while let batch = try stream.nextBatch(minimumBytes: [1, 30, 1 << 20][round % 3]) {
                #expect(named == nil, "no batch after the one naming the long line")
                batch.forEachLine { line, _ in batched.append(String(decoding: line, as: UTF8.self)) }
                named = batch.overlongLine
            }
            #expect(batched == Array(lines.prefix(overlong)), "round \(round)")
            #expect(named == overlong + 1, "round \(round)")
        }
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
