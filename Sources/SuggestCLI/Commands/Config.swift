import SuggestCore
import SuggestSQLiteStore

/// `suggest config`: the store's retention settings.
enum Config: Command {
    static let name = "config"
    static let summary = "Show or change the store's retention: how long donations are kept, when idle ones stop."
    static let usage = "[--max-age-days N] [--idle-days N] [--json] [--store DIR|URL]"
    static let options: [OptionSpec] = [
        StoreOptions.store,
        .option("--max-age-days", "N", "Keep donations N days, in whole UTC days: from the start of the day N days ago; older ones are refused (0 = keep forever)."),
        .option("--idle-days", "N", "Do not suggest conversations whose latest donation is more than N days old (0 = no limit)."),
        .flag("--json", "Print the settings as JSON."),
    ]
    static let discussion = """
        Defaults: donations are kept 90 days; conversations idle for 30 days are not suggested. The settings
        belong to the store (every account in it).

        Retention goes by whole days (UTC), so that an account's learned weights are folded again at most once
        a day: the store keeps what is dated from the start of the day that holds now minus N days, a donation
        leaves it between N and N + 1 days after its date, and lowering --max-age-days deletes at once what is
        older. A donation dated before that start is refused when it arrives, by the same cutoff, so that the
        store's export imports whole into a store with the same setting. Idle conversations are hidden to the
        second.
        """

    static func run(_ arguments: ParsedArguments, _ io: CommandIO) throws -> Int32 {
        try arguments.expectPositionals(atMost: 0)
        let maxAge = try days(arguments, "--max-age-days")
        let idle = try days(arguments, "--idle-days")
        // Settings may come first (the demo keeps everything before it imports); showing them needs a store.
        let store = try StoreOptions.open(
            arguments, io, maintaining: nil, creating: maxAge != nil || idle != nil,
            reading: maxAge == nil && idle == nil)
        var retention = try store.retention()
        if maxAge != nil || idle != nil {
            if let maxAge { retention.maximumAgeDays = maxAge }
            if let idle { retention.idleDays = idle }
            let report = try store.setRetention(retention, now: .now())
            if report.donations > 0 {
                io.err("suggest config: deleted \(counted(report.donations, "donation")) older than \(plainDecimal(retention.maximumAgeDays)) days\n")
            }
        }
        if arguments.flag("--json") {
            var writer = JSONWriter()
            writer.beginObject()
            writer.key("store")
            writer.string(try StoreOptions.describedLocation(arguments, io))
            // In decimal, as the flags take the values they can set (0.00002, not 2e-05, which they refuse).
            writer.key("maxAgeDays")
            writer.written(Array(plainDecimal(retention.maximumAgeDays).utf8))
            writer.key("idleDays")
            writer.written(Array(plainDecimal(retention.idleDays).utf8))
            writer.endObject()
            try io.out(writer.text + "\n")
        } else {
            try io.out("store         \(TerminalText.escaped(try StoreOptions.describedLocation(arguments, io)))\n")
            try io.out("max-age-days  \(describe(retention.maximumAgeDays, off: "keep forever"))\n")
            try io.out("idle-days     \(describe(retention.idleDays, off: "no limit"))\n")
        }
        if let unnoted = StoreOptions.unnotedCleanup(of: store, after: "deleted the donations past the retention") {
            throw unnoted
        }
        return ExitCode.success
    }

    static func days(_ arguments: ParsedArguments, _ name: String) throws(CommandError) -> Double? {
        guard let text = arguments.value(name) else { return nil }
        let days = try ValueParsing.number(text, option: name, of: "days", in: 0...1_000_000)
        // 0 turns the limit off: a value that is not 0 must not read as 0 (`0.000…1` past a double's range), nor
        // as a limit no clock can keep.
        guard days == 0 ? !text.contains(where: { $0 >= "1" && $0 <= "9" }) : days >= minimumDays else {
            throw CommandError.usage(
                "\(name) takes 0 (no limit) or at least 0.00001 days (about a second); '\(text.prefix(40))' is less")
        }
        return days
    }

    /// About a second, in days: the least limit other than none.
    static let minimumDays = 0.00001

    static func describe(_ days: Double, off: String) -> String {
        days > 0 ? plainDecimal(days) : "0 (\(off))"
    }

    /// How long the store keeps donations, counted back from this machine's clock, which is named: what a donation
    /// found too old is told, so that a clock set ahead shows in the message rather than as a retention to change.
    static func keptSpan(days: Double, now: Timestamp) -> String {
        "\(plainDecimal(days)) days back from this machine's clock, \(now.rfc3339)"
    }

    /// A number of days as the command takes it: decimal digits, where Swift writes 0.000015 as 1.5e-05, which
    /// `config` would refuse. Valid JSON for any value a store may hold (a negative one written into its settings
    /// by hand, too).
    static func plainDecimal(_ value: Double) -> String {
        if value < 0 { return "-" + plainDecimal(-value) }
        let text = JSONWriter.format(value)
        guard let mark = text.firstIndex(where: { $0 == "e" || $0 == "E" }),
            let exponent = Int(text[text.index(after: mark)...]), exponent < 0
        else { return text }
        // One digit before the point in Swift's form: 1.5e-05 is 0.0000 then 15.
        return "0." + String(repeating: "0", count: -exponent - 1) + text[..<mark].filter { $0 != "." }
    }
}
