import SuggestCore

/// `suggest import`: records donations from JSON Lines, all or nothing.
enum Import: Command {
    static let name = "import"
    static let summary = "Record donations from a JSON Lines file (- for standard input), all or nothing."
    static let usage = "FILE [--skip-invalid] [OPTIONS]"
    static let options: [OptionSpec] =
        StoreOptions.all + [
            .flag("--skip-invalid", "Keep the valid lines and report the invalid ones instead of importing nothing."),
            .flag("--quiet", "No progress (shown only when standard error is a terminal)."),
        ]
    static let discussion = """
        Each line is one donation object (docs/donation-format.md). By default the first invalid line stops the
        import and nothing is recorded; the error names the line and the field. Donations whose identifier the
        account already holds are skipped, so importing the same file twice records it once when its lines have
        identifiers (a line without one gets a new identifier each time, and is recorded again).

        A line that names an account is recorded in that account; lines without one go to --account. With an
        explicit --account, a line naming another account is an error.

        Ctrl-C (or SIGTERM) stops an import and records nothing of it (exit 130, or 143); one that comes after the
        last donation was written finds the import recorded whole, and says so.

        In a store directory an import is one transaction: other processes' writes (an app's donate, a share's
        --send) wait until it commits, however long it goes on (a million donations take several seconds); a
        server's wait 30 s, then answer 503. From a pipe, the import holds the store while the pipe waits too: a
        writer waits 30 s at a time, and gives up at the end of one if the import has not gone on for 10 s
        ("stayed locked by an import ... is it waiting for its input?"); a producer of fewer than a few hundred
        lines a second looks the same. Save a slow producer's output to a file first.
        """

    static func run(_ arguments: ParsedArguments, _ io: CommandIO) throws -> Int32 {
        try arguments.expectPositionals(atMost: 1)
        guard let path = arguments.positionals.first else {
            // `import --account alice.jsonl` gave the file to --account: say so, not only that a FILE is missing.
            if let account = arguments.value("--account"), account == "-" || ByteSource.isReadableFile(account) {
                throw CommandError.usage(
                    "import needs a FILE: --account took '\(account.prefix(60))'; give the account before the file "
                        + "(suggest import --account NAME FILE)")
            }
            throw CommandError.usage("import needs a FILE (or - for standard input); see 'suggest import --help'")
        }
        try DispatchPool.start()
        let source = FirstLineAhead(path == "-" ? io.standardInput : try ByteSource(path: path))
        let account = try StoreOptions.account(arguments)
        let enforceAccount = arguments.value("--account") != nil
        let quiet = arguments.flag("--quiet")
        let options = ImportOptions(
            skipInvalid: arguments.flag("--skip-invalid"), defaultAccount: account,
            requiredAccount: enforceAccount ? account : nil)
        // Before the store is opened and the first line read: a signal there ends the import at once, saying so.
        ImportInterrupts.watch(standardErrorIsTerminal: io.standardErrorIsTerminal)
        defer { ImportInterrupts.stopWatching() }
        let store = try openStore(arguments, io, account: account, firstOf: source, options: options)
        var showedProgress = false
        let report: ImportReport
        do {
            defer { if showedProgress { io.endProgress() } }
            report = try store.importJSONLines(
                from: source, options: options,
                progress: { progress in
                    guard !quiet else { return }
                    var line = "suggest import: \(progress.lines) lines read"
                    if let total = progress.totalBytes, total > 0 { line += " (\(progress.bytesRead * 100 / total)%)" }
                    io.progress(line)
                    showedProgress = true
                }, interruption: ImportInterrupts.check)
        }
        // The import is committed; once it is flushed, it is durable, and a checkpoint that fails after that (a
        // disk that fills as the database file grows, an I/O error, a failed `stat`) leaves it so: "nothing was
        // changed", or a failure's exit, had a retry record the lines without an identifier twice. A flush that
        // fails is the command's failure, said as such: after a failed `fdatasync` Linux may drop the pages
        // unwritten. So is a store deleted from under the import: what it recorded went with the file.
        if report.recorded > 0 {
            do {
                try store.flushCommitted()
            } catch let error as StoreError {
                throw CommandError.failure(
                    "the donations are recorded, but flushing them to the disk failed (\(error.message)): they may be "
                        + "lost with the machine's power; look at 'suggest export' before importing them again")
            }
            do {
                try store.checkpoint()
            } catch let error as StoreError where !Self.isGone(error) {
                let why =
                    if error.isFileSizeLimit {
                        "it reached \(StoreError.fileSizeLimitWords)"
                    } else if error.kind == .diskFull {
                        "the disk is full"
                    } else {
                        error.message
                    }
                io.err(
                    "suggest import: the donations are recorded and on disk: do not import them again; the checkpoint "
                        + "after them failed (\(why))\n")
            }
        }
        for error in report.rejected.prefix(20) { io.err("suggest import: skipped \(error)\n") }
        if report.rejectedCount > 20 {
            io.err("suggest import: skipped \(counted(report.rejectedCount - 20, "more invalid line"))\n")
        }
        var summary = "imported \(counted(report.recorded, "donation"))"
        if report.duplicates > 0 { summary += ", \(report.duplicates) already recorded" }
        if report.expired > 0 {
            // A public history (CollegeMsg is from 2004) is all older than the default 90 days: say how to keep it.
            let kept = Config.keptSpan(days: try store.retention().maximumAgeDays, now: .now())
            summary +=
                ", \(report.expired) not kept: older than the store keeps donations (\(kept); "
                + "'suggest config --max-age-days 0' keeps everything)"
        }
        if report.rejectedCount > 0 { summary += ", \(counted(report.rejectedCount, "invalid line")) skipped" }
        if ImportInterrupts.received.load(ordering: .relaxed) != 0 {
            io.err("suggest import: interrupted after the last donation was written: the import is recorded whole\n")
        }
        try io.out(summary + "\n")
        return ExitCode.success
    }

    /// Opens the store, and creates a missing directory store only once the input's first donation is known to be
    /// one the import takes: a first import of the wrong file (a CSV, a history not converted yet) left an empty
    /// store of 8 MB behind its error, which no later command removes. A store that cannot be made (a parent
    /// missing) is said before the input is read, as before.
    private static func openStore(
        _ arguments: ParsedArguments, _ io: CommandIO, account: String, firstOf source: FirstLineAhead,
        options: ImportOptions
    ) throws -> any DonationStore {
        if StoreOptions.redisURL(arguments, environment: io.environment) == nil {
            let location = try StoreOptions.location(arguments, io)
            var missing = false
            do {
                try location.checkExists()
            } catch where error.kind == .noSuchStore {
                missing = true
            } catch {
                // Anything else about the path (a file in its place, a link to nowhere) the opening says, as before.
            }
            if missing {
                try location.checkCreatable()
                if let first = try source.readFirstDonation(defaultAccount: options.defaultAccount) {
                    var report = ImportReport()
                    _ = try options.admit(first.donation, line: first.line, oldestKept: nil, into: &report)
                }
            }
        }
        // Opened as every command that records opens it: its deletion reserve is made again if the disk has room.
        return try StoreOptions.open(arguments, io, maintaining: account, creating: true)
    }

    /// Whether `error` says that the store was deleted or moved from under this process: the only store that
    /// cannot say `noSuchStore` to a command that opened it.
    private static func isGone(_ error: StoreError) -> Bool { error.kind == .noSuchStore }
}
