import SuggestCore
import SuggestEval

/// `suggest eval`: replays a donation log in memory and reports how well a policy would have ranked.
enum Eval: Command {
    static let name = "eval"
    static let summary = "Replay a donation log in memory and report ranking quality (hit@k, MRR) for a policy."
    static let usage = "FILE [--policy NAME[,NAME...] | --policy all] [--k 1,3,8] [--json] [--html PAGE.html]"
    static let options: [OptionSpec] = [
        .option("--policy", "NAME", "default, recency, frequency, tdlib, firefox, zoxide, android; a comma list; or all (default: default)."),
        .option("--k", "LIST", "The cut-offs of hitAt, comma-separated (default: 1,3,8)."),
        .flag("--json", "Print the contract's JSON object (one line per policy)."),
        .option("--html", "PAGE", "Also write a self-contained HTML page with a hit@k curve (k = 1 to 20) per policy."),
    ]
    static let discussion = """
        FILE holds donation JSON Lines of any accounts (- for standard input); no store is touched. At each outgoing
        donation the account's conversations with an earlier donation are ranked using only earlier donations,
        then the donation is applied; an outgoing donation to a conversation never seen before counts as new and
        is not evaluated. Ties rank the most recent donation first, then the smaller conversationIdentifier.
        The policies and the results on real histories are in docs/ranking-quality.md.

        Examples:
          suggest convert collegemsg CollegeMsg.txt > college.jsonl
          suggest eval college.jsonl --policy all --html quality.html
        """

    static func run(_ arguments: ParsedArguments, _ io: CommandIO) throws -> Int32 {
        try arguments.expectPositionals(atMost: 1)
        guard let path = arguments.positionals.first else {
            throw CommandError.usage("eval needs a FILE of donation JSON Lines; see 'suggest eval --help'")
        }
        let policies = try policies(arguments.value("--policy") ?? "default")
        let cutoffs = try arguments.value("--k").map(cutoffs) ?? EvalResult.defaultCutoffs
        let source: LineReader.Source = path == "-" ? .fileDescriptor(0, name: "standard input") : .file(path)
        let results: [EvalResult]
        do {
            results = try Evaluator.evaluatePipelined(source, policies: policies, cutoffs: cutoffs)
        } catch let error as FileError {
            throw CommandError.usage(error.description)
        }
        if let page = arguments.value("--html") {
            let html = EvalReport.html(histories: [EvalReport.History(name: path, results: results)])
            try FileOutput.write(html, to: page)
            io.err("suggest eval: wrote \(page)\n")
        }
        if arguments.flag("--json") {
            for result in results { try io.out(result.jsonText + "\n") }
        } else {
            try io.out(EvalResult.table(results))
        }
        return ExitCode.success
    }

    /// `--k 1,3,8`: whole numbers in the grammar of every numeric option, spaces allowed after the commas.
    static func cutoffs(_ text: String) throws -> [Int] {
        for part in text.split(separator: ",", omittingEmptySubsequences: false) {
            _ = try ValueParsing.wholeNumber(
                String(part.trimmingPrefix(while: { $0 == " " })), option: "--k", in: 1...List.maximumLimit)
        }
        return try Evaluator.parseCutoffs(text)
    }

    static func policies(_ text: String) throws -> [RankingPolicy] {
        if text == "all" { return RankingPolicy.all }
        var policies: [RankingPolicy] = []
        for name in text.split(separator: ",", omittingEmptySubsequences: false) {
            do {
                policies.append(try RankingPolicy.named(String(name)))
            } catch {
                throw CommandError.usage(error.description)
            }
        }
        return policies
    }
}
