import SuggestCore
import SuggestShare

/// `suggest list`: the share sheet's row of suggestions now.
enum List: Command {
    static let name = "list"
    static let summary = "Show the top suggested conversations now (the share sheet's row)."
    static let usage = "[--limit N] [--json] [--explain] [--at DATE] [CONTEXT] [OPTIONS]"
    static let options: [OptionSpec] = StoreOptions.all + rankingOptions
    static let rankingOptions: [OptionSpec] = [
        .option("--limit", "N", "How many suggestions (default 8)."),
        .flag("--json", "Print the contract's JSON instead of a table."),
        .flag(
            "--explain",
            "Show each part of every score: \(channelNames), people, the content and \"suggest less\" factors (× F), and the account's learned weights."),
        .option(
            "--at", "DATE",
            "Rank as of this moment instead of now (RFC 3339 or Unix seconds); donations dated after it still count "
                + "(it is the whole history, seen from that moment)."),
        .option(
            "--content-type", "UTI", "The type of what is being shared: conversations that got such content rise.",
            repeatable: true),
        .option("--person", "ID", "Someone in the shared content (custom id, contact id or handle).", repeatable: true),
        .option("--service", "NAME", "Only conversations of this service."),
        .option("--exclude", "ID", "A conversation not to suggest here.", repeatable: true),
    ]
    /// The channels of the default ranking (`StoreRanking.default`), `reply, latest, memory, recency`: built
    /// every time a command that ranks starts, so appended in a loop (a key path and `joined(separator:)` cost a
    /// search of the run-time conformance tables).
    static var channelNames: String {
        var names = ""
        for channel in StoreRanking.default.base.channels { names += (names.isEmpty ? "" : ", ") + channel.name }
        return names
    }

    /// The help's account of the score, with the channels of the ranking in use (names and half-lives from
    /// `StoreRanking.default`, so that the help cannot fall behind a retuned policy).
    static var discussion: String {
        let channels = StoreRanking.default.base.channels
        var names: [String] = []
        for channel in channels {
            var name = "\(channel.name) (half-life \(duration(channel.halfLife))"
            if channel.aggregation == .latest { name += ", each conversation's latest message only" }
            if channel.outgoing == 0 && channel.incoming == 0 && channel.engagedBonus > 0 {
                name += ", shares started from a suggestion only"
            }
            names.append(name + ")")
        }
        let paragraph =
            "Scores mix \(channels.count) channels, each decaying with its own half-life: \(names.joined(separator: ", ")). "
            + "How much each counts, for people and for groups, is learned from the account's own sends (a new "
            + "account starts from an even mix). Sent and received messages weigh differently in each; content of "
            + "the shared kind and people in the shared content raise a conversation; see docs/ranking.md. Blocked "
            + "conversations, and conversations idle for longer than the store's idle limit, are never listed. "
            + "Scores are relative to the first suggestion's (1 = as strong as the first), in the table and in "
            + "--json; --explain adds every part and the learned weights, and in --json the raw log-score."
        return wrapped(paragraph) + """


            Examples:
              suggest list --limit 5 --explain
              suggest list --content-type public.jpeg --person u-17 --json
            """
    }

    /// `300` seconds as `5 min`, `86400` as `1 d`.
    static func duration(_ seconds: Double) -> String {
        for (unit, name) in [(86_400.0, "d"), (3_600, "h"), (60, "min")] where seconds >= unit {
            return JSONWriter.decimal(seconds / unit, significantDigits: 3) + " " + name
        }
        return JSONWriter.decimal(seconds, significantDigits: 3) + " s"
    }

    static func run(_ arguments: ParsedArguments, _ io: CommandIO) throws -> Int32 {
        try arguments.expectPositionals(atMost: 0)
        let account = try StoreOptions.account(arguments)
        let context = try rankingContext(arguments)
        let explain = arguments.flag("--explain")
        let store = try StoreOptions.open(arguments, io, maintaining: account, creating: false, reading: true)
        let list = try store.suggestions(account: account, context: context, explain: explain)
        if arguments.flag("--json") {
            try io.out(list.jsonText + "\n")
        } else {
            try io.out(SuggestionOutput.table(list.suggestions, at: context.at, learned: list.learnedWeights))
        }
        return ExitCode.success
    }

    /// The most suggestions one request may ask for.
    static let maximumLimit = RankingContext.Limits.suggestions

    /// The ranking context from the options `list` and `share` share.
    ///
    /// `--content-type` is checked as `share` checks an attachment's type (`Attachment.problem(withTypeIdentifier:)`):
    /// one rule for a UTI on every way in. An empty `--person`, `--service` or `--exclude` names nothing and is
    /// refused rather than silently matching nothing.
    static func rankingContext(_ arguments: ParsedArguments, extraContentTypes: [String] = []) throws(CommandError)
        -> RankingContext
    {
        let limit = try arguments.wholeNumber("--limit", in: 1...maximumLimit) ?? 8
        for type in arguments.values("--content-type") {
            if let problem = Attachment.problem(withTypeIdentifier: type) {
                throw CommandError.usage("--content-type: \(problem)")
            }
        }
        for option in ["--person", "--service", "--exclude"] where arguments.values(option).contains("") {
            throw CommandError.usage("\(option) must not be empty")
        }
        let context = RankingContext(
            at: try ValueParsing.at(arguments), limit: limit,
            contentTypes: arguments.values("--content-type") + extraContentTypes, people: arguments.values("--person"),
            serviceName: arguments.value("--service"), excluded: Set(arguments.values("--exclude")))
        do {
            // The options' own names: the store would check the same and name the context's fields.
            try context.validate(
                naming: [
                    "contentTypes": "--content-type", "people": "--person", "excluded": "--exclude",
                    "serviceName": "--service", "limit": "--limit", "at": "--at",
                ])
        } catch {
            throw CommandError.usage("\(error.field ?? "the query"): \(error.message)")
        }
        return context
    }
}
