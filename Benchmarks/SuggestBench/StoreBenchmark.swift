import SuggestCore
import SuggestSQLiteStore

/// `suggest-bench store`: builds a store from a synthetic history through `DonationStore.importDonations`, with
/// no JSON in between, then times opening it, `suggestions` and `donate` inside one process.
///
/// Beside the whole-process figures of `suggest import`, `list` and `donate`, it says which part is the store
/// and which is the process (start-up, JSON parsing, output).
enum StoreBenchmark {
    static let usage = """
        usage: suggest-bench store --store DIR [--runs R] [--no-import] [HISTORY OPTIONS]

        Unless --no-import: sets the store's retention to keep everything (max-age 0, idle 0, as
        'suggest config --max-age-days 0 --idle-days 0'), then imports the synthetic history (default 1M
        donations, 100k conversations) in one importDonations call, as 'suggest import' does (secondary
        indexes built at the end), and reports donations per second.
        Then, R times (default 21), in this process: DonationStore.open, suggestions(limit 8) at now, and
        donate of one outgoing donation to a popular conversation; medians (min–max).

        history options:
        \(HistoryOptions.help)
        """

    static func run(_ arguments: [String]) throws -> Int32 {
        let parsed = try BenchArguments(
            arguments, flags: ["--no-import"], options: HistoryOptions.names.union(["--store", "--runs"]))
        guard let directory = parsed.string("--store") else {
            throw BenchArguments.UsageError("--store DIR is required")
        }
        let parameters = try HistoryOptions.parameters(parsed)
        let runs = try parsed.integer("--runs", default: 21, range: 1...10_000)
        let history = SyntheticHistory(parameters)
        let location = StoreLocation(directory: directory)

        print("## store: \(directory)")
        print("")
        print("| measure | median (min–max) |")
        print("|---|---|")
        if !parsed.flag("--no-import") {
            let store = try SQLiteDonationStore.open(location)
            try store.setRetention(Retention(maximumAgeDays: 0, idleDays: 0))
            var stream = history.makeIterator()
            var line = 0
            Log.note("store: importing \(HistoryOptions.describe(parameters))")
            let timed = try MonotonicClock.time {
                // The expected count, as `suggest import` gives it: a large import builds the secondary indexes
                // once at its end instead of inserting into them row by row.
                try store.importDonations(
                    ImportOptions(expectedDonations: parameters.donations, progressInterval: 1_000_000),
                    progress: { Log.note("store: \(Format.count($0.lines)) donations") }, interruption: {},
                    next: {
                        guard let donation = stream.next() else { return nil }
                        line += 1
                        let bits = stream.withRandom { ($0.next(), $0.next()) }
                        return NumberedDonation(
                            line: line, donation: .success(history.interaction(donation, identifier: uuid(bits))))
                    })
            }
            let seconds = timed.nanoseconds / 1e9
            print(
                "| importDonations, \(Format.count(timed.result.recorded)) donations (one run) | "
                    + "\(Format.fixed(seconds, 2)) s, \(Format.count(Int(Double(timed.result.recorded) / seconds))) donations/s |"
            )
        }

        var opens: [Double] = []
        var lists: [Double] = []
        var donates: [Double] = []
        var checksum = Checksum()
        let popular = SyntheticHistory.conversationIdentifier(history.conversation(ofRank: 3))
        for run in 0..<runs {
            let opened = try MonotonicClock.time { try SQLiteDonationStore.open(location) }
            let store = opened.result
            opens.append(opened.nanoseconds)
            let listed = try MonotonicClock.time {
                try store.suggestions(account: Interaction.defaultAccount, context: RankingContext(at: .now()))
            }
            lists.append(listed.nanoseconds)
            for suggestion in listed.result.suggestions { checksum.add(suggestion.conversationIdentifier) }
            let interaction = Interaction(
                identifier: "bench-\(MonotonicClock.nanoseconds())-\(run)", date: .now(), direction: .outgoing,
                intent: SendMessageIntent(conversationIdentifier: popular))
            donates.append(try MonotonicClock.time { try store.record(interaction) }.nanoseconds)
        }
        print("| SQLiteDonationStore.open | \(Summary(opens).formatted(Format.duration)) |")
        print("| suggestions (top 8, now) | \(Summary(lists).formatted(Format.duration)) |")
        print("| donate (one outgoing donation, one transaction) | \(Summary(donates).formatted(Format.duration)) |")
        print("")
        print("\(runs) runs in this process; checksum \(checksum.hex)")
        return 0
    }

    /// 128 bits as an upper-case UUID string, like the generator's identifiers.
    static func uuid(_ bits: (UInt64, UInt64)) -> String {
        func hex(_ value: UInt64, _ width: Int) -> String {
            let text = String(
                value & (width == 16 ? UInt64.max : (1 << (4 * UInt64(width))) - 1), radix: 16, uppercase: true)
            return String(repeating: "0", count: width - text.count) + text
        }
        return hex(bits.0 >> 32, 8) + "-" + hex(bits.0 >> 16, 4) + "-" + hex(bits.0 & 0x0FFF | 0x4000, 4) + "-"
            + hex(bits.1 >> 48 & 0x3FFF | 0x8000, 4) + "-" + hex(bits.1, 12)
    }
}
