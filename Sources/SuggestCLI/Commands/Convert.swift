import SuggestCore
import SuggestEval

/// `suggest convert`: public message histories to donation JSON Lines.
enum Convert: Command {
    static let name = "convert"
    static let summary = "Turn a message history (CollegeMsg, Enron) into donation JSON Lines on standard output."
    static let usage = "collegemsg FILE | enron DIR"
    static let options: [OptionSpec] = []
    static let discussion = """
        Every message from S to recipients R at time t becomes an outgoing donation in account uS to the
        conversation R, and for each r in R an incoming donation in account ur to the conversation seen from r's
        side (the other members, S included). One recipient: conversation u<id>; several: g<ids joined by ->,
        with a group name (gh<hash> when that would pass 4096 bytes). A message to more than 1024 people is a
        broadcast, skipped and counted. Upstream duplicates are kept. Subjects and message text are never written.

          collegemsg FILE  SNAP's CollegeMsg.txt: "SRC DST UNIXTS" per line (- for standard input).
          enron DIR        messages.tsv, recipients.tsv and (optional) employees.txt of Zhou et al. / Perry & Wolfe.

        Example:
          suggest convert enron ../shared/data/enron-perry-wolfe > enron.jsonl && suggest eval enron.jsonl --policy all
        """

    static func run(_ arguments: ParsedArguments, _ io: CommandIO) throws -> Int32 {
        try arguments.expectPositionals(atMost: 2)
        guard arguments.positionals.count == 2 else {
            throw CommandError.usage("convert needs a format and a path: collegemsg FILE or enron DIR")
        }
        let format = arguments.positionals[0]
        let path = arguments.positionals[1]
        guard ["collegemsg", "enron"].contains(format) else {
            throw CommandError.usage("unknown format '\(format.prefix(40))'; use collegemsg or enron")
        }
        // An empty directory read as the root: `enron ""` looked for /recipients.tsv.
        guard !path.isEmpty else {
            throw CommandError.usage(
                format == "enron"
                    ? "the directory name is empty; give the Enron history's directory" : ByteSource.emptyName)
        }
        let emit: (Interaction) throws -> Void = { try io.out($0.jsonLine + "\n") }
        let summary: HistoryConverter.Summary
        do {
            switch format {
            case "collegemsg":
                // `-` is standard input, as for `import` and `eval` (it was looked for as a file named "-").
                let source: LineReader.Source = path == "-" ? .fileDescriptor(0, name: "standard input") : .file(path)
                summary = try HistoryConverter.collegeMsg(source, emit: emit)
            default: summary = try HistoryConverter.enron(directory: path, emit: emit)  // checked above
            }
        } catch let error as FileError {
            throw CommandError(error, readingStandardInput: format == "collegemsg" && path == "-")
        } catch let error as ConversionError {
            throw CommandError.usage(error.description)
        }
        // The donations are all out before the summary says so.
        try io.standardOutput.flush()
        var line = "suggest convert: \(counted(summary.messages, "message")), \(counted(summary.donations, "donation"))"
        if summary.skipped > 0 { line += ", \(counted(summary.skipped, "message")) skipped (no recipient)" }
        if summary.broadcasts > 0 {
            line += ", \(counted(summary.broadcasts, "message")) skipped (more than \(Interaction.maximumRecipients) recipients)"
        }
        io.err(line + "\n")
        return ExitCode.success
    }
}
