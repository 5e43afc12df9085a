import SuggestCore

extension HistoryConverter {
    /// Converts SNAP's CollegeMsg (`SRC DST UNIXTS`, one private message per line, separated by spaces or tabs)
    /// into donations, streamed to `emit` in file order. Blank lines and lines starting with `#` are skipped;
    /// each message's number is its line number.
    ///
    ///     try HistoryConverter.collegeMsg(.file("CollegeMsg.txt")) { try output.write($0) }
    /// - Throws: `ConversionError` for a line that is not three whole numbers (the third may be a decimal);
    ///   `FileError` when the file cannot be read; whatever `emit` throws.
    /// - Complexity: O(n) for n lines; memory O(1).
    @discardableResult
    public static func collegeMsg(_ source: LineReader.Source, emit: (Interaction) throws -> Void) throws -> Summary {
        var summary = Summary()
        try LineReader.forEachLine(in: source, requiringBreakAtEnd: true) { line, number in
            let parts = fields(line, separator: { $0 == 0x20 || $0 == 0x09 }, collapse: true)
            if parts.isEmpty || parts[0].first == UInt8(ascii: "#") { return }
            guard parts.count == 3 else {
                throw ConversionError(
                    source: source.name, line: number,
                    message: "expected 3 fields \"SRC DST UNIXTS\", found \(parts.count)")
            }
            guard let sender = integer(parts[0]) else {
                throw ConversionError(
                    source: source.name, line: number,
                    message: "SRC \(quoted(parts[0])) is not a whole number of at most 18 digits")
            }
            guard let recipient = integer(parts[1]) else {
                throw ConversionError(
                    source: source.name, line: number,
                    message: "DST \(quoted(parts[1])) is not a whole number of at most 18 digits")
            }
            guard let date = unixTime(parts[2]) else {
                throw ConversionError(
                    source: source.name, line: number, message: "UNIXTS \(quoted(parts[2])) is not a Unix time")
            }
            try emitMessage(
                source: "collegemsg", number: number, sender: sender, recipients: [recipient], date: date, names: [:],
                summary: &summary, emit: emit)
        }
        return summary
    }
}
