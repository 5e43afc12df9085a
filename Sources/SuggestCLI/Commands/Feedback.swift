import SuggestCore

/// `suggest feedback`: "Suggest Less" for a conversation, or forgetting it.
enum Feedback: Command {
    static let name = "feedback"
    static let summary = "Tell the ranker to suggest a conversation less (Apple's \"Suggest Less\"), or reset that."
    static let usage = "--less --conversation ID | --reset --conversation ID [OPTIONS]"
    static let options: [OptionSpec] =
        StoreOptions.all + [
            .flag("--less", "Suggest this conversation less: each time multiplies its score by the policy's factor."),
            .flag("--reset", "Forget the \"suggest less\" feedback of this conversation."),
            .option("--conversation", "ID", "The conversation."),
        ]

    static func run(_ arguments: ParsedArguments, _ io: CommandIO) throws -> Int32 {
        try arguments.expectPositionals(atMost: 0)
        guard arguments.flag("--less") != arguments.flag("--reset") else {
            throw CommandError.usage(
                arguments.flag("--less")
                    ? "--less and --reset undo each other; give one of them"
                    : "say --less or --reset; see 'suggest feedback --help'")
        }
        let account = try StoreOptions.account(arguments)
        let conversation = try Block.requiredConversation(arguments, command: name)
        let store = try StoreOptions.open(arguments, io, maintaining: account, creating: arguments.flag("--less"))
        if arguments.flag("--less") {
            let times = try store.suggestLess(conversation: conversation, account: account)
            let factor = store.policy.lessFactor
            try io.out(
                "\(TerminalText.escaped(conversation)) will be suggested less (asked \(times)×: score × "
                    + "\(multiplier(factor, times: times)))\n")
        } else {
            try store.resetFeedback(conversation: conversation, account: account)
            // Said as the state now, true whether or not there was feedback to forget (or such a conversation).
            try io.out("\(TerminalText.escaped(conversation)) has no \"suggest less\" feedback now\n")
            if let unnoted = StoreOptions.unnotedCleanup(of: store, after: "forgot the feedback") { throw unnoted }
        }
        return ExitCode.success
    }

    /// `factor` to the power `times`, as the message shows it. Ranking multiplies in the log domain, where the
    /// product never reaches 0; a `Double` product does, past about 500 times at ¼, and "× 0" beside a
    /// conversation still listed would be wrong: past the normal numbers it is shown as a power of ten.
    static func multiplier(_ factor: Double, times: Int) -> String {
        var product = 1.0
        for _ in 0..<times { product *= factor }
        guard product < Double.leastNormalMagnitude, factor > 0 else { return JSONWriter.format(product) }
        return SuggestionOutput.powerOfTen(ln: Double(times) * LogSpace.ln(factor))
    }
}
