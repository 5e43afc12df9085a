import SuggestCore

/// The options every subcommand that generates a history shares.
enum HistoryOptions {
    static let names: Set<String> = [
        "--donations", "--conversations", "--seed", "--accounts", "--end", "--span-days", "--zipf", "--burst",
        "--hot-share", "--group-share", "--content-share", "--outgoing-share",
    ]

    static let help = """
          --donations N        donations to generate (k and M suffixes allowed: 10M)
          --conversations C    distinct conversations; each gets at least one donation (C <= N)
          --seed S             seed of the whole history (same seed, same bytes)
          --accounts A         spread conversations over A accounts (default 1: all in 'default')
          --end DATE           the last donation's day, RFC 3339 or Unix seconds (default 2026-11-30T00:00:00Z)
          --span-days D        how far back the history goes (default 365)
          --zipf S             Zipf exponent of conversation popularity (default 1.0)
          --burst B            mean messages per session (default 3)
          --hot-share F        share of sessions with the rotating 'hot' set of 16 conversations (default 0.2)
          --group-share F      share of group conversations (default 0.15)
          --content-share F    share of donations with a content type (default 0.08)
          --outgoing-share F   share of outgoing donations (default 0.5)
        """

    /// Reads the history options, with `defaults` where an option is absent.
    static func parameters(
        _ arguments: BenchArguments, defaults: SyntheticHistory.Parameters = .init()
    ) throws(BenchArguments.UsageError) -> SyntheticHistory.Parameters {
        var parameters = defaults
        parameters.donations = try arguments.integer("--donations", default: defaults.donations, range: 1...2_000_000_000)
        parameters.conversations = try arguments.integer(
            "--conversations", default: defaults.conversations, range: 1...100_000_000)
        parameters.seed = UInt64(try arguments.integer("--seed", default: Int(defaults.seed)))
        parameters.accounts = try arguments.integer("--accounts", default: defaults.accounts, range: 1...1_000_000)
        if let text = arguments.string("--end") {
            if let date = Timestamp(rfc3339: text) {
                parameters.end = date
            } else if let seconds = Double(text), seconds.isFinite {
                parameters.end = Timestamp(seconds: seconds)
            } else {
                throw .init("--end: '\(text)' is not a date; use RFC 3339 (2026-11-30T00:00:00Z) or Unix seconds")
            }
        }
        parameters.spanDays = try arguments.double("--span-days", default: defaults.spanDays, range: 0.001...36_500)
        parameters.zipfExponent = try arguments.double("--zipf", default: defaults.zipfExponent, range: 0...4)
        parameters.meanBurst = try arguments.double("--burst", default: defaults.meanBurst, range: 1...64)
        parameters.hotShare = try arguments.double("--hot-share", default: defaults.hotShare, range: 0...1)
        parameters.groupShare = try arguments.double("--group-share", default: defaults.groupShare, range: 0...1)
        parameters.contentShare = try arguments.double("--content-share", default: defaults.contentShare, range: 0...1)
        parameters.outgoingShare = try arguments.double("--outgoing-share", default: defaults.outgoingShare, range: 0...1)
        guard parameters.conversations <= parameters.donations else {
            throw .init("--conversations (\(parameters.conversations)) must not exceed --donations (\(parameters.donations))")
        }
        return parameters
    }

    static func describe(_ parameters: SyntheticHistory.Parameters) -> String {
        "\(Format.count(parameters.donations)) donations, \(Format.count(parameters.conversations)) conversations, "
            + "seed \(parameters.seed), zipf \(parameters.zipfExponent), \(Format.fixed(parameters.spanDays, 0)) days "
            + "to \(parameters.end.rfc3339)"
    }
}
