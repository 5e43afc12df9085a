import SuggestCore
import SuggestSQLiteStore

/// `suggest list`: the share sheet's row of suggestions now.
enum List: Command {
    static let name = "list"
    static let summary = "Show the top suggested conversations now (the share sheet's row)."
    static let usage = "[--limit N] [--json] [--explain] [--at DATE] [CONTEXT] [OPTIONS]"
    static let options: [OptionSpec] = StoreOptions.all + rankingOptions
    static let rankingOptions: [OptionSpec] = [
        .option("--limit", "N", "How many suggestions (default 8)."),
        .flag("--json", "Print the contract's JSON instead of a table."),
        .flag("--explain", "Show each part of every score: short-term, long-term, content, people, feedback."),
        .option(
            "--at", "DATE",
            "Rank as of this moment instead of now (RFC 3339 or Unix seconds); donations dated after it count as fresher than fresh."),
        .option(
            "--content-type", "UTI", "The type of what is being shared: conversations that got such content rise.",
            repeatable: true),
        .option("--person", "ID", "Someone in the shared content (custom id, contact id or handle).", repeatable: true),
        .option("--service", "NAME", "Only conversations of this service."),
        .option("--exclude", "ID", "A conversation not to suggest here.", repeatable: true),
    ]
    static let discussion = """
        Scores blend a short half-life (who you talk to this week) and a long one (who matters to you), with sent
        messages counting more than received ones; see docs/ranking.md. Blocked conversations, and conversations
        idle for longer than the store's idle limit, are never listed. The table shows each score relative to the
        first suggestion's (1 = as strong as the first); --json gives the raw scores.

        Examples:
          suggest list --limit 5 --explain
          suggest list --content-type public.jpeg --person u-17 --json
        """

    static func run(_ arguments: ParsedArguments, _ io: CommandIO) throws -> Int32 {
        try arguments.expectPositionals(atMost: 0)
        let account = try StoreOptions.account(arguments)
        let context = try rankingContext(arguments)
        let explain = arguments.flag("--explain")
        let store = try StoreOptions.open(arguments, io, creating: false)
        let suggestions = try store.suggestions(account: account, context: context, explain: explain)
        if arguments.flag("--json") {
            var writer = JSONWriter()
            writer.beginObject()
            writer.key("account")
            writer.string(account)
            writer.key("at")
            writer.string(context.at.rfc3339)
            writer.key("suggestions")
            writer.beginArray()
            for suggestion in suggestions { SuggestionOutput.write(suggestion, explain: explain, to: &writer) }
            writer.endArray()
            writer.endObject()
            try io.out(writer.text + "\n")
        } else {
            try io.out(SuggestionOutput.table(suggestions, explain: explain, at: context.at))
        }
        return ExitCode.success
    }

    /// The ranking context from the options `list` and `share` share.
    static func rankingContext(_ arguments: ParsedArguments, extraContentTypes: [String] = []) throws(CommandError)
        -> RankingContext
    {
        let limit = try arguments.positiveInteger("--limit") ?? 8
        guard limit <= 1000 else { throw CommandError.usage("--limit is at most 1000") }
        return RankingContext(
            at: try ValueParsing.at(arguments), limit: limit,
            contentTypes: arguments.values("--content-type") + extraContentTypes, people: arguments.values("--person"),
            serviceName: arguments.value("--service"), excluded: Set(arguments.values("--exclude")))
    }
}
