/// `suggest-bench generate`: a seeded synthetic history as donation JSON Lines on standard output.
enum GenerateCommand {
    static let usage = """
        usage: suggest-bench generate --donations N --conversations C --seed S [OPTIONS] > history.jsonl

        Streams a synthetic donation history in the contract's JSON Lines: Zipf-distributed popularity, a
        rotating set of busy conversations, bursts of messages, both directions, direct and group conversations
        (group names, recipients with e-mail or phone handles), some content types, UUID-form identifiers. Dates
        run in order over --span-days and end at --end. A summary goes to standard error.

        options:
        \(HistoryOptions.help)
          --output FILE        write to FILE instead of standard output
        """

    static func run(_ arguments: [String]) throws -> Int32 {
        let parsed = try BenchArguments(arguments, flags: [], options: HistoryOptions.names.union(["--output"]))
        guard parsed.positionals.isEmpty else { throw BenchArguments.UsageError("unexpected \(parsed.positionals[0])") }
        let parameters = try HistoryOptions.parameters(parsed)
        var descriptor: Int32 = 1
        if let path = parsed.string("--output") {
            descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
            guard descriptor >= 0 else {
                throw BenchArguments.UsageError("cannot create \(path): \(String(cString: strerror(errno)))")
            }
        }
        defer { if descriptor != 1 { close(descriptor) } }
        let history = SyntheticHistory(parameters)
        let out = OutputBuffer(descriptor: descriptor)
        var writer = DonationLineWriter(history: history)
        var stream = history.makeIterator()
        let start = MonotonicClock.nanoseconds()
        var lines = 0
        while let donation = stream.next() {
            let identifier = stream.withRandom { ($0.next(), $0.next()) }
            try out.reserve(DonationLineWriter.maximumLineBytes)
            writer.write(donation, identifier: identifier, to: out)
            lines += 1
        }
        try out.flush()
        let seconds = Double(MonotonicClock.nanoseconds() - start) / 1e9
        Log.note(
            "generated \(Format.count(lines)) lines, \(Format.megabytes(Double(out.written))) in \(Format.fixed(seconds, 2)) s "
                + "(\(Format.count(Int(Double(lines) / seconds))) lines/s): \(HistoryOptions.describe(parameters))")
        return 0
    }
}

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif
