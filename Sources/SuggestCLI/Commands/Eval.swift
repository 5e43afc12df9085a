import CSystem
import SuggestCore
import SuggestEval

/// `suggest eval`: replays a donation log in memory and reports how well a policy would have ranked.
enum Eval: Command {
    static let name = "eval"
    static let summary = "Replay a donation log in memory and report ranking quality (hit@k, MRR) for a policy."
    static let usage =
        "FILE [--policy NAME[,NAME...] | --policy all] [--k 1,3,8] [--depth N] [--against NAME] [--json] [--html PAGE.html]"
    static let options: [OptionSpec] = [
        .option(
            "--policy", "NAME",
            "default, fixed, recency, frequency, tdlib, firefox, zoxide, android; a comma list; or all (default: default)."
        ),
        .option("--k", "LIST", "The cut-offs of hitAt, comma-separated, at most 20 (default: 1,3,8)."),
        .option(
            "--depth", "N",
            "Ranks are exact down to N (default 100, or the largest --k when it is larger; at least 20 and the largest --k); a deeper one counts 0 in the MRR (mrrBound says how much that can hide)."
        ),
        .option(
            "--against", "NAME",
            "Compare every other policy with NAME, send by send (95% intervals); without it, the first policy is compared with each other one."
        ),
        .flag("--json", "Print the contract's JSON object (one line per policy), with byKind and comparisons."),
        .option(
            "--html", "PAGE", "Also write a self-contained HTML page: hit@k curves, the split by kind, wins and losses."
        ),
    ]
    static let discussion = """
        FILE holds donation JSON Lines of any accounts (- for standard input); no store is touched. At each outgoing
        donation the account's conversations with an earlier donation are ranked using only earlier donations,
        then the donation is applied; an outgoing donation to a conversation never seen before counts as new and
        is not evaluated. Ties rank the most recent donation first, then the smaller conversationIdentifier.
        default learns each account's channel weights from its own earlier sends only (rank first, then learn);
        fixed is the constant-weight policy before it. Every account's state stays in memory until the end, for
        each policy: about 1 KB an account and policy even for a small one, so a file of 500,000 accounts takes
        about 0.6 GB under the default and 4.5 GB under all.

        Beside the figures, eval splits them by kind of target (a reply to the account's latest incoming donation,
        a conversation idle for a week or more, a group, the other sends) and compares policies send by send: the
        difference of hit@k and MRR with a 95% interval, clustered by account when there are 20 accounts or more.
        The policies and the results on real histories are in docs/ranking-quality.md.

        Examples:
          suggest convert collegemsg CollegeMsg.txt > college.jsonl
          suggest eval college.jsonl --policy all --html quality.html
          suggest eval college.jsonl --policy default,recency --against recency --json
        """

    static func run(_ arguments: ParsedArguments, _ io: CommandIO) throws -> Int32 {
        try arguments.expectPositionals(atMost: 1)
        guard let path = arguments.positionals.first else {
            throw CommandError.usage("eval needs a FILE of donation JSON Lines; see 'suggest eval --help'")
        }
        guard !path.isEmpty else { throw CommandError.usage(ByteSource.emptyName) }
        var policies = try policies(arguments.value("--policy") ?? "default")
        let cutoffs = try arguments.value("--k").map(cutoffs) ?? EvalResult.defaultCutoffs
        let depth = try arguments.value("--depth").map { text throws(CommandError) in
            // The curve's 20 ranks and every cut-off must be exact: the least depth is known before the replay.
            try ValueParsing.wholeNumber(
                text, option: "--depth", in: max(EvalResult.curveDepth, cutoffs.max() ?? 1)...1_000_000)
        } ?? max(EvalResult.defaultDepth, cutoffs.max() ?? 1)
        let against = arguments.value("--against")
        if let against, !policies.contains(where: { $0.name == against }) {
            policies += try Self.policies(against)
        }
        guard let pairs = EvalSession.pairs(names: policies.map(\.name), baseline: against) else {
            throw CommandError.usage("--against names no policy of this run")
        }
        if let page = arguments.value("--html") {
            // Checked before the replay, which may take minutes.
            guard page != "-" else {
                throw CommandError.usage("--html takes a file path for the page (the table goes to standard output)")
            }
            try FileOutput.checkDistinct(output: page, option: "--html", from: path)
            try FileOutput.checkWritable(output: page, option: "--html")
        }
        let source: LineReader.Source = path == "-" ? .fileDescriptor(0, name: "standard input") : .file(path)
        try DispatchPool.start()
        let session: EvalSession
        do {
            session = try EvalSession(policies: policies, pairs: pairs, cutoffs: cutoffs, depth: depth)
            try session.consumeJSONLines(from: source)
        } catch let error as FileError {
            throw CommandError(error, readingStandardInput: path == "-")
        }
        let results = session.results
        // Figures of 0 said as what they are: no send could be ranked (an empty history, one of incoming
        // donations only, or sends only to conversations met for the first time), not a policy that ranked badly.
        if let first = results.first, first.evaluated == 0 {
            io.err(
                "suggest eval: nothing was evaluated: of \(first.donations) donations (\(first.outgoing) outgoing), none "
                    + "went to a conversation with an earlier donation; every figure is 0\n")
        }
        if let page = arguments.value("--html") {
            let history = EvalReport.History(name: path, results: results, comparisons: session.comparisons)
            try FileOutput.write(EvalReport.html(histories: [history]), to: page)
            io.err("suggest eval: wrote \(page)\n")
        }
        if arguments.flag("--json") {
            for result in results {
                try io.out(result.jsonText(comparisons: session.comparisons.filter { $0.policy == result.policy }) + "\n")
            }
        } else {
            try io.out(EvalResult.table(results))
            try io.out("\n" + EvalResult.kindTable(results))
            if !session.comparisons.isEmpty { try io.out("\n" + PairedComparison.table(session.comparisons)) }
            let deep = results.filter { $0.beyondDepth > 0 }
            if !deep.isEmpty {
                let parts = deep.map { result in
                    "\(result.policy) \(result.beyondDepth) sends, MRR at most +\(JSONWriter.decimal(result.mrrBound - result.mrr, significantDigits: 2))"
                }
                try io.out(
                    "\nranks deeper than \(depth) count 0 in the MRR (--depth sets it): "
                        + parts.joined(separator: "; ") + "\n")
            }
        }
        return ExitCode.success
    }

    /// `--k 1,3,8`: whole numbers in the grammar of every numeric option, spaces allowed after the commas.
    static func cutoffs(_ text: String) throws -> [Int] {
        for part in text.split(separator: ",", omittingEmptySubsequences: false) {
            _ = try ValueParsing.wholeNumber(
                String(part.trimmingPrefix(while: { $0 == " " })), option: "--k", in: 1...List.maximumLimit)
        }
        do {
            return try Evaluator.parseCutoffs(text)
        } catch {
            // Named by its option, as every other refusal of --k is.
            throw CommandError.usage("--k: \(error.message)")
        }
    }

    static func policies(_ text: String) throws -> [RankingPolicy] {
        if text == "all" { return RankingPolicy.all }
        var policies: [RankingPolicy] = []
        for name in text.split(separator: ",", omittingEmptySubsequences: false) {
            do {
                let policy = try RankingPolicy.named(String(name))
                if !policies.contains(where: { $0.name == policy.name }) { policies.append(policy) }
            } catch {
                throw CommandError.usage(error.description)
            }
        }
        return policies
    }
}

extension CommandError {
    /// An input that cannot be read. Bad input (64) when the input is at fault, wherever it comes from: its contents
    /// (a line without end: `convert collegemsg - < /dev/zero` exited 1 where the same file by name exited 64), a
    /// directory, or a path on the command line that names nothing readable. A failure (1) when the system is: a
    /// standard input closed or failing (`eval - <&-` exited 64 where `import - <&-` exited 1), or no descriptor
    /// left to open a file with (`ulimit -n`), as `import`, `donate --json` and `share --json` report it.
    init(_ error: FileError, readingStandardInput: Bool) {
        if error.errorNumber == 0 || error.isDirectory
            || (!readingStandardInput && ErrorNumber.blamesThePath(error.errorNumber))
        {
            self = .usage(error.description)
        } else {
            self = .failure(error.description)
        }
    }
}
