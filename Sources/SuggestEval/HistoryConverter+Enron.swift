import SuggestCore

extension HistoryConverter {
    /// Converts the Enron tables of Zhou et al. / Perry & Wolfe into donations, streamed to `emit` in the order of
    /// `messages.tsv`.
    ///
    /// - `messages.tsv`: `message_id \t filename \t unix_time \t subject \t sender_id` (the subject is read past
    ///   and never kept; a subject holding tabs is tolerated, the sender being the last field);
    /// - `recipients.tsv`: `message_id \t recipient_no \t receiver_id`;
    /// - `employees.txt` (upstream `employees.tsv`), optional: `id \t name \t …`, for display and group names.
    ///
    /// Recipients are read first (about 38,000 rows), then messages are streamed; each message's number is its
    /// `message_id`. A message without recipients gives no donation and is counted as skipped.
    /// - Throws: `ConversionError` for a malformed row; `FileError` when a file cannot be read; whatever `emit`
    ///   throws.
    /// - Complexity: O(m + r) for m messages and r recipient rows; memory O(r + e).
    @discardableResult
    public static func enron(
        messages: LineReader.Source, recipients: LineReader.Source, employees: LineReader.Source?,
        emit: (Interaction) throws -> Void
    ) throws -> Summary {
        let isTab: (UInt8) -> Bool = { $0 == 0x09 }
        var names: [Int: String] = [:]
        if let employees {
            try LineReader.forEachLine(in: employees, requiringBreakAtEnd: true) { line, number in
                let parts = fields(line, separator: isTab, collapse: false)
                if line.isEmpty { return }
                guard parts.count >= 2, let id = integer(parts[0]) else {
                    throw ConversionError(
                        source: employees.name, line: number, message: "expected \"id \\t name \\t …\"")
                }
                // Bytes that are not UTF-8 are read as Latin-1, as older exports wrote names ("J\u{FFFD}hn" otherwise);
                // a name a donation may not carry (a NUL) is left out, as an empty one is: what the converter
                // writes, `import` takes.
                let name =
                    String(validating: parts[1], as: UTF8.self)
                    ?? String(String.UnicodeScalarView(parts[1].map { Unicode.Scalar($0) }))
                if name.utf8.count <= 200, (try? Interaction.checkName(name, field: "displayName")) != nil {
                    names[id] = name
                }
            }
        }
        var receivers: [Int: [Int]] = [:]
        try LineReader.forEachLine(in: recipients, requiringBreakAtEnd: true) { line, number in
            if line.isEmpty { return }
            let parts = fields(line, separator: isTab, collapse: false)
            guard parts.count == 3 else {
                throw ConversionError(
                    source: recipients.name, line: number,
                    message: "expected 3 tab-separated fields \"message_id recipient_no receiver_id\", found \(parts.count)")
            }
            guard let message = integer(parts[0]), integer(parts[1]) != nil, let receiver = integer(parts[2]) else {
                throw ConversionError(
                    source: recipients.name, line: number, message: "message_id, recipient_no and receiver_id must be whole numbers")
            }
            receivers[message, default: []].append(receiver)
        }
        var summary = Summary()
        // A message listed twice would be written twice, every recipient's copy naming all the others: 200 lines of
        // one message with 1,024 recipients wrote 10 GB. Its donations would repeat identifiers anyway.
        var firstLines: [Int: Int] = [:]
        try LineReader.forEachLine(in: messages, requiringBreakAtEnd: true) { line, number in
            if line.isEmpty { return }
            let parts = fields(line, separator: isTab, collapse: false)
            guard parts.count >= 5 else {
                throw ConversionError(
                    source: messages.name, line: number,
                    message: "expected 5 tab-separated fields \"message_id filename unix_time subject sender_id\", found \(parts.count)")
            }
            guard let id = integer(parts[0]) else {
                throw ConversionError(
                    source: messages.name, line: number,
                    message: "message_id \(quoted(parts[0])) is not a whole number of at most 18 digits")
            }
            if let first = firstLines.updateValue(number, forKey: id) {
                throw ConversionError(
                    source: messages.name, line: number,
                    message: "message_id \(id) is listed again (first on line \(first)); list each message once")
            }
            guard let date = unixTime(parts[2]) else {
                throw ConversionError(
                    source: messages.name, line: number, message: "unix_time \(quoted(parts[2])) is not a Unix time")
            }
            guard let last = parts.last, let sender = integer(last) else {
                throw ConversionError(
                    source: messages.name, line: number,
                    message: "sender_id is not a whole number of at most 18 digits")
            }
            try emitMessage(
                source: "enron", number: id, sender: sender, recipients: receivers[id] ?? [], date: date,
                names: names, summary: &summary, emit: emit)
        }
        return summary
    }

    /// Converts the Enron tables in `directory`: `messages.tsv`, `recipients.tsv` and, when present,
    /// `employees.txt` or `employees.tsv`.
    @discardableResult
    public static func enron(directory: String, emit: (Interaction) throws -> Void) throws -> Summary {
        let base = directory.hasSuffix("/") ? directory : directory + "/"
        let employees = [base + "employees.txt", base + "employees.tsv"].first(where: FileSystem.isReadable)
        return try enron(
            messages: .file(base + "messages.tsv"), recipients: .file(base + "recipients.tsv"),
            employees: employees.map { .file($0) }, emit: emit)
    }
}
